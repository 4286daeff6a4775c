"""What lives here: the battery's depth before its breadth — the searching engines' reserve
(`search_reserve`), the prover's part for its depth scope, the scale engine run again where
it left I13 unjudged, and which provers are worth widening.

Depth first: each assignor's prover is given an equal part of the fixed engines' time for
the depth scope alone (`depth_budget`), after which the scale engine judges I13 on every
assignor; a scale engine that could not is run again with what it estimated it needs, out
of what is left of the fixed engines' time (`deepen`). Breadth next (`slices`): the rest of
each portfolio competes for slices of what is left with the searching engines; an assignor
whose prover found a violation, fell short of its depth or ran nothing is not widened, and
the ones that are start in `breadth_order`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from .results import EngineResult

__all__ = ["FUZZ_FLOOR", "MIN_SEARCH_SHARE", "breadth_order", "deepen", "depth_budget",
           "search_reserve"]

MIN_SEARCH_SHARE = 0.25  # of the budget, kept for the searching engines whatever came first
#: seconds the state machine needs at least: Hypothesis loads, one example plays
FUZZ_FLOOR = 1.0


def search_reserve(budget: float, targets: int, *, fuzz: bool) -> float:
    """Seconds the fixed engines leave to the searching ones: a quarter of the budget and,
    when the state machine runs, twice its floor on every assignor (up to half the budget),
    so a short budget over several assignors still plays the state machine on each."""
    floor = 2 * FUZZ_FLOOR * targets if fuzz else 0.0
    return max(budget * MIN_SEARCH_SHARE, min(budget / 2, floor))


def depth_budget(left: float, reserved: float, targets_left: int) -> float:
    """One assignor's seconds for the prover's depth scope: an equal part, over the
    assignors still to run, of the ``left`` seconds less what the engines after the prover
    keep (``reserved``)."""
    return max(left - reserved, 0.0) / max(targets_left, 1)


def deepen(found: Sequence[EngineResult | None], deadline: float,
           again: Callable[[int, float], EngineResult]) -> list[EngineResult | None]:
    """The results short of their minimum depth (``shallow``, nothing found) run again by
    ``again(i, seconds)``, each given its own time plus what it ``needs``, at most an equal
    part of what is left to ``deadline`` (``time.perf_counter``); a new result replaces the
    old one where it left fewer invariants unjudged."""
    out = list(found)
    short = [(i, e) for i, e in enumerate(found) if e is not None and e.shallow
             and not e.failed and not e.skipped]
    for n, (i, old) in enumerate(short):
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        new = again(i, min(left / (len(short) - n), old.seconds + old.needs))
        if not new.skipped and (new.failed or len(new.shallow) < len(old.shallow)):
            out[i] = new
    return out


def breadth_order(provers: Sequence[EngineResult | None]) -> list[int]:
    """The indexes of the provers worth widening (they reached their depth, found nothing
    and ran), the most configurations per second first, then the most gap classes, then
    by index."""
    able = [(i, p) for i, p in enumerate(provers) if p is not None and not p.skipped
            and not p.failed and not p.shallow and p.runs]
    return [i for i, p in sorted(able, key=lambda x: (
        -(x[1].runs / x[1].seconds if x[1].seconds else 0.0),
        -len(x[1].figures.get("gap", {})), x[0]))]
