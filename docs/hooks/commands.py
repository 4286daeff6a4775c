"""The documentation build's check of the commands reference: ``docs/reference/commands.md``
must be what the command line's parsers give (`groupcheck.cli.reference`), and every option
must have help text. Either failing stops ``mkdocs build`` with one message naming what to
regenerate; the page built is the one the parsers give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.exceptions import Abort

from groupcheck.cli import reference

PAGE = "reference/commands.md"


def on_pre_build(config: Any) -> None:
    missing = reference.missing_help()
    if missing:
        raise Abort(f"options without help text: {', '.join(missing)}; give each a help= "
                    "and regenerate the commands reference")
    committed = (Path(config["docs_dir"]) / PAGE).read_text(encoding="utf-8")
    stale = reference.stale(committed)
    if stale:
        raise Abort(f"docs/{PAGE} differs from the command line ({', '.join(stale)}); "
                    "regenerate it: python -m groupcheck.cli.reference --write")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return reference.page() if page.file.src_uri == PAGE else markdown
