"""What lives here: the battery's minimum depth, and the verdict line naming the invariants a
run left unjudged at it.

Each engine has a minimum depth it reaches before the budget goes anywhere else: the
prover's `prove.DEPTH_SCOPE` (three members claiming one partition at three generations),
the scale engine's judgement of I13 (a fit over three timed shapes, or a call past the
bound), the state machine's `MIN_EXAMPLES`. An engine short of it marks the invariants it
would have judged (``EngineResult.shallow``) and the seconds more it needs, estimated from
the rates it measured (``EngineResult.needs``). `Shortfall` gathers them over a run:
``check`` prints its line under the verdicts, and ``--strict`` fails on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .results import INVARIANT_ROWS, BatteryResult

__all__ = ["MIN_EXAMPLES", "Shortfall", "shortfall"]

#: the state machine's minimum: examples played on every assignor before the budget counts
MIN_EXAMPLES = 20
#: a suggested budget is rounded up to a multiple of this many seconds
ROUND_TO = 30.0


@dataclass(frozen=True)
class Shortfall:
    """The invariants left unjudged at the minimum depth (in the table's order), the run's
    budget, and the budget estimated to reach them (inf when no rate was measured)."""

    invariants: tuple[str, ...]
    budget: float
    reaching: float

    def line(self) -> str:
        """``3 invariants not judged at --budget 120 (I5, I6, I13); --budget 600 reaches
        them``."""
        n = len(self.invariants)
        head = (f"{n} invariant{'s' if n != 1 else ''} not judged at --budget "
                f"{self.budget:g} ({', '.join(self.invariants)})")
        if math.isinf(self.reaching):
            return f"{head}; a larger --budget reaches {'them' if n != 1 else 'it'}"
        return (f"{head}; --budget {self.reaching:g} reaches {'them' if n != 1 else 'it'} "
                "(estimated from the rates measured)")


def shortfall(results: Sequence[BatteryResult], budget: float) -> Shortfall | None:
    """What the run's engines left unjudged at their minimum depth, over every assignor;
    None when every engine reached it."""
    short = {i for r in results for e in r.engines for i in e.shallow}
    if not short:
        return None
    needs = sum(e.needs for r in results for e in r.engines if e.shallow)
    reaching = budget + needs
    if not math.isinf(reaching):
        reaching = ROUND_TO * math.ceil(reaching / ROUND_TO)
    order = {inv: i for i, inv in enumerate(INVARIANT_ROWS)}
    return Shortfall(tuple(sorted(short, key=lambda i: order.get(i, 99))), budget, reaching)
