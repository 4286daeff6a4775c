"""The commands a documentation page shows, read from its fenced blocks, and their output
compared with what the page shows under them.

A block whose lines start with ``$ `` holds commands: each ``$ `` line is one, the lines up
to the next its output as shown. A block after a sentence ending in "Save this as
`NAME`:" is a file the reader writes; a ``diff`` block is an edit the reader makes to the
last Python file written. `steps` gives them in the page's order.

`differences` compares an output with the shown one line by line, after trailing blanks:
a line ``…`` stands for any number of lines, times (``(19.3s)``, ``in 7.5s``, ``0.006`` ms)
match any time, a ten-digit hex digest in a file name matches any digest. How far each engine
of ``check`` got depends on the machine's speed and load, so an engine's summary line under
the table (``  prove     49,320 runs in 7.5s; 1 of 5 scopes: …``) matches with any counts up
to its first ``;``, and the figures indented under it are left out on both sides; so is a
shrink's note that its budget ran out (``; budget spent``), which only a busy machine adds.
The same holds for I13: the ``scale`` engine judges cost from the largest group it timed
within its share, so its I13 cell matches ``holds`` and ``not judged`` alike, and its
``I13 [scale]: …`` line among the invariants not judged is left out on both sides.
`globbed` turns such a digest in a command into a glob.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Command", "Diff", "File", "applied", "differences", "globbed", "steps"]

GAP = "…"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
_SAVE = re.compile(r"Save this as `([^`]+)`")
_ENGINE = re.compile(r"^  (codec|prove|vectors|scenarios|fuzz|scale|faults) +\d")
_TIME = re.compile(r"\\\(\d[\d,]*(?:\\\.\d+)?s\\\)|\d[\d,]*(?:\\\.\d+)?(?:\\ )?s\b")
_MS = re.compile(r'(?<="ms":\\ )\d+(?:\\\.\d+)?')
_DIGEST = re.compile(r"(?<=-)[0-9a-f]{10}(?=\\\.(?:json|html|txt))")
_NUMBER = re.compile(r"\d[\d,]*(?:\\\.\d+)?(?:e[+-]\d+)?")
_FIGURES = " " * 12  # how the figures under an engine's line are indented
_BUSY = re.compile(r"; budget spent(?=\))| \(budget spent\)$")
_COST_ROW = re.compile(r"^I13 ")
_COST_NOT_JUDGED = "  I13 [scale]: "
_FILE_DIGEST = re.compile(r"-[0-9a-f]{10}(?=\.(?:json|html|txt)\b)")


@dataclass(frozen=True)
class Command:
    """One ``$`` line (without the ``$``) and the output the page shows under it."""

    line: str
    shown: tuple[str, ...]
    lineno: int


@dataclass(frozen=True)
class File:
    """A file the page asks the reader to save."""

    name: str
    text: str


@dataclass(frozen=True)
class Diff:
    """An edit the page asks the reader to make, as a unified diff's body."""

    text: str


def steps(page: str) -> list[Command | File | Diff]:
    """The page's commands, files and edits, in its order."""
    out: list[Command | File | Diff] = []
    for block in _BLOCK.finditer(page):
        kind, body = block.group(1), block.group(2)
        before = page[:block.start()].rstrip("\n").rsplit("\n\n", 1)[-1]
        saved = _SAVE.search(before)
        if kind == "diff":
            out.append(Diff(body))
        elif saved:
            out.append(File(saved.group(1), body))
        elif body.startswith("$ "):
            out += _commands(body, page.count("\n", 0, block.start()) + 2)
    return out


def _commands(body: str, first: int) -> list[Command]:
    out: list[Command] = []
    for i, line in enumerate(body.rstrip("\n").split("\n")):
        if line.startswith("$ "):
            out.append(Command(line[2:], (), first + i))
        else:
            last = out[-1]
            out[-1] = Command(last.line, (*last.shown, line), last.lineno)
    return out


def applied(source: str, diff: str) -> str:
    """``source`` with ``diff``'s hunk applied (context and removed lines found, replaced by
    context and added lines); ValueError when the source does not hold them."""
    lines = diff.rstrip("\n").split("\n")
    old = "\n".join(line[1:] for line in lines if not line.startswith("+")) + "\n"
    new = "\n".join(line[1:] for line in lines if not line.startswith("-")) + "\n"
    if source.count(old) != 1:
        raise ValueError(f"the diff's lines are not in the file once:\n{old}")
    return source.replace(old, new)


def globbed(line: str) -> str:
    """``line`` with each ten-digit digest in a saved file's name made a glob (``-??????????``),
    for bash to expand to the file the run wrote."""
    return _FILE_DIGEST.sub("-" + "?" * 10, line)


def _pattern(line: str) -> re.Pattern[str]:
    text = re.escape(line.rstrip())
    if _ENGINE.match(line):
        text = _NUMBER.sub(r"[\\d,.]+(?:e[+-]\\d+)?", text.split(";", 1)[0])
        return re.compile(text + r"(?:;.*)?\Z")
    text = _TIME.sub(lambda m: r"\(\d[\d,]*(?:\.\d+)?s\)" if m.group(0).startswith("\\(")
                     else r"\d[\d,]*(?:\.\d+)? ?s\b", text)
    text = _MS.sub(r"\\d+(?:\\.\\d+)?", text)
    text = _DIGEST.sub(r"[0-9a-f]{10}", text)
    return re.compile(text + r"\Z")


def _without_figures(lines: list[str]) -> list[str]:
    """``lines`` less what depends on the machine's speed: the figures indented under an
    engine's summary line, a shrink's note that its budget ran out, I13 judged or not."""
    out: list[str] = []
    under_engine = False
    for line in lines:
        if (under_engine and line.startswith(_FIGURES)) or line.startswith(_COST_NOT_JUDGED):
            continue
        under_engine = bool(_ENGINE.match(line))
        if _COST_ROW.match(line):
            line = line.replace("not judged", "holds     ").rstrip()
        out.append(_BUSY.sub("", line))
    return out


def _chunks(shown: tuple[str, ...]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for line in _without_figures(list(shown)):
        if line.strip() == GAP:
            out.append([])
        else:
            out[-1].append(line)
    return out


def differences(shown: tuple[str, ...], output: str) -> list[str]:
    """What in ``output`` does not match the ``shown`` lines ([] when it all does)."""
    got = _without_figures([line.rstrip() for line in output.rstrip("\n").split("\n")])
    chunks = _chunks(shown)
    at = 0
    for n, chunk in enumerate(chunks):
        patterns = [_pattern(line) for line in chunk]
        anchored_start, anchored_end = n == 0, n == len(chunks) - 1
        starts = [at] if anchored_start else range(at, len(got) - len(patterns) + 1)
        if anchored_end:
            starts = [s for s in starts if s == len(got) - len(patterns)]
        found = next((s for s in starts if s >= 0 and all(
            p.match(got[s + i]) for i, p in enumerate(patterns))), None)
        if found is None:
            return _first_miss(chunk, patterns, got, at)
        at = found + len(patterns)
    return []


def _first_miss(chunk: list[str], patterns: list[re.Pattern[str]], got: list[str],
                at: int) -> list[str]:
    """The first shown line of ``chunk`` that no output line from ``at`` on matches."""
    for line, pattern in zip(chunk, patterns, strict=True):
        hit = next((i for i in range(at, len(got)) if pattern.match(got[i])), None)
        if hit is None:
            return [f"shown, not in the output: {line!r}", "output:", *got]
        at = hit + 1
    return ["the shown lines are there, but not in the page's order or place", "output:",
            *got]
