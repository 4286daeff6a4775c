"""How a command ends: the exit codes a CI reads, and the one line said on stderr.

* 0 every invariant held (or the job succeeded), 1 a violation found or a replay reproduced:
  the command's own return value;
* 2 usage or input error (`shared.input_error`): its first line;
* 3 groupcheck's own error, any other exception, raised here or in a worker process (a
  pool re-raises it in this one): one line naming a file that holds the whole traceback
  (`save_traceback`, under the temporary folder);
* 130 interrupted (SIGINT): one line with the command, the time it ran and the files it
  had saved in ``--failures``;
* 141 standard output closed by its reader (``groupcheck jsonl … | head -1``): nothing said,
  128 + SIGPIPE as a shell reports a command a broken pipe ended, so that it is never read
  as a verdict (0) or a finding (1).

`ascii_fallback` makes a stream that cannot encode groupcheck's few non-ASCII signs
(✗ → … × –) write their ASCII spellings, and ``?`` for anything else, rather than fail.
"""

from __future__ import annotations

import codecs
import os
import select
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .shared import input_error

__all__ = ["BROKEN_PIPE", "INTERNAL_ERROR", "INTERRUPTED", "USAGE", "Run", "ascii_fallback",
           "guarded", "save_traceback"]

USAGE = 2
INTERNAL_ERROR = 3
INTERRUPTED = 130
BROKEN_PIPE = 141

#: groupcheck's non-ASCII signs and their ASCII spellings
ASCII = {"✗": "x", "✓": "v", "→": "->", "←": "<-", "…": "...", "×": "x", "–": "-", "—": "-",
         "≥": ">=", "≤": "<=", "≠": "!=", "·": ".", "‘": "'", "’": "'", "“": '"', "”": '"'}
ERRORS = "groupcheck-ascii"


def _ascii_spelling(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    bad = exc.object[exc.start:exc.end]
    return "".join(ASCII.get(c, "?") for c in bad), exc.end


codecs.register_error(ERRORS, _ascii_spelling)


def ascii_fallback(stream: TextIO) -> None:
    """Unencodable text on ``stream`` comes out in ASCII spellings, not as an error."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", None) == "strict":
        reconfigure(errors=ERRORS)


@dataclass
class Run:
    """One command as it runs: its name, when it started, where it saves counterexamples."""

    command: str
    failures: str | None = None
    started: float = field(default_factory=time.monotonic)
    wall: float = field(default_factory=time.time)

    @property
    def name(self) -> str:
        """``groupcheck COMMAND`` (``groupcheck`` before a command is known)."""
        return f"groupcheck {self.command}".rstrip()

    def saved(self) -> int:
        """Files written under ``--failures`` since the command started."""
        if not self.failures or not os.path.isdir(self.failures):
            return 0
        return sum(1 for p in Path(self.failures).rglob("*")
                   if p.is_file() and p.stat().st_mtime >= self.wall - 1)

    def interrupted_line(self) -> str:
        seconds = time.monotonic() - self.started
        line = f"interrupted: {self.name} after {seconds:.1f}s"
        if self.failures:
            count = self.saved()
            line += (f"; {count} file{'s' * (count != 1)} saved in {self.failures} by then"
                     if count else f"; nothing saved in {self.failures}")
        return line


def save_traceback(run: Run, exc: BaseException) -> str:
    """Write ``exc``'s whole traceback (with its causes: a worker's own traceback comes as
    the cause) to a new file; its path, or why it could not be written."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(run.wall))
    text = (f"{run.name}, {sys.argv!r}\n"
            + "".join(traceback.format_exception(exc)))
    try:
        fd, path = tempfile.mkstemp(prefix=f"groupcheck-error-{run.command or 'main'}-{stamp}-",
                                    suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as err:
        return f"not saved: {err.strerror or err}"
    return path


def _internal_error_line(run: Run, exc: BaseException) -> str:
    first = (str(exc).splitlines() or [""])[0]
    what = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return (f"{run.name}: groupcheck's own error, not a finding ({what}); "
            f"traceback: {save_traceback(run, exc)}")


def _stdout_gone() -> bool:
    """Whether standard output's reader has gone (a broken pipe from a socket is not it)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return True


def _stdout_closed() -> int:
    """The reader of standard output went away: point it at /dev/null so that the
    interpreter's last flush says nothing, and end quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    return BROKEN_PIPE


def guarded(run: Run, body: Callable[[], int]) -> int:
    """``body``'s exit code, or the code of what ended it, told in one line on stderr."""
    try:
        return body()
    except KeyboardInterrupt:
        _say(run.interrupted_line())
        return INTERRUPTED
    except BrokenPipeError as exc:
        if _stdout_gone():
            return _stdout_closed()
        _say(_internal_error_line(run, exc))
        return INTERNAL_ERROR
    except Exception as exc:
        if input_error(exc):
            _say(str(exc).splitlines()[0] if str(exc) else "usage error")
            return USAGE
        _say(_internal_error_line(run, exc))
        return INTERNAL_ERROR


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
