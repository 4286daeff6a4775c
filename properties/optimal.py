"""The optimal-stickiness solver (I4b): the fewest moves any balanced complete assignment has.

Given the subscriptions, the metadata and the previous ownership, Z3 searches every
assignment that is complete (I2) and balanced (Kafka's ``isBalanced``, I3) — the very
formulas of ``z3_encodings`` — and minimises ``moves`` (previously owned entries that end
with another member or none). An assignor's *gap* on an input is its moves minus this
optimum; the gap is reported, never failed on.

A complete balanced assignment always exists (one that minimises the sum of squared sizes
is balanced), so :func:`min_moves` always answers. z3 is imported lazily.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .z3_encodings import (
    SymbolicAssignment,
    balanced_holds,
    complete_holds,
    moves_term,
    z3mod,
)

__all__ = ["MovesOracle", "Optimiser", "Optimum", "TopicPartition", "forced_moves", "min_moves",
           "search_min_moves"]

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class Optimum:
    """The minimum number of moves, and one balanced complete assignment that achieves it."""

    moves: int
    assignment: dict[str, list[TopicPartition]]


def forced_moves(subscriptions: Mapping[str, Iterable[str]], partitions: Mapping[str, int],
                 owned_before: Mapping[str, Iterable[TopicPartition]]) -> int:
    """A lower bound on the moves of every complete assignment: entries whose partition left
    the metadata or whose member does not subscribe to its topic (or is gone), plus, for a
    partition claimed by several members, every entry but those of one member."""
    subs = {m: set(ts) for m, ts in subscriptions.items()}
    forced = 0
    keepable: dict[TopicPartition, dict[str, int]] = {}
    for member, parts in owned_before.items():
        for item in parts:
            topic, p = item[0], item[1]
            if topic in subs.get(member, set()) and 0 <= p < partitions.get(topic, 0):
                per = keepable.setdefault((topic, p), {})
                per[member] = per.get(member, 0) + 1
            else:
                forced += 1
    for per in keepable.values():
        forced += sum(per.values()) - max(per.values())
    return forced


def search_min_moves(subscriptions: Mapping[str, Iterable[str]], partitions: Mapping[str, int],
                     owned_before: Mapping[str, Iterable[TopicPartition]],
                     limit: int = 20_000) -> int | None:
    """The same optimum as :func:`min_moves`, by exhaustive search with a bound, when the
    complete assignments number at most ``limit`` (else None: ask Z3).

    Each partition of a subscribed topic goes to one of its subscribers; a branch is cut
    when even keeping every claim still open cannot beat the best complete balanced
    assignment found so far. Balance is Kafka's ``isBalanced`` (``assignment.balanced``):
    sizes within one, or no member could take a partition of its topics from a holder with
    at least two more. The scope prover's assignments are small, where this answers in
    microseconds what a solver call answers in milliseconds.
    """
    subs = {m: set(ts) for m, ts in subscriptions.items()}
    members = list(subs)
    wanted = sorted({t for ts in subs.values() for t in ts if partitions.get(t, 0) > 0})
    universe = [(t, p) for t in wanted for p in range(partitions[t])]
    candidates = [[i for i, m in enumerate(members) if tp[0] in subs[m]] for tp in universe]
    space = 1
    for options in candidates:
        space *= len(options)
        if space > limit:
            return None
    entries = 0
    kept_if: list[dict[int, int]] = [{} for _ in universe]
    index = {tp: k for k, tp in enumerate(universe)}
    position = {m: i for i, m in enumerate(members)}
    for member, parts in owned_before.items():
        for item in parts:
            entries += 1
            k = index.get((item[0], item[1]))
            if k is not None and member in position:
                i = position[member]
                kept_if[k][i] = kept_if[k].get(i, 0) + 1
    # claimed partitions first, each with its claimants first: good answers come early
    order = sorted(range(len(universe)), key=lambda k: -max(kept_if[k].values(), default=0))
    remaining = [0] * (len(order) + 1)
    for step in range(len(order) - 1, -1, -1):
        remaining[step] = remaining[step + 1] + max(kept_if[order[step]].values(), default=0)
    sizes = [0] * len(members)
    holder = [0] * len(universe)
    best = -1

    def balanced() -> bool:
        if max(sizes, default=0) - min(sizes, default=0) <= 1:
            return True
        for k, tp in enumerate(universe):
            o = holder[k]
            for i, m in enumerate(members):
                if i != o and sizes[i] + 1 < sizes[o] and tp[0] in subs[m]:
                    return False
        return True

    def visit(step: int, kept: int) -> None:
        nonlocal best
        if kept + remaining[step] <= best:
            return
        if step == len(order):
            if balanced():
                best = kept
            return
        k = order[step]
        gains = kept_if[k]
        for i in sorted(candidates[k], key=lambda i: -gains.get(i, 0)):
            sizes[i] += 1
            holder[k] = i
            visit(step + 1, kept + gains.get(i, 0))
            sizes[i] -= 1

    visit(0, 0)
    return entries - best if best >= 0 else None


def min_moves(subscriptions: Mapping[str, Iterable[str]], partitions: Mapping[str, int],
              owned_before: Mapping[str, Iterable[TopicPartition]]) -> Optimum:
    """Ask Z3 for the fewest moves of any complete, balanced assignment."""
    z3 = z3mod()
    subs = {m: set(ts) for m, ts in subscriptions.items()}
    wanted = sorted({t for ts in subs.values() for t in ts if t in partitions})
    universe = [(t, p) for t in wanted for p in range(partitions[t])]
    sym = SymbolicAssignment(
        list(subs), universe, copies=1, name="opt",
        allowed=lambda m, tp: tp[0] in subs[m])
    objective = moves_term(sym, owned_before)
    opt = z3.Optimize()
    opt.add(complete_holds(sym, subs, partitions), balanced_holds(sym, subs, partitions))
    opt.minimize(objective)
    if opt.check() != z3.sat:  # pragma: no cover - a balanced complete assignment exists
        raise RuntimeError("no complete balanced assignment exists")
    model = opt.model()
    return Optimum(model.eval(objective, model_completion=True).as_long(), sym.value(model))


class MovesOracle:
    """The same optimum, for many questions over few (subscriptions, metadata) pairs.

    The complete ∧ balanced formula depends only on the subscriptions and the metadata, so
    it is built once per pair and kept in an incremental solver; each question adds only
    its ``moves <= k`` bound. Given ``achieved`` — the moves of an assignment known to be
    complete and balanced — one unsatisfiable check of ``moves <= achieved - 1`` settles the
    common case; otherwise the bound rises from :func:`forced_moves` until it is met.
    """

    def __init__(self) -> None:
        self._bases: dict[Any, tuple[SymbolicAssignment, Any]] = {}
        self.checks = 0

    def _base(self, subscriptions: Mapping[str, Iterable[str]],
              partitions: Mapping[str, int]) -> tuple[SymbolicAssignment, Any]:
        subs = {m: sorted(set(ts)) for m, ts in subscriptions.items()}
        key = (tuple((m, tuple(ts)) for m, ts in subs.items()),
               tuple(sorted(partitions.items())))
        base = self._bases.get(key)
        if base is None:
            z3 = z3mod()
            wanted = sorted({t for ts in subs.values() for t in ts if t in partitions})
            universe = [(t, p) for t in wanted for p in range(partitions[t])]
            sym = SymbolicAssignment(list(subs), universe, copies=1, name="opt",
                                     allowed=lambda m, tp: tp[0] in subs[m])
            solver = z3.Solver()
            solver.add(complete_holds(sym, subs, partitions),
                       balanced_holds(sym, subs, partitions))
            base = self._bases[key] = (sym, solver)
        return base

    def _within(self, solver: Any, objective: Any, bound: int) -> bool:
        z3 = z3mod()
        self.checks += 1
        solver.push()
        solver.add(objective <= bound)
        found = solver.check() == z3.sat
        solver.pop()
        return bool(found)

    def min_moves(self, subscriptions: Mapping[str, Iterable[str]],
                  partitions: Mapping[str, int],
                  owned_before: Mapping[str, Iterable[TopicPartition]],
                  achieved: int | None = None) -> int:
        """The fewest moves of any complete balanced assignment (``achieved``: the moves of
        one such assignment, if known)."""
        sym, solver = self._base(subscriptions, partitions)
        objective = moves_term(sym, owned_before)
        low = forced_moves(subscriptions, partitions, owned_before)
        if achieved is not None:
            if achieved <= low or not self._within(solver, objective, achieved - 1):
                return max(achieved, low)
        bound = low
        while not self._within(solver, objective, bound):
            bound += 1
        return bound


class Optimiser:
    """The I4b optimum, memoised per input: no search when the assignor's balanced complete
    answer meets the lower bound (``forced_moves``); else an exhaustive search where the
    assignments are few (``search_min_moves``, equal to Z3's optimum and far cheaper), else
    Z3 (``MovesOracle``). ``exact`` asks Z3 every time."""

    def __init__(self, exact: bool) -> None:
        self.exact = exact
        self.cache: dict[Any, int] = {}
        # found, not loaded: Z3 loads (most of a second) only when an optimum needs it
        self.available = importlib.util.find_spec("z3") is not None
        self.oracle: Any = None

    def optimum(self, subs: Mapping[str, list[str]], partitions: Mapping[str, int],
                prev: Mapping[str, list[TopicPartition]],
                achieved: int | None) -> tuple[int, str]:
        """``achieved``: the moves of the assignor's answer when it is complete and
        balanced (an upper bound on the optimum), else None."""
        if (not self.exact and achieved is not None
                and achieved == forced_moves(subs, partitions, prev)):
            return achieved, "bound"
        key = (tuple((m, tuple(ts)) for m, ts in subs.items()),
               tuple(sorted(partitions.items())),
               tuple((m, tuple(sorted(ps))) for m, ps in prev.items()))
        if key in self.cache:
            return self.cache[key], "cache"
        if not self.exact:
            found = search_min_moves(subs, partitions, prev)
            if found is not None:
                self.cache[key] = found
                return found, "search"
        if self.oracle is None:
            self.oracle = MovesOracle()
        value = int(self.oracle.min_moves(subs, partitions, prev,
                                          None if self.exact else achieved))
        self.cache[key] = value
        return value, "z3"
