"""The invariants reference's generated tables (``docs/reference/invariants.md``), from the
one table of invariants in ``properties/invariants.py``: the summary (id, name, when it
holds) and which engine judges what.

    python -m groupcheck.cli.invariants_reference            # the tables, on stdout
    python -m groupcheck.cli.invariants_reference --write    # into the page
    python -m groupcheck.cli.invariants_reference --check    # exit 1 naming what differs

The page is written by hand around the tables, each between a ``<!-- BEGIN generated: NAME
-->`` and an ``<!-- END generated: NAME -->`` line. `stale` and `miscounts` are what the
documentation build's hook (``docs/hooks``) asks: the build fails while a committed table
differs from `tables`, or a page names a count or range of the invariants that is not
theirs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..properties.invariants import INVARIANTS, JUDGES, NUMBERED

__all__ = ["PAGE", "miscounts", "page", "stale", "tables"]

#: the page, from the repository's root
PAGE = Path("docs/reference/invariants.md")
_REGION = re.compile(r"(<!-- BEGIN generated: (\w+) -->\n)(.*?)(<!-- END generated: \2 -->)",
                     re.S)
_WORDS = ("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
          "seventeen", "eighteen", "nineteen", "twenty")
_COUNT = re.compile(rf"\b({'|'.join(_WORDS)})\s+(invariants|in all)\b", re.I)
_RANGE = re.compile(r"\bI1\s*(?:–|-|to)\s*I(\d+)\b")


def _summary() -> list[str]:
    rows = [f"| [{i.id}](#{i.anchor}) | {i.name} | {i.holds_when} |" for i in INVARIANTS]
    return ["| id | name | holds when |", "| --- | --- | --- |", *rows]


def _engines() -> list[str]:
    head = "| | " + " | ".join(j.heading for j in JUDGES) + " |"
    rule = "| --- |" + " --- |" * len(JUDGES)
    rows = [f"| {i.row} |" + "|".join(" ✓ " if j.key in i.judges else " " for j in JUDGES)
            + "|" for i in INVARIANTS]
    return [head, rule, *rows]


def tables() -> dict[str, str]:
    """Each generated table by its region's name, as its region holds it (between blank
    lines, so that Markdown reads a table and not HTML)."""
    return {"summary": "\n" + "\n".join(_summary()) + "\n\n",
            "engines": "\n" + "\n".join(_engines()) + "\n\n"}


def page(committed: str) -> str:
    """``committed`` with every generated region holding its table."""
    want = tables()
    return _REGION.sub(lambda m: m.group(1) + want.get(m.group(2), m.group(3)) + m.group(4),
                       committed)


def stale(committed: str) -> list[str]:
    """The tables missing from ``committed`` or differing from `tables`; [] when none."""
    have = {m.group(2): m.group(3) for m in _REGION.finditer(committed)}
    return [name for name, text in tables().items() if have.get(name) != text]


def miscounts(text: str) -> list[str]:
    """The places in ``text`` that name a count of the invariants ("twelve invariants",
    "… in all") that is not theirs, or a range from I1 that ends past the last id or one
    short of it ("I1–I12" with thirteen; a range of fewer, "I1–I6", names a part)."""
    last = len(NUMBERED)
    right = _WORDS[last - 10] if 0 <= last - 10 < len(_WORDS) else ""
    wrong = [m.group(0) for m in _COUNT.finditer(text) if m.group(1).lower() != right]
    wrong += [m.group(0) for m in _RANGE.finditer(text)
              if last - 1 <= int(m.group(1)) != last]
    return wrong


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(prog="python -m groupcheck.cli.invariants_reference")
    args.add_argument("--write", action="store_true", help=f"write the tables into {PAGE}")
    args.add_argument("--check", action="store_true",
                      help=f"exit 1 when a table of {PAGE} differs")
    chosen = args.parse_args(argv)
    if chosen.check:
        differ = stale(PAGE.read_text(encoding="utf-8"))
        print("\n".join([f"differs: {d}" for d in differ] or [f"{PAGE} is up to date"]))
        return 1 if differ else 0
    if chosen.write:
        PAGE.write_text(page(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.stdout.write("".join(tables().values()).strip() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
