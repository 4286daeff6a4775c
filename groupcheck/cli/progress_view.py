"""How a long command shows its engines' progress, and how much of its budget is left.

The engines report `engines.progress.Tick`s; `shown` turns them into what the user sees on
stderr, never on stdout (the result, a ``--json`` result too, stays alone there):

* on a terminal, a live display (rich's progress bar, drawn on stderr and removed before
  the result is printed): the engine, its subject, the runs, the time spent against the
  budget, the findings so far;
* off a terminal, one plain line with the same facts every `PLAIN_EVERY` seconds;
* with ``--quiet``, nothing.

A budget counts from the moment the process started (`CommandClock`; from the call, where
`main` is called from code), so the imports and the target's resolution are inside it as a
user sees it; the time a command spends starting a process target — a JVM, member drivers,
a JSON-lines program (`CommandClock.starting`) — is not, and a small part of the budget is
kept for printing the result, closing the targets and the interpreter's exit
(`exit_reserve`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ..engines.progress import ProgressFn, Tick, silent

__all__ = ["PLAIN_EVERY", "STARTS", "CommandClock", "LiveProgress", "PlainProgress",
           "exit_reserve", "plain_line", "process_started", "shown"]

PLAIN_EVERY = 5.0  # seconds between two plain lines off a terminal
#: target strings whose resolution starts a process (a JVM, member drivers, a JSON-lines
#: program): outside the budget
STARTS = ("java:", "java@", "wire:", "librdkafka:", "jsonl:")


def exit_reserve(budget: float) -> float:
    """Seconds of ``budget`` kept for what follows the engines: printing the result,
    closing the targets, the interpreter's exit (a tenth of a second and 5 % of the budget,
    at most a second)."""
    return min(0.1 + 0.05 * budget, 1.0)


_LOADED = time.perf_counter()


def process_started() -> float:
    """When this process started, on ``time.perf_counter``'s scale: from ``/proc`` where
    there is one, else when this module was loaded."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            after_name = fh.read().rsplit(")", 1)[1].split()
        started = int(after_name[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return _LOADED
    return time.perf_counter() - max(age, 0.0)


class CommandClock:
    """A command's budget as a user sees it: from ``started`` (`main` gives the process's
    start; None: now), less the time spent starting a JVM or member drivers (`starting`)."""

    def __init__(self, started: float | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.started = clock() if started is None else started
        self.paused = 0.0

    @contextmanager
    def starting(self, *targets: str) -> Iterator[None]:
        """Time spent inside resolving ``targets`` does not count against the budget where
        one of them starts a process: a JVM, member drivers or a JSON-lines program
        (`STARTS`); it counts for the others."""
        began = self.clock()
        try:
            yield
        finally:
            if any(t.startswith(STARTS) for t in targets):
                self.paused += self.clock() - began

    def left(self, budget: float) -> float:
        """Seconds of ``budget`` the engines may still spend (never below zero)."""
        spent = self.clock() - self.started - self.paused
        return max(budget - spent - exit_reserve(budget), 0.0)


def plain_line(tick: Tick) -> str:
    """One tick as a line: engine, subject, runs, time against budget, findings."""
    spent = (f"{tick.elapsed:.1f}s of {tick.budget:.1f}s" if tick.budget is not None
             else f"{tick.elapsed:.1f}s")
    note = f" ({tick.note})" if tick.note else ""
    return (f"groupcheck: {tick.engine} {tick.subject}: {tick.runs:,} runs, {spent}, "
            f"{tick.findings} finding(s){note}")


class PlainProgress:
    """Off a terminal: the latest tick as a line on ``stream`` at most once every
    ``every`` seconds (on ``clock``), the first one ``every`` seconds after the start."""

    def __init__(self, stream: TextIO, every: float = PLAIN_EVERY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.every, self.clock = stream, every, clock
        self.last = clock()

    def __call__(self, tick: Tick) -> None:
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            print(plain_line(tick), file=self.stream, flush=True)

    def close(self) -> None:
        """Nothing to take down."""


class LiveProgress:
    """On a terminal: rich's live progress on ``stream``, one row for the engine at work
    (a bar of its time against its budget where it has one); transient, so it is gone
    when the command prints its result."""

    def __init__(self, stream: TextIO) -> None:
        from rich import progress as bars  # rich loads only where a display is drawn
        from rich.console import Console

        self.display = bars.Progress(bars.SpinnerColumn(), bars.TextColumn("{task.description}"),
                                     bars.BarColumn(), bars.TextColumn("{task.fields[facts]}"),
                                     bars.TimeElapsedColumn(), console=Console(file=stream),
                                     transient=True)
        self.tasks: dict[tuple[str, str], Any] = {}
        self.started = False

    def __call__(self, tick: Tick) -> None:
        if not self.started:
            self.display.start()
            self.started = True
        key = (tick.engine, tick.subject)
        if key not in self.tasks:
            for old in self.tasks.values():  # one row: the engine at work
                self.display.update(old, visible=False)
            self.tasks[key] = self.display.add_task(f"{tick.engine} {tick.subject}",
                                                    total=tick.budget, facts="")
        spent = (f"{tick.elapsed:.1f}/{tick.budget:.1f}s" if tick.budget is not None
                 else f"{tick.elapsed:.1f}s")
        facts = f"{tick.runs:,} runs  {spent}  {tick.findings} finding(s)"
        self.display.update(self.tasks[key], facts=facts + (f"  {tick.note}" if tick.note
                                                            else ""),
                            completed=min(tick.elapsed, tick.budget or 0.0))

    def close(self) -> None:
        if self.started:
            self.display.stop()


@contextmanager
def shown(quiet: bool, stream: TextIO | None = None) -> Iterator[ProgressFn]:
    """The `ProgressFn` a command hands its engines (see the module doc), taken down when
    the block ends, before the command prints its result."""
    out = sys.stderr if stream is None else stream
    if quiet:
        yield silent
        return
    view = LiveProgress(out) if out.isatty() else PlainProgress(out)
    try:
        yield view
    finally:
        view.close()
