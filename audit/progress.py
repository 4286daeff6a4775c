"""The audit's progress bar."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """A progress bar on stderr (one line per update when stderr is not a terminal)."""

    def __init__(self, total: int, already: int) -> None:
        self.total = total
        self.done = already
        self.started = time.perf_counter()
        self.fresh = 0
        self.tty = sys.stderr.isatty()

    def update(self, scenarios: int) -> None:
        self.done += scenarios
        self.fresh += scenarios
        elapsed = time.perf_counter() - self.started
        rate = self.fresh / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 30
        filled = int(width * self.done / self.total) if self.total else width
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done:>9,}/{self.total:,} "
                f"scenarios  {rate:7.0f}/s  {elapsed:6.1f}s  eta {left:5.0f}s")
        print(("\r" + line) if self.tty else line, end="" if self.tty else "\n",
              file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr)
