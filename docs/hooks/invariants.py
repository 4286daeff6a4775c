"""The documentation build's check of the invariants: the generated tables of
``docs/reference/invariants.md`` must be what ``properties/invariants.py`` gives
(`groupcheck.cli.invariants_reference`), and no page (nor the README) may name a count or
range of the invariants that is not theirs. Either failing stops ``mkdocs build`` with one
message saying what to fix; the page built holds the generated tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.exceptions import Abort

from groupcheck.cli import invariants_reference as reference

PAGE = "reference/invariants.md"


def on_pre_build(config: Any) -> None:
    docs = Path(config["docs_dir"])
    stale = reference.stale((docs / PAGE).read_text(encoding="utf-8"))
    if stale:
        raise Abort(f"docs/{PAGE}: the {', '.join(stale)} table(s) differ from "
                    "properties/invariants.py; regenerate them: "
                    "python -m groupcheck.cli.invariants_reference --write")
    pages = [*sorted(docs.rglob("*.md")), Path(config["config_file_path"]).parent / "README.md"]
    wrong = [f"{page.name}: {claim!r}" for page in pages if page.is_file()
             for claim in reference.miscounts(page.read_text(encoding="utf-8"))]
    if wrong:
        raise Abort("pages name a count or range of the invariants that is not "
                    f"properties/invariants.py's: {'; '.join(wrong)}")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return reference.page(markdown) if page.file.src_uri == PAGE else markdown
