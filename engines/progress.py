"""Progress of long work, as the engines report it and the command line shows it.

An engine that runs for more than a moment calls its caller's `ProgressFn` after each unit
of work (a scope proved, an example played, a story shrunk, a cell of the matrix) with a
`Tick`: which engine, on what, how many runs so far, the time spent against its budget and
the findings so far. The engine never prints; what a tick looks like (a live line on a
terminal, a plain line every few seconds elsewhere, nothing with ``--quiet``) is the
caller's choice. `silent` is the default: a library user who passes nothing sees nothing.
`Meter` is an engine's own view of its ticks: what it runs on, when it started, its budget.
`PROCESS_FLOOR` is the least share of a budget in which an engine starts a process target.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = ["PROCESS_FLOOR", "Clock", "Meter", "ProgressFn", "Tick", "silent"]

Clock = Callable[[], float]
#: seconds a process target (its requests have a time limit: jsonl:, java:) may need to
#: start; an engine with less does not start it, and says so
PROCESS_FLOOR = 1.0
A = TypeVar("A")
R = TypeVar("R")


@dataclass(frozen=True)
class Tick:
    """One report of progress.

    ``engine`` names the engine (``prove``, ``fuzz``, ``scenarios``, ``scale``, ``audit``,
    ``matrix``, ``upgrade``, ``shrink`` …); ``subject`` what it runs on (a target string,
    an assignor, a matrix cell); ``runs`` the units of work done so far; ``elapsed`` the
    seconds spent so far and ``budget`` the seconds it may spend (None: no budget);
    ``findings`` the violations found so far; ``note`` a short word on the current unit
    (a scope, a seed), or empty."""

    engine: str
    subject: str
    runs: int
    elapsed: float
    budget: float | None
    findings: int = 0
    note: str = ""


ProgressFn = Callable[[Tick], None]


def silent(tick: Tick) -> None:
    """The default `ProgressFn`: shows nothing."""
    del tick


@dataclass
class Meter:
    """One engine's run as its ticks tell it: ``tick(runs, findings, note)`` after each unit
    of work reports the seconds since the meter was made (on ``clock``)."""

    progress: ProgressFn
    engine: str
    subject: str
    budget: float | None = None
    clock: Clock = time.perf_counter
    started: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self.started = self.clock()

    def tick(self, runs: int, findings: int = 0, note: str = "") -> None:
        self.progress(Tick(self.engine, self.subject, runs, self.clock() - self.started,
                           self.budget, findings, note))

    def counting(self, call: Callable[[A], R]) -> Callable[[A], R]:
        """``call``, with a tick after each call (the calls are the runs)."""
        calls = 0

        def counted(arg: A) -> R:
            nonlocal calls
            try:
                return call(arg)
            finally:
                calls += 1
                self.tick(calls)

        return counted
