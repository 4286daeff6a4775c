"""Claim-blind proofs: one judgement for every configuration that differs only in claims the
leader never sees.

Some of what members own never reaches the leader. An eager consumer revokes everything
before it joins (``onJoinPrepare``) and sends no owned partitions; range and roundrobin
write no user data, so their leader sees *no* claim (mode ``all``). A cooperative consumer
revokes the partitions of topics it no longer subscribes to before it joins (KIP-429) and
sends the rest, and cooperative-sticky's user data holds only the generation, so its leader
sees no claim on an *unsubscribed* topic (mode ``unsubscribed``). When the stickiness gap
(I4b) is not asked for, the prover judges each configuration without those hidden claims
once — its *projection* — and lets it stand for every way of adding them.

**Why it is sound.** For a configuration ``c`` and its projection ``p`` (the same metadata,
members, subscriptions, generations, racks and visible claims):

1. *The leader is handed the same input.* A keyed session (``impl.assign_session.AssignSession``)
   answers as a function of the metadata and of what the leader reads of each member's
   subscription (``leader_view``). ``choose`` asks the session for that view for every
   member the scope can hold — every subscription, generation and rack with every set of
   partitions it may own, stale claims included — and uses a mode only when every view
   equals the view of the same member without its hidden claims.
2. *The judges read the same claims.* A cooperative answer is judged on the claims a member
   still holds when it joins, those of topics it subscribes to (I5, I6), which mode
   ``unsubscribed`` keeps; mode ``all`` keeps none, so there an answer that is not
   ``EAGER`` stops the run (``check_eager``). Follow-up rounds are built from the answer
   alone. I4a reads every claim, but its premise (the claims form a complete assignment of
   subscribed partitions) is false whenever a claim on an unsubscribed topic exists, so a
   projection whose premise holds is judged twice: with I4a for itself, without it for the
   configurations that add hidden claims. (Mode ``all`` would hide claims that can make
   the premise true, so a target judged on I4a never gets it.)

So every configuration breaks exactly the invariants its projection's judgement shows, and
a clean run is a proof of the whole scope. A counterexample is a projection: itself a
configuration of the scope, whose requests get the answers that broke the invariant.
Weights count the hidden claims that can be added (``completions``: per partition,
claimants up to ``claims`` in all; stale claims up to ``stale`` in all).
``tests/test_scope_blind.py`` checks weights and verdicts against the full enumeration on
the builtins and the bug zoo's eager and cooperative mutants.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterator

from ..jsonl_shapes import RequestMember
from .judgement import Judgement, member_entry, member_name
from .orbits import MetadataShape, Skeleton, Task, config_of, metadatas, row_tuples, skeletons
from .space import AssignFn, Config, Metadata, Scope, reduction_is_sound

__all__ = ["MODES", "LeaderView", "check_eager", "choose", "claim_mode", "completions",
           "projections"]

#: what the leader reads of one member: (assignor, request entry) -> a hashable view
LeaderView = Callable[[str, RequestMember], Hashable]
#: the modes, strongest first: which claims the leader never sees
MODES = ("all", "unsubscribed")


def _hides(mode: str, rows: tuple[Skeleton, ...], topic: int) -> list[int]:
    """The members whose claim on a partition of ``topic`` the leader would not see."""
    return [i for i, (topics, gen, _) in enumerate(rows)
            if gen and (mode == "all" or topic not in topics)]


def _visible(mode: str, topics: tuple[int, ...], owned: tuple[tuple[int, int], ...]
             ) -> tuple[tuple[int, int], ...]:
    return () if mode == "all" else tuple(tp for tp in owned if tp[0] in topics)


def completions(scope: Scope, shape: MetadataShape, rows: tuple[Skeleton, ...], mode: str,
                pattern: tuple[tuple[int, ...], ...]) -> int:
    """How many configurations share this projection (itself included): the ways to add
    hidden claims to ``pattern`` (one column mask per block, at levels 0 and 1)."""
    out = 1
    poly = [1]  # stale claims added, by count, kept within what ``stale`` leaves
    budget = scope.stale - sum(part[0].bit_count() for part, (*_, stale)
                               in zip(pattern, shape.blocks, strict=True) if stale)
    for part, (t, _, _, stale) in zip(pattern, shape.blocks, strict=True):
        hidden = len(_hides(mode, rows, t))
        ways = [math.comb(hidden, j) for j in range(max(0, scope.claims - part[0].bit_count())
                                                    + 1)]
        if not stale:
            out *= sum(ways)
            continue
        grown = [0] * (budget + 1)
        for i, a in enumerate(poly):
            for j, b in enumerate(ways):
                if i + j <= budget:
                    grown[i + j] += a * b
        poly = grown
    return out * sum(poly)


def _columns(scope: Scope, mode: str, rows: tuple[Skeleton, ...], topic: int,
             stale: bool) -> list[int]:
    """The visible claimant sets of one partition of ``topic``, as row masks."""
    if mode == "all":
        return [0]
    hidden = set(_hides(mode, rows, topic))
    free = [i for i, (_, gen, _) in enumerate(rows) if gen and i not in hidden]
    top = min(scope.claims, scope.stale if stale else scope.claims, len(free))
    return [sum(1 << i for i in subset) for r in range(top + 1)
            for subset in itertools.combinations(free, r)]


def projections(scope: Scope, task: Task, shape: MetadataShape, skels: list[Skeleton], mode: str
                ) -> Iterator[tuple[Config, int]]:
    """The projections of one task: each with its own weight (the configurations equal to
    it, at level 1 every renaming of its generation values) and, second, the weight of the
    configurations that add hidden claims to it."""
    _, n, first = task
    for rows in row_tuples(scope, skels, n, first):
        base = 1
        if scope.symmetry:
            base = math.comb(scope.generations, len({row[1] for row in rows if row[1]}))
        options = [[(c,) for c in _columns(scope, mode, rows, t, stale)]
                   for t, _, _, stale in shape.blocks]
        for pattern in itertools.product(*options):
            if sum(part[0].bit_count() for part, (*_, stale)
                   in zip(pattern, shape.blocks, strict=True) if stale) > scope.stale:
                continue
            more = completions(scope, shape, rows, mode, pattern) - 1
            yield config_of(shape, rows, pattern, base), base * more


def _owned_sets(scope: Scope, shape: MetadataShape) -> Iterator[tuple[tuple[int, int], ...]]:
    """Every set of partitions one member may claim over this metadata (none excluded)."""
    fresh = [(t, p) for t, p, _, stale in shape.blocks if not stale]
    late = [(t, p) for t, p, _, stale in shape.blocks if stale]
    for k in range(min(scope.stale, len(late)) + 1):
        for chosen in itertools.combinations(late, k):
            for r in range(len(fresh) + 1):
                for early in itertools.combinations(fresh, r):
                    if early or chosen:
                        yield tuple(sorted(early + chosen))


def _premise(scope: Scope, metadatas: list[tuple[Metadata, int]], assignor: str,
             view: LeaderView, mode: str) -> str | None:
    """None when, for every member the scope holds, the leader's view of it is its view
    without the claims ``mode`` hides; else the first member where it is not, in words."""
    for metadata, orbit in metadatas:
        shape = MetadataShape.of(scope, metadata, orbit)
        owned_sets = list(_owned_sets(scope, shape))
        for topics, gen, rack in skeletons(scope):
            if not gen:
                continue  # a member without a generation owns nothing
            seen: dict[tuple[tuple[int, int], ...], Hashable] = {}
            for owned in owned_sets:
                shown = _visible(mode, topics, owned)
                if shown not in seen:
                    seen[shown] = view(assignor, member_entry((topics, gen, rack, shown)))
                entry = member_entry((topics, gen, rack, owned))
                if view(assignor, entry) != seen[shown]:
                    return f"the leader sees what {member_name(0)} owns ({entry})"
    return None


def choose(scope: Scope, metadatas: list[tuple[Metadata, int]], assignor: str,
           view: LeaderView, i4a: bool = False) -> tuple[str | None, str]:
    """The strongest mode whose premise holds (None if neither), and why, in words. With
    ``i4a`` (I4a is judged) only ``unsubscribed``: a hidden claim on a subscribed topic
    could make I4a's premise true."""
    reason = ""
    for mode in MODES[1:] if i4a else MODES:
        found = _premise(scope, metadatas, assignor, view, mode)
        if found is None:
            return mode, reason
        reason = reason or found
    return None, reason


def check_eager(config: Config, j: Judgement) -> None:
    """Refuse a judgement in mode ``all`` whose answer is not EAGER (see the module doc)."""
    for _, answer in j.calls:
        protocol = getattr(answer, "protocol", None)
        if protocol is None and isinstance(answer, dict):
            protocol = answer.get("protocol")
        if protocol is not None and protocol != "EAGER":
            raise RuntimeError(f"claim-blind proof: the answer to {config.members} is "
                               f"{protocol}, not EAGER; prove again with the stickiness gap")


def claim_mode(scope: Scope, assignor: str, enumerate_all: bool,
                 session: Callable[[], AssignFn] | None,
                 sticky: bool = False) -> tuple[str | None, str]:
    """Which claims the run may aggregate (a ``blind`` mode, or None) and why, in one
    line for the report; ``enumerate_all``: none (the gap is measured, or told so);
    ``sticky``: I4a is judged, which only mode ``unsubscribed`` keeps whole."""
    if enumerate_all:
        return None, ""
    if not reduction_is_sound(scope) or session is None:
        return None, ("claims enumerated (aggregating them needs a proof level and an "
                      "in-tree assign session)")
    view = getattr(session(), "leader_view", None)
    if view is None:
        return None, "claims enumerated (the session cannot show what its leader reads)"
    mode, found = choose(scope, metadatas(scope), assignor, view, sticky)
    if mode is None:
        return None, f"claims enumerated: {found}"
    hidden = "nothing a member owns" if mode == "all" else "no claim on a topic its member "\
        "no longer subscribes to"
    return mode, (f"claims aggregated: the leader sees {hidden} (checked for every member "
                  "of the scope), so one judgement stands for every way to add such claims")
