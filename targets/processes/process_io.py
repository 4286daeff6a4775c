"""One started JSON-lines process and its pipes: `ProcessIO`, and the ways a request to a
process fails (`TargetFailure`, `TargetTimeout`, `TargetAnswerError`).

A `ProcessIO` writes request lines from a thread of its own (so a caller never blocks on a
process that stopped reading) and reads what the process answers on another, a chunk at a
time, into a queue the caller takes whole lines from with a time limit; a third thread
keeps the last lines of stderr for error messages. It knows nothing of requests:
`jsonl_process.JsonlProcess` matches answers to requests, times them and restarts the
process.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

__all__ = ["EOF", "ProcessIO", "TargetAnswerError", "TargetFailure", "TargetTimeout"]

#: what `ProcessIO.next_line` gives once the process closed its stdout
EOF = b""
#: lines the writer joins into one write, at most
_WRITE_BATCH = 256


class TargetFailure(RuntimeError):
    """The process crashed, hung past its time limit, or answered with something that is not
    one JSON object per line."""


class TargetTimeout(TargetFailure, TimeoutError):
    """The process did not answer within its time limit (it was killed); ``request`` is
    the request it did not answer, so that an engine can save it."""

    request: Mapping[str, object] | None = None


class TargetAnswerError(RuntimeError):
    """The process answered ``{"error": ...}``."""


def _read_chunks(fd: int, out: queue.SimpleQueue[bytes]) -> None:
    """Put what the process writes, as it comes (one queue item per read, not per line),
    then `EOF`."""
    try:
        while chunk := os.read(fd, 1 << 16):
            out.put(chunk)
    except OSError:
        pass
    finally:
        out.put(EOF)


def _write_lines(stream: IO[bytes], lines: queue.SimpleQueue[bytes | None]) -> None:
    """Write what is queued, joining what has piled up into one write, until ``None``."""
    while True:
        line = lines.get()
        if line is None:
            break
        batch = [line]
        while len(batch) < _WRITE_BATCH:
            try:
                more = lines.get_nowait()
            except queue.Empty:
                break
            if more is None:
                lines.put(None)
                break
            batch.append(more)
        try:
            stream.write(b"".join(batch))
            stream.flush()
        except (OSError, ValueError):  # the process is gone: its reader sees the end
            break
    try:
        stream.close()
    except (OSError, ValueError):
        pass


class ProcessIO:
    """A started process: ``write`` queues a line for it, ``next_line`` waits for one of
    its lines (raises ``queue.Empty`` when none came in time, gives `EOF` at its end)."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        assert (self.proc.stdin is not None and self.proc.stdout is not None
                and self.proc.stderr is not None)
        self.stderr_tail: list[str] = []
        self._chunks: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._buffer = b""  # what was read and not yet taken, from ``_start`` on
        self._start = 0
        self._eof = False
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        for target, args in ((_read_chunks, (self.proc.stdout.fileno(), self._chunks)),
                             (_write_lines, (self.proc.stdin, self._outbox)),
                             (self._drain, (self.proc.stderr,))):
            threading.Thread(target=target, args=args, daemon=True).start()

    def _drain(self, stream: IO[bytes]) -> None:
        tail = self.stderr_tail
        try:
            for line in stream:
                tail.append(line.decode("utf-8", "replace").rstrip())
                del tail[:-20]
        except (OSError, ValueError):
            pass
        finally:
            stream.close()

    def write(self, line: bytes) -> None:
        self._outbox.put(line)

    def next_line(self, timeout: float) -> bytes:
        """The next line (with its newline; at the end, what is left without one, then
        `EOF`); raises ``queue.Empty`` when none is whole within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            buffer, start = self._buffer, self._start
            end = buffer.find(b"\n", start) + 1
            if end or (self._eof and start < len(buffer)):
                end = end or len(buffer)
                self._start = end
                return buffer[start:end]
            if self._eof:
                return EOF
            chunk = self._chunks.get(timeout=max(deadline - time.monotonic(), 0.0))
            self._eof = chunk == EOF
            self._buffer, self._start = buffer[start:] + chunk, 0

    def exit_code(self, wait: float = 2.0) -> int | None:
        """The process's exit code, waiting up to ``wait`` seconds for it to end."""
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Kill the process; its threads close the pipes as they end."""
        self._outbox.put(None)
        try:
            self.proc.kill()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self.proc.stdout is not None:
            self.proc.stdout.close()
