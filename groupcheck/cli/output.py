"""What a command prints: text lines as they come, or with ``--json`` one JSON object at the
end (`Output`).

The object every command's ``--json`` prints (`JsonEnvelope`), unless the command documents an
older shape of its own (``assign``: the assign answer; ``check``: its report; ``prove``: one
report per assignor, a line each):

* ``command``: the command's name; ``exit``: its exit code (0 held, 1 a violation or a
  reproduction);
* ``lines``: what the command prints without ``--json``, a string a line;
* ``result``: what the command found, in the shape its reference section gives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TypedDict

__all__ = ["JsonEnvelope", "Output", "written"]


class JsonEnvelope(TypedDict):
    """The JSON object of a command's ``--json`` (see the module docstring)."""

    command: str
    exit: int
    lines: list[str]
    result: Mapping[str, object]


class Output:
    """A command's standard output: each line printed as it comes (text), or kept for the
    JSON object `finish` prints (``as_json``)."""

    def __init__(self, command: str, as_json: bool) -> None:
        self.command = command
        self.as_json = as_json
        self.lines: list[str] = []

    def line(self, text: str = "") -> None:
        """One or more lines of the text result."""
        if self.as_json:
            self.lines.extend(text.splitlines() or [""])
        else:
            print(text, flush=True)

    def block(self, lines: Sequence[str]) -> None:
        """Several lines of the text result."""
        self.line("\n".join(lines))

    def finish(self, code: int, result: Mapping[str, object] | None = None) -> int:
        """The exit code ``code``; with ``--json``, the one JSON object printed first."""
        if self.as_json:
            envelope = JsonEnvelope(command=self.command, exit=code, lines=self.lines,
                                result=dict(result or {}))
            print(json.dumps(envelope, ensure_ascii=False, default=str))
        return code


def written(out: Output, text: str, files: Sequence[object], failed: bool,
            result: Mapping[str, object]) -> int:
    """A run that wrote a table and its files (``matrix``, ``upgrade --matrix``): the table,
    the files written, and exit 1 when it ``failed``."""
    out.line(text)
    out.line(f"wrote {' and '.join(str(f) for f in files)}")
    return out.finish(1 if failed else 0, result)
