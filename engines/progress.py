"""Progress of long work, as the engines report it and the command line shows it.

An engine that runs for more than a moment calls its caller's `ProgressFn` after each unit
of work (a scope proved, an example played, a story shrunk, a cell of the matrix) with a
`Tick`: which engine, on what, how many runs so far, the time spent against its budget and
the findings so far. The engine never prints; what a tick looks like (a live line on a
terminal, a plain line every few seconds elsewhere, nothing with ``--quiet``) is the
caller's choice. `silent` is the default: a library user who passes nothing sees nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ProgressFn", "Tick", "silent"]


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
