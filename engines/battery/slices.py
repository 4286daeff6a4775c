"""What lives here: how ``check`` spends what its minimums leave of the budget — slices of
time over (engine, assignor) pairs, each slice going to the pair that finds the most new
shapes per second.

The pairs are the prover's widening (the rest of an assignor's portfolio, for an assignor
whose prover reached its depth scope and found nothing), the scenarios engine and the state
machine, on every assignor. A pair's yield is the shapes its last `RECENT` slices turned up
that none of its earlier slices had, per second they took (`shapes`: the histograms'
classes — imbalance, moves, I4b gap classes, one-subscription group sizes —, the invariants
judged and inherited, the classes of the state machine's small settled generations, the
scenarios engine's story outcomes, the prover's scopes proved). The next slice goes to a pair that
never had one, in index order; else every `EXPLORE_EVERY`-th slice (counted over all pairs)
to the pair that had the fewest, so that every pair deepens as the budget grows; else to
the pair of highest yield; ties to the one with the fewest slices, then by index
(`next_pair`). So the order depends only on the counts measured, and a run with the same
seed and budget takes the same path as far as the machine's speed allows. A pair that found
a violation or has nothing left to do (its portfolio done, its engine skipped) takes no
more slices.

A slice is an equal part of what is left over `ROUNDS` rounds of the pairs still able, at
least `MIN_SLICE` seconds, all of what is left when less would remain
(`slice_seconds`), and no shorter than the pair's first slice (its minimum: so a slow unit
of work, a wire target's chunk of examples, is not cut short). Engines cannot resume a
search: each slice runs the engine again with a seed of its own, the run's seed plus
`SEED_STRIDE` times the pair's slice number (`slice_seed`; its first slice has the run's
seed), so the same seed gives the same stories, the same examples and the same
counterexample file names. The prover resumes by scope: a slice runs the scopes after those
already run. A slice's result is merged into the pair's (`merge`: runs, seconds,
judgements, findings, figures, the depth reached, the seeds in the note).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .depth import MIN_EXAMPLES
from .prove import PORTFOLIO, extend_portfolio, scopes_run
from .results import EngineResult

__all__ = ["EXPLORE_EVERY", "MIN_SLICE", "RECENT", "ROUNDS", "SEED_STRIDE", "EnginePair", "merge",
           "next_pair", "shapes", "slice_seconds", "slice_seed", "spend", "start", "take"]

#: the slices a pair's yield is measured over
RECENT = 2
#: every this-many-th slice goes to the able pair that had the fewest, so none starves
EXPLORE_EVERY = 4
#: a slice is an equal part of what is left over this many rounds of the able pairs
ROUNDS = 3
#: the shortest slice, in seconds (less is left: the last slice takes it all)
MIN_SLICE = 2.0
#: a pair's slice ``k`` runs with the run's seed plus ``k`` times this
SEED_STRIDE = 1000

#: the histograms whose classes count as shapes
_HISTOGRAMS: tuple[Literal["imbalance", "moves", "equal_groups", "gap"], ...] = (
    "imbalance", "moves", "equal_groups", "gap")


@dataclass
class EnginePair:
    """One engine on one assignor (``target``: its index): what its slices found, merged
    (None before its first), the (seconds, new shapes) of each slice, the shapes seen."""

    engine: str
    target: int
    result: EngineResult | None = None
    slices: list[tuple[float, int]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    done: bool = False  # nothing left to do: no more slices
    seeds: list[int] = field(default_factory=list)  # of the slices after the first
    head: str = ""  # the first slice's note

    @property
    def able(self) -> bool:
        return not self.done and not (self.result is not None and self.result.failed)

    def yield_rate(self) -> float:
        """New shapes per second over the last `RECENT` slices."""
        recent = self.slices[-RECENT:]
        seconds = sum(s for s, _ in recent)
        return sum(n for _, n in recent) / max(seconds, 1e-3)


def shapes(result: EngineResult) -> set[str]:
    """The distinct shapes ``result`` turned up (see the module docstring)."""
    out = {f"{name}:{value}" for name in _HISTOGRAMS
           for value in (result.figures.get(name) or {})}
    out |= {f"judged:{inv}" for inv, n in result.judged.items() if n}
    out |= {f"kafka:{inv}" for inv in result.inherited}
    return out | result.shapes


def next_pair(pairs: Sequence[EnginePair]) -> int | None:
    """The index of the pair the next slice goes to, None when no pair is able: one that
    never had a slice, else every `EXPLORE_EVERY`-th slice the one that had the fewest,
    else the one of highest yield; ties to the fewest slices, then the lowest index."""
    able = [(n, p) for n, p in enumerate(pairs) if p.able]
    if not able:
        return None
    explore = sum(len(p.slices) for p in pairs) % EXPLORE_EVERY == EXPLORE_EVERY - 1
    return min(able, key=lambda x: (bool(x[1].slices),
                                    0.0 if explore else -x[1].yield_rate(),
                                    len(x[1].slices), x[0]))[0]


def slice_seconds(left: float, able: int) -> float:
    """The next slice's seconds out of ``left``, with ``able`` pairs still able."""
    if left <= 0:
        return 0.0
    part = max(left / (ROUNDS * max(able, 1)), MIN_SLICE)
    return left if left - part < MIN_SLICE else part


def slice_seed(seed: int, k: int) -> int:
    """The seed of a pair's slice ``k`` (0: its first)."""
    return seed + k * SEED_STRIDE


def start(pair: EnginePair, first: EngineResult) -> None:
    """``first`` (its minimum, played before the slices) as the pair's first slice."""
    pair.result = first
    pair.seen = shapes(first)
    pair.slices.append((first.seconds, len(pair.seen)))
    pair.head = first.note
    pair.done = bool(first.skipped) or _portfolio_done(pair)


def take(pair: EnginePair, part: EngineResult, seed: int) -> None:
    """A slice's result (run with ``seed``) into ``pair``: its new shapes counted, merged."""
    if pair.result is None:
        start(pair, part)
        return
    found = shapes(part)
    pair.slices.append((part.seconds, len(found - pair.seen)))
    pair.seen |= found
    if part.skipped:
        pair.done = True
        return
    if pair.engine == "prove":
        extend_portfolio(pair.result, part, len(PORTFOLIO))
        pair.done = _portfolio_done(pair) or not scopes_run(part)
        return
    pair.seeds.append(seed)
    merge(pair.result, part)
    pair.result.note = f"{pair.head}; then {_seeds(pair.seeds)}"


def _portfolio_done(pair: EnginePair) -> bool:
    return (pair.engine == "prove" and pair.result is not None
            and scopes_run(pair.result) >= len(PORTFOLIO))


def _seeds(seeds: list[int]) -> str:
    shown = ", ".join(map(str, seeds)) if len(seeds) <= 4 else \
        f"{seeds[0]}, {seeds[1]}, …, {seeds[-1]}"
    return f"{len(seeds)} slice(s) more at seed(s) {shown}"


def merge(total: EngineResult, part: EngineResult) -> None:
    """``part`` (another slice of the same engine on the same assignor) added to ``total``:
    runs, seconds, judgements, findings, figures, shapes and the depth's count."""
    total.seconds += part.seconds
    total.runs += part.runs
    total.judged.update(part.judged)
    total.checked = tuple(sorted(set(total.checked) | set(part.checked)))
    for finding in part.every_finding():
        total.add(finding)
    for inv, finding in part.inherited.items():
        total.inherited.setdefault(inv, finding)
    for name in _HISTOGRAMS:
        counts = part.figures.get(name)
        if counts:
            into = total.figures.setdefault(name, {})
            for value, n in counts.items():
                into[value] = into.get(value, 0) + n
    total.shapes |= part.shapes
    total.depth = re.sub(r"^[\d,]+", f"{total.runs:,}", total.depth or part.depth)
    if total.engine == "fuzz" and total.shallow and total.runs >= MIN_EXAMPLES:
        total.shallow, total.needs = (), 0.0


def spend(pairs: Sequence[EnginePair], deadline: float, seed: int,
          play: Callable[[EnginePair, float, int], EngineResult],
          stop: Callable[[], bool] = lambda: False) -> None:
    """Slices to ``deadline`` (``time.perf_counter``): ``play(pair, seconds, seed)`` runs one
    and returns what it found; ``stop`` ends the slices early (``--first``)."""
    while not stop():
        n = next_pair(pairs)
        left = deadline - time.perf_counter()
        if n is None or left <= 0:
            return
        pair = pairs[n]
        seconds = slice_seconds(left, sum(p.able for p in pairs))
        if pair.slices:  # no shorter than its first: a slow unit of work is not cut short
            seconds = min(max(seconds, pair.slices[0][0]), left)
        k = slice_seed(seed, len(pair.slices))
        take(pair, play(pair, seconds, k), k)
