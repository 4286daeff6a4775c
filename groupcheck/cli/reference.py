"""The commands reference (``docs/reference/commands.md``), generated from the parsers: per
command its usage, every option with its help text and default, and its exit codes.

    python -m groupcheck.cli.reference            # the page, on stdout
    python -m groupcheck.cli.reference --write    # into docs/reference/commands.md
    python -m groupcheck.cli.reference --check    # exit 1 naming what differs

`stale` and `missing_help` are what the documentation build's hook (``docs/hooks``) asks:
the build fails while the committed page differs from `page`, or an option has no help.
The explanations and examples are written by hand in ``commands-guide.md``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from . import build_parser
from .shared import COMMON_EXITS

__all__ = ["GUIDE", "PAGE", "command_parsers", "missing_help", "page", "sections", "stale"]

#: the page, from the repository's root
PAGE = Path("docs/reference/commands.md")
#: the hand-written page each command's section links to
GUIDE = "commands-guide.md"
WIDTH = 92

INTRO = f"""\
# Commands

<!-- Generated from the command line's parsers by `python -m groupcheck.cli.reference
--write`: do not edit by hand (the documentation build fails when it differs). -->

Every command of the `groupcheck` command line: its usage, every option with its help text
and default, and its exit codes, as `groupcheck COMMAND --help` gives them. What each command
prints and writes, with examples: [Commands in depth]({GUIDE}). `pip install .` installs the
`groupcheck` script; `python3 -m groupcheck` runs the same command line from a checkout.
`groupcheck --version` prints groupcheck's version, Python's and those of the optional pieces
found (Hypothesis, z3-solver, PySpark, kio, the peer clients, KafkaJS, Java).
"""

CONVENTIONS = """\
## Conventions

- `--target T` names a target wherever one is named ([Targets](targets.md)); each command's
  help lists the kinds it accepts.
- `--out DIR` is always a folder; each command says which files it writes into it.
- `--jobs N` is the number of processes, where a command runs several.
- `--json` prints the result as one JSON object on stdout: `{"command", "exit", "lines",
  "result"}`, `lines` being the text the command prints without `--json` and `result` what it
  found (each command's `--json` row gives its shape); `assign`, `check` and `prove` keep
  their own older shapes.
- An option given where it does not apply (for example `diff --seed` without `--stories`,
  `check --parity` without `$GROUPCHECK_VECTORS`) is exit 2, never ignored.
- Old spellings still work and print one line on stderr saying the new one: `--workers`
  (`--jobs`), targets given positionally to `matrix`, `diff` and `upgrade` (`--target`), an
  `--out` file for `prove --matrix` and `shrink` (`--out DIR`), `replay --html OUT`
  (`--out DIR`).
- Where standard output cannot encode a sign (`PYTHONIOENCODING=ascii`, a C locale) it is
  written in ASCII (`✗` as `x`, `→` as `->`, `…` as `...`).
"""


def command_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, in ``groupcheck --help``'s order."""
    root = build_parser()
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options and arguments a user sees (not --help, not the hidden old spellings)."""
    return [a for a in parser._actions
            if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS]


def missing_help() -> list[str]:
    """``groupcheck COMMAND OPTION`` for every option shown without help text."""
    return [f"{parser.prog} {a.option_strings[0] if a.option_strings else a.dest}"
            for parser in command_parsers().values() for a in _options(parser)
            if not (a.help or "").strip()]


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell (no HTML tags, no column breaks)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("*", "\\*").replace("\n", " "))


def _name(action: argparse.Action) -> str:
    if not action.option_strings:
        return str(action.metavar or action.dest)
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    value = ("{" + ",".join(map(str, action.choices)) + "}" if action.choices
             else str(action.metavar or action.dest.upper()))
    return ", ".join(f"{o} {value}" for o in action.option_strings)


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    default = action.default
    if default is None or default is False or default in ([], "", argparse.SUPPRESS) \
            or action.nargs == 0:
        return "—"
    return f"`{default}`"


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups,
                        prefix="")
    return formatter.format_help().strip()


def _section(name: str, parser: argparse.ArgumentParser) -> list[str]:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    lines = [f"## {name}", "", "```", _usage(parser), "```", "",
             f"{parser.description}. More: [{name} in depth]({GUIDE}#{name}).", "",
             "| option | default | meaning |", "| --- | --- | --- |"]
    for action in _options(parser):
        meaning = formatter._expand_help(action) if action.help else ""
        lines.append(f"| `{_name(action)}` | {_default(action)} | {_cell(meaning)} |")
    lines += ["", "| exit | when |", "| --- | --- |"]
    lines += [f"| {code} | {_cell(text)} |" for code, text in parser.get_default("exit_codes")
              if (code, text) not in COMMON_EXITS]
    shared = ", ".join(str(code) for code, _ in COMMON_EXITS)
    return [*lines, f"| {shared} | as every command ([exit codes](#exit-codes)) |", ""]


def sections() -> dict[str, str]:
    """Each command's section of the page, by command."""
    return {name: "\n".join(_section(name, parser))
            for name, parser in command_parsers().items()}


def page() -> str:
    """The whole page."""
    parsers = command_parsers()
    table = ["| command | what it does |", "| --- | --- |",
             *(f"| [`{n}`](#{n}) | {_cell(p.description or '')} |" for n, p in parsers.items())]
    exits = ["### Exit codes", "", "| code | meaning |", "| --- | --- |",
             "| 0 | every invariant held, or the job succeeded |",
             "| 1 | a violation was found, or a replay reproduced |",
             *(f"| {code} | {_cell(text)} |" for code, text in COMMON_EXITS), "",
             "Each command's section gives its own reading of 0 and 1."]
    body = [INTRO, "\n".join(table), "", CONVENTIONS, "\n".join(exits), "",
            *sections().values()]
    return "\n".join(body).rstrip() + "\n"


def _committed_sections(text: str) -> Iterator[tuple[str, str]]:
    for found in re.finditer(r"^## (\S+)\n.*?(?=^## |\Z)", text, re.M | re.S):
        yield found.group(1), found.group(0).rstrip("\n")


def stale(committed: str) -> list[str]:
    """What differs between the ``committed`` page and `page`: the commands whose sections
    differ (or are missing or extra), or ``"the page"`` for the rest of it; [] when none."""
    if committed == page():
        return []
    have = dict(_committed_sections(committed))
    want = {name: text.rstrip("\n") for name, text in sections().items()}
    differ = [n for n in want if have.get(n) != want[n]]
    differ += [n for n in have if n not in want and n != "Conventions"]
    return differ or ["the page"]


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(prog="python -m groupcheck.cli.reference")
    args.add_argument("--write", action="store_true", help=f"write {PAGE}")
    args.add_argument("--check", action="store_true",
                      help=f"exit 1 when {PAGE} differs or an option lacks help")
    chosen = args.parse_args(argv)
    if chosen.check:
        problems = [f"no help: {m}" for m in missing_help()]
        problems += [f"differs: {s}" for s in stale(PAGE.read_text(encoding="utf-8"))]
        print("\n".join(problems or [f"{PAGE} is up to date"]))
        return 1 if problems else 0
    if chosen.write:
        PAGE.write_text(page(), encoding="utf-8")
    else:
        sys.stdout.write(page())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
