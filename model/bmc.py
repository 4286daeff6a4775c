"""Bounded model checking of the classic rebalance protocol across codec versions (Z3).

Rules of this file: it encodes what *any* leader may do given what the codecs let it see;
it never runs the implementation (traces are replayed on a target by `bmc_trace`). The
encoding is plain Z3 over Booleans and small integers, one frame per step.

Theory of operation. A group of ``members`` consumers (``c1``, ``c2``, … join in that
order) shares every partition of ``topics`` × ``partitions``. Each member speaks fixed codec
versions, chosen symbolically: subscription v0–v3, sticky user data v0/v1 (eager) and
cooperative user data present or not (cooperative). One step is one membership event
followed by the rebalance it causes, run until the group settles:

=========  =========================================  ====================================
event      enabled when                               effect before the rebalance
=========  =========================================  ====================================
join       never joined; every earlier member joined  in the group, claims nothing
leave      in the group                               gone for good
stall      in the group                               out of the group, keeps its state
wake       stalled                                    rejoins (last in the leader order)
                                                      with its stale claim (eager: the
                                                      user data of its last assignment
                                                      and generation; cooperative: none,
                                                      its partitions were lost)
=========  =========================================  ====================================

Besides, in any step one other member of the group may miss the rebalance: its SyncGroup
fails (REBALANCE_IN_PROGRESS), so it keeps its partitions and generation and rejoins at
once with that stale state; a second rebalance follows in the same step, where the others
claim what the first one gave them (KAFKA-7026's story; KIP-792's stale owned partitions).

The rebalance: the leader (the earliest-joined member in the group) reads every member's
claim and computes a complete assignment.

* **What a claim carries.** Eager sticky: the previous partitions in user data, with the
  generation only in v1 (KIP-341), and a v1 leader reads a v0 claim as generation -1. A
  leader that itself speaks v0 is a pre-KIP-341 client: it reads no generation at all.
  Cooperative: owned partitions travel only in subscription v1+; the generation in
  subscription v2+ or in cooperative user data (KIP-792); otherwise it is -1.
* **Conflict rule** (a leader that can read generations): a claim is trusted when every
  other claim on the partition has a strictly lower generation; equal generations at the
  top drop every claim. A pre-KIP-341 leader cannot tell a stale claim from a fresh one and
  may trust all of them: it may give a partition to every member that claims it.
* Otherwise the assignment is balanced and exclusive; a cooperative leader withholds a
  partition given to a member that does not list it while another member does (KIP-429),
  and the follow-up rebalance hands it over.

Checked at every step: **I1** (no partition assigned to two members), **I5** (cooperative:
nothing owned by A goes to B in the same rebalance), **I6** (cooperative: no member claims
owned partitions without a generation; the conflict half of I6 holds by construction of
the leader relation above).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..properties.invariants import judged_by
from ..properties.scope.space import parse_bounds
from ..properties.z3_encodings import z3mod

__all__ = ["CODEC_FIELDS", "INVARIANTS", "BmcScope", "CodecMix", "Encoding", "invariants_for"]

ACTIONS = ("join", "leave", "stall", "wake")
PROTOCOLS = ("EAGER", "COOPERATIVE")
INVARIANTS = judged_by("bmc")
CODEC_FIELDS = {"subscription_version": (0, 1, 2, 3), "user_data_version": (0, 1),
                "cooperative_user_data": (0, 1)}
_LIMITS = {"members": (1, 5), "topics": (1, 3), "partitions": (1, 6)}


@dataclass(frozen=True)
class BmcScope:
    """``members=3,topics=1,partitions=3`` (partitions per topic)."""

    members: int = 3
    topics: int = 1
    partitions: int = 3

    @classmethod
    def parse(cls, text: str) -> BmcScope:
        return cls(**parse_bounds(text, _LIMITS))

    def text(self) -> str:
        return f"members={self.members},topics={self.topics},partitions={self.partitions}"

    def universe(self) -> list[tuple[str, int]]:
        return [(f"t{t}", p) for t in range(self.topics) for p in range(self.partitions)]

    def names(self) -> list[str]:
        return [f"c{i + 1}" for i in range(self.members)]


@dataclass(frozen=True)
class CodecMix:
    """Which codec versions a group's members may speak: ``every`` member's fields within
    the given values, and at least one member (``some``) with all of its fields within them
    (``some`` empty: no such requirement; ``exactly``: one member and no other)."""

    every: tuple[tuple[str, tuple[int, ...]], ...] = ()
    some: tuple[tuple[str, tuple[int, ...]], ...] = ()
    exactly: bool = False

    def allowed(self, name: str) -> tuple[int, ...]:
        for key, values in self.every:
            if key == name:
                return values
        return CODEC_FIELDS[name]


@dataclass
class SymbolicStep:
    """The symbolic state after one step (lists are indexed by member, then partition)."""

    joined: list[Any]
    left: list[Any]
    stalled: list[Any]
    rank: list[Any]
    held: list[list[Any]]
    generation: list[Any]


@dataclass
class LeaderRun:
    """One run of the leader: the claims it read, its assignment, what it handed out
    (cooperative: minus the withheld partitions) and the violations it may show."""

    claim: list[list[Any]]
    assigned: list[list[Any]]
    handed: list[list[Any]]
    bad: dict[str, Any] = field(default_factory=dict)


@dataclass
class StepTerms:
    """The terms of one step that a trace reads back; ``second`` is the rebalance a member
    that missed ``first`` forces when it rejoins with its stale state (``miss``)."""

    do: dict[str, list[Any]]
    miss: list[Any]
    in_group: list[Any]
    leader: list[Any]
    first: LeaderRun
    second: LeaderRun
    bad: dict[str, Any] = field(default_factory=dict)


class InContext:
    """The z3 module bound to one private `Context`: constants, values and n-ary And/Or are
    made in it, everything else is the module's. A fresh context per encoding keeps a run's
    answer independent of whatever else the process asked Z3 before (determinism)."""

    def __init__(self, z3: Any) -> None:
        self._z3, self.ctx = z3, z3.Context()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._z3, name)

    def Bool(self, name: str) -> Any:  # noqa: N802 - z3's names
        return self._z3.Bool(name, self.ctx)

    def Int(self, name: str) -> Any:  # noqa: N802
        return self._z3.Int(name, self.ctx)

    def IntVal(self, value: int) -> Any:  # noqa: N802
        return self._z3.IntVal(value, self.ctx)

    def BoolVal(self, value: bool) -> Any:  # noqa: N802
        return self._z3.BoolVal(value, self.ctx)

    def Solver(self) -> Any:  # noqa: N802
        return self._z3.Solver(ctx=self.ctx)

    def Or(self, *args: Any) -> Any:  # noqa: N802
        return self._z3.Or(*_flat(args), self.ctx)

    def And(self, *args: Any) -> Any:  # noqa: N802
        return self._z3.And(*_flat(args), self.ctx)


def _flat(args: tuple[Any, ...]) -> list[Any]:
    return list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)


def _exactly_one(z3: Any, terms: list[Any]) -> Any:
    return z3.And(z3.AtMost(*terms, 1), z3.AtLeast(*terms, 1))


class Encoding:
    """The transition relation unrolled step by step on one incremental solver."""

    def __init__(self, scope: BmcScope, protocol: str, mix: CodecMix,
                 missed_syncs: bool = True) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}")
        z3 = self.z3 = InContext(z3mod())
        self.scope, self.protocol, self.mix = scope, protocol, mix
        self.missed_syncs = missed_syncs  # False: a stale rejoin only by stall and wake
        self.solver = z3.Solver()
        self.m_range = range(scope.members)
        self.p_range = range(len(scope.universe()))
        self.codec = {name: [z3.Int(f"{name}_{m}") for m in self.m_range]
                      for name in CODEC_FIELDS}
        self._codec_domain()
        f = z3.BoolVal(False)
        self.frames = [SymbolicStep([f for _ in self.m_range], [f for _ in self.m_range],
                             [f for _ in self.m_range], [z3.IntVal(0) for _ in self.m_range],
                             [[f for _ in self.p_range] for _ in self.m_range],
                             [z3.IntVal(-1) for _ in self.m_range])]
        self.steps: list[StepTerms] = []

    @property
    def eager(self) -> bool:
        return self.protocol == "EAGER"

    def _codec_domain(self) -> None:
        z3 = self.z3
        for name in CODEC_FIELDS:
            values = self.mix.allowed(name)
            if self.eager and name == "cooperative_user_data":
                values = (1,)  # irrelevant to an eager group: pinned
            if not self.eager and name == "user_data_version":
                values = (1,)
            for var in self.codec[name]:
                self.solver.add(z3.Or([var == v for v in values]))
        if self.mix.some:
            matches = [z3.And([z3.Or([self.codec[name][m] == v for v in values])
                               for name, values in self.mix.some]) for m in self.m_range]
            self.solver.add(z3.Or(matches))
            if self.mix.exactly:
                self.solver.add(z3.AtMost(*matches, 1))

    # --- one step ---------------------------------------------------------------------------

    def add_step(self) -> StepTerms:
        z3, k = self.z3, len(self.frames)
        prev = self.frames[-1]
        do = {a: [z3.Bool(f"{a}_{m}@{k}") for m in self.m_range] for a in ACTIONS}
        self.solver.add(_exactly_one(z3, [v for a in ACTIONS for v in do[a]]))
        for m in self.m_range:
            was_in = z3.And(prev.joined[m], z3.Not(prev.left[m]), z3.Not(prev.stalled[m]))
            earlier = [prev.joined[e] for e in range(m)]
            self.solver.add(z3.Implies(do["join"][m], z3.And(z3.Not(prev.joined[m]), *earlier)))
            self.solver.add(z3.Implies(z3.Or(do["leave"][m], do["stall"][m]), was_in))
            self.solver.add(z3.Implies(do["wake"][m], prev.stalled[m]))
        frame = SymbolicStep(
            [z3.Or(prev.joined[m], do["join"][m]) for m in self.m_range],
            [z3.Or(prev.left[m], do["leave"][m]) for m in self.m_range],
            [z3.Or(z3.And(prev.stalled[m], z3.Not(do["wake"][m])), do["stall"][m])
             for m in self.m_range],
            [z3.If(z3.Or(do["join"][m], do["wake"][m]), k, prev.rank[m]) for m in self.m_range],
            [], [])
        in_group = [z3.Bool(f"in_{m}@{k}") for m in self.m_range]
        for m in self.m_range:
            self.solver.add(in_group[m] == z3.And(frame.joined[m], z3.Not(frame.left[m]),
                                                  z3.Not(frame.stalled[m])))
        miss = [z3.Bool(f"miss_{m}@{k}") for m in self.m_range]
        self.solver.add(z3.AtMost(*miss, 1) if self.missed_syncs
                        else z3.Not(z3.Or(miss)))
        for m in self.m_range:
            actor = z3.Or([do[a][m] for a in ACTIONS])
            self.solver.add(z3.Implies(miss[m], z3.And(in_group[m], z3.Not(actor))))
        missed = z3.Or(miss)
        claim, claim_gen = self._claims(prev, do, in_group)
        leader = [z3.And(in_group[m], *[z3.Implies(in_group[o], frame.rank[m] < frame.rank[o])
                                        for o in self.m_range if o != m]) for m in self.m_range]
        first = self._rebalance(f"{k}a", in_group, leader, claim, claim_gen)
        # a member whose SyncGroup failed keeps its state and rejoins at once; the others
        # come back with what the first rebalance gave them (KAFKA-7026, KIP-792)
        given = first.assigned if self.eager else first.handed
        claim2 = [[z3.And(in_group[m], z3.If(miss[m], claim[m][p], given[m][p]))
                   for p in self.p_range] for m in self.m_range]
        gen2 = [z3.If(miss[m], claim_gen[m], 2 * k) for m in self.m_range]
        second = self._rebalance(f"{k}b", in_group, leader, claim2, gen2)
        step = StepTerms(do, miss, in_group, leader, first, second)
        step.bad = {i: z3.Or(first.bad[i], z3.And(missed, second.bad[i])) for i in first.bad}
        final = [[z3.If(missed, second.assigned[m][p], first.assigned[m][p])
                  for p in self.p_range] for m in self.m_range]
        frame.held = [[z3.If(in_group[m], final[m][p],
                             z3.And(z3.Not(frame.left[m]), prev.held[m][p]))
                       for p in self.p_range] for m in self.m_range]
        frame.generation = [z3.If(in_group[m], z3.If(missed, 2 * k + 1, 2 * k),
                                  prev.generation[m]) for m in self.m_range]
        self.frames.append(frame)
        self.steps.append(step)
        return step

    def _claims(self, prev: SymbolicStep, do: dict[str, list[Any]], in_group: list[Any]
                ) -> tuple[list[list[Any]], list[Any]]:
        """What each member in the group claims, and with which generation."""
        z3 = self.z3
        stale_keeps = z3.BoolVal(self.eager)  # a cooperative member lost its partitions
        claim = [[z3.And(in_group[m], z3.Not(do["join"][m]), prev.held[m][p],
                         z3.Or(z3.Not(do["wake"][m]), stale_keeps))
                  for p in self.p_range] for m in self.m_range]
        claim_gen = [z3.If(z3.Or(do["join"][m], z3.And(do["wake"][m], z3.Not(stale_keeps))),
                           -1, prev.generation[m]) for m in self.m_range]
        return claim, claim_gen

    def _visibility(self, claim: list[list[Any]], claim_gen: list[Any]
                    ) -> tuple[list[list[Any]], list[Any]]:
        """The partitions and generation the leader can read in each claim."""
        z3 = self.z3
        sv, ud, cud = (self.codec[n] for n in CODEC_FIELDS)
        if self.eager:
            seen = claim
            gen = [z3.If(ud[m] == 1, claim_gen[m], -1) for m in self.m_range]
        else:
            seen = [[z3.And(claim[m][p], sv[m] >= 1) for p in self.p_range] for m in self.m_range]
            gen = [z3.If(z3.Or(sv[m] >= 2, cud[m] == 1), claim_gen[m], -1)
                   for m in self.m_range]
        return seen, gen

    def _rebalance(self, k: str, in_group: list[Any], leader: list[Any],
                   claim: list[list[Any]], claim_gen: list[Any]) -> LeaderRun:
        z3, s = self.z3, self.solver
        seen, gen = self._visibility(claim, claim_gen)
        ud = self.codec["user_data_version"]
        pre341 = z3.Or([z3.And(leader[m], ud[m] == 0) for m in self.m_range]) if self.eager \
            else z3.BoolVal(False)
        trusted = [[z3.And(seen[m][p], z3.Or(pre341, *[
            z3.Implies(z3.And(in_group[o], seen[o][p]), gen[o] < gen[m])
            for o in self.m_range if o != m])) for p in self.p_range] for m in self.m_range]
        assigned = [[z3.Bool(f"a_{m}_{p}@{k}") for p in self.p_range] for m in self.m_range]
        count = [z3.Sum([z3.If(a, 1, 0) for a in assigned[m]]) for m in self.m_range]
        for m in self.m_range:
            for p in self.p_range:
                s.add(z3.Implies(assigned[m][p], in_group[m]))
        for p in self.p_range:
            column = [assigned[m][p] for m in self.m_range]
            s.add(z3.Implies(z3.Or(in_group), z3.Or(column)))
            s.add(z3.Implies(z3.Not(pre341), z3.AtMost(*column, 1)))
            for m in self.m_range:
                for o in self.m_range:
                    if m < o:
                        s.add(z3.Implies(z3.And(assigned[m][p], assigned[o][p]),
                                         z3.And(trusted[m][p], trusted[o][p])))
        # balanced; a pre-KIP-341 leader's duplicates may unbalance it by as many
        doubled = z3.Sum([z3.If(z3.AtLeast(*[assigned[m][p] for m in self.m_range], 2), 1, 0)
                          for p in self.p_range]) if len(self.m_range) > 1 else 0
        for m in self.m_range:
            for o in self.m_range:
                if m != o:
                    s.add(z3.Implies(z3.And(in_group[m], in_group[o]),
                                     count[m] - count[o] <= 1 + doubled))
        if self.eager:
            handed = assigned
        else:
            handed = [[z3.And(assigned[m][p], z3.Or(seen[m][p], z3.Not(z3.Or(
                [z3.And(in_group[o], seen[o][p]) for o in self.m_range if o != m]))))
                for p in self.p_range] for m in self.m_range]
        done = LeaderRun(claim, assigned, handed)
        done.bad = self._bad(done, in_group)
        return done

    def _bad(self, step: LeaderRun, in_group: list[Any]) -> dict[str, Any]:
        z3 = self.z3
        pairs = [(m, o) for m in self.m_range for o in self.m_range if m != o]
        bad = {"I1": z3.Or([z3.And(step.assigned[m][p], step.assigned[o][p])
                            for m, o in pairs if m < o for p in self.p_range])}
        if self.eager:
            return bad
        sv, cud = self.codec["subscription_version"], self.codec["cooperative_user_data"]
        bad["I5"] = z3.Or([z3.And(step.handed[m][p], in_group[o], step.claim[o][p])
                           for m, o in pairs for p in self.p_range])
        bad["I6"] = z3.Or([z3.And(in_group[m], sv[m] == 1, cud[m] == 0,
                                  z3.Or(step.claim[m])) for m in self.m_range])
        return bad

    def block(self, depth: int) -> None:
        """Exclude the current model's events up to ``depth``: its event sequence and the
        codec versions of the members that joined (what a replay file holds)."""
        z3, model = self.z3, self.solver.model()

        def value(term: Any) -> Any:
            return model.eval(term, model_completion=True)

        joined = [m for m in self.m_range if z3.is_true(value(self.frames[depth].joined[m]))]
        same = [self.codec[name][m] == value(self.codec[name][m])
                for name in CODEC_FIELDS for m in joined]
        for step in self.steps[:depth]:
            same += [v == value(v) for v in [*step.miss, *(v for a in ACTIONS
                                                           for v in step.do[a])]]
        self.solver.add(z3.Not(z3.And(same)))


def invariants_for(protocol: str) -> tuple[str, ...]:
    """I5 and I6 are cooperative rules (KIP-429, KIP-792); I1 applies to both protocols."""
    return ("I1",) if protocol == "EAGER" else INVARIANTS
