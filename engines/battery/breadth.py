"""What lives here: how the battery spends the prover's time once every assignor has its
minimum depth (`prove.DEPTH_SCOPE`).

Depth first: each assignor's prover is given an equal part of the fixed engines' time for
the depth scope alone (`depth_budget`), after which the scale engine judges I13 on every
assignor; a scale engine that could not is run again with what it estimated it needs, out
of what is left of the fixed engines' time (`deepen`). Breadth next: what is left of the
prover's share (``PROVE_SHARE`` of the budget, less what the depth scopes took) goes to the
rest of each assignor's portfolio, the assignor whose prover ran the most configurations
per second first, the ones that turned up more shapes (gap classes) ahead on a tie; each is
offered an equal part of what is left of the pool, and what a cheap one does not use passes
to the next (`widen_provers`). An assignor whose prover found a violation, fell short of its
depth or ran nothing is not widened. The order depends only on the rates measured, so a run
with the same seed and budget takes the same path as far as the machine's speed allows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from .prove import extend_portfolio
from .results import EngineResult

__all__ = ["breadth_order", "deepen", "depth_budget", "widen_provers"]


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


def widen_provers(provers: Sequence[EngineResult | None], pool: float, deadline: float,
                  more: Callable[[int, float], EngineResult], portfolio: int) -> None:
    """``pool`` seconds, to ``deadline`` (``time.perf_counter``) at most, over the provers in
    `breadth_order`: ``more(i, seconds)`` runs the rest of assignor ``i``'s portfolio, and
    its result extends ``provers[i]`` (depth counted over ``portfolio`` scopes)."""
    order = breadth_order(provers)
    for n, i in enumerate(order):
        left = min(pool, deadline - time.perf_counter())
        if left <= 0:
            return
        began = time.perf_counter()
        part = more(i, left / (len(order) - n))
        pool -= time.perf_counter() - began
        first = provers[i]
        if first is not None and not part.skipped:
            extend_portfolio(first, part, portfolio)
