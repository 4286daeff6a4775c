"""A bounded-model-checking trace: read back from a Z3 model, told as a numbered story, and
turned into a replay file's events (the state machine's domain events), so that
``groupcheck replay`` runs it on an implementation.

Each abstract step becomes its membership event followed by ``settle`` (the rebalance it
causes, run to the end); the codec versions a member speaks travel in its ``join`` event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from .bmc import CODEC_FIELDS, INVARIANTS, BmcScope, Encoding
from .event_types import DomainEvent, Join, Leave, MemberEvent, Stall, Wake
from .group_events import CoordinatorError, Partitions, Settle

__all__ = ["Trace", "TraceRecord", "read_trace"]

TopicPartition = tuple[str, int]
ASSIGNOR = {"EAGER": "sticky", "COOPERATIVE": "cooperative-sticky"}
HELD = {"EAGER": "claims  ", "COOPERATIVE": "owns    "}  # user data claim / owned partitions
MISS_ERROR = "REBALANCE_IN_PROGRESS"  # keeps the generation and the partitions
#: the event a step other than a join replays as
STEP_EVENTS: dict[str, type[MemberEvent]] = {"leave": Leave, "stall": Stall, "wake": Wake}
EVENT_TEXT = {"join": "{m} joins", "leave": "{m} leaves", "stall": "{m} stalls and drops out",
              "wake": "{m} wakes and rejoins with its stale state"}


@dataclass(frozen=True)
class Codecs:
    """The codec versions one member speaks."""

    subscription_version: int
    user_data_version: int
    cooperative_user_data: bool

    def text(self, protocol: str) -> str:
        if protocol == "EAGER":
            return f"subscription v{self.subscription_version}, user data " \
                   f"v{self.user_data_version}"
        return f"subscription v{self.subscription_version}, " + \
            ("cooperative user data" if self.cooperative_user_data else "no user data")


@dataclass
class RoundView:
    """One leader run: the claims it read, its assignment, what it handed out."""

    claims: dict[str, list[TopicPartition]]
    assignment: dict[str, list[TopicPartition]]
    handed: dict[str, list[TopicPartition]]


@dataclass
class TraceStep:
    event: str
    member: str
    leader: str | None
    rounds: list[RoundView]
    missed: str | None = None  # its SyncGroup failed in the first rebalance

    def record(self) -> StepRecord:
        return {"event": self.event, "member": self.member, "leader": self.leader,
                "rounds": [{"claims": r.claims, "assignment": r.assignment,
                            "handed": r.handed} for r in self.rounds],
                "missed": self.missed}


class CodecsRecord(TypedDict):
    subscription_version: int
    user_data_version: int
    cooperative_user_data: bool


class TraceRound(TypedDict):
    claims: dict[str, list[TopicPartition]]
    assignment: dict[str, list[TopicPartition]]
    handed: dict[str, list[TopicPartition]]


class StepRecord(TypedDict):
    event: str
    member: str
    leader: str | None
    rounds: list[TraceRound]
    missed: str | None


class TraceRecord(TypedDict):
    """A trace as a report or a replay file's ``bmc`` holds it."""

    protocol: str
    scope: str
    invariant: str
    codecs: dict[str, CodecsRecord]
    steps: list[StepRecord]
    story: list[str]
    replayed: list[str]


@dataclass
class Trace:
    protocol: str
    scope: BmcScope
    codecs: dict[str, Codecs]
    steps: list[TraceStep]
    invariant: str
    replayed: list[str] = field(default_factory=list)  # what the implementation showed
    at_second: bool = False  # the violation shows in the last step's follow-up rebalance

    def joined(self) -> list[str]:
        return [s.member for s in self.steps if s.event == "join"]

    def events(self) -> list[DomainEvent]:
        """The replay file's events: topic metadata, then each step and a settle."""
        out: list[DomainEvent] = [Partitions(f"t{t}", self.scope.partitions)
                            for t in range(self.scope.topics)]
        topics = tuple(f"t{t}" for t in range(self.scope.topics))
        for step in self.steps:
            if step.missed:
                out.append(CoordinatorError(step.missed, "sync", MISS_ERROR))
            if step.event == "join":
                c = self.codecs[step.member]
                out.append(Join(step.member, topics, (ASSIGNOR[self.protocol],),
                                profile="kip", subscription_version=c.subscription_version,
                                user_data_version=c.user_data_version,
                                cooperative_user_data=c.cooperative_user_data))
            else:
                out.append(STEP_EVENTS[step.event](step.member))
            out.append(Settle())
        return out

    def story(self) -> list[str]:
        """One numbered line per step, with the claims the leader read and its answer."""
        lines = [f"group: {self.protocol.lower()} ({ASSIGNOR[self.protocol]}), "
                 f"{self.scope.text()}"]
        lines += [f"  {m} speaks {self.codecs[m].text(self.protocol)}" for m in self.joined()]
        for i, step in enumerate(self.steps, 1):
            missing = f", and {step.missed}'s SyncGroup fails ({MISS_ERROR})" \
                if step.missed else ""
            lines.append(f"{i:>3}. {EVENT_TEXT[step.event].format(m=step.member)}{missing}; "
                         f"leader {step.leader or '-'}")
            for j, view in enumerate(step.rounds):
                if j:
                    lines.append(f"     {step.missed} rejoins with its stale state")
                lines += self._round(view)
        lines.append(f"     ✗ {self.invariant}: {self.sentence()}")
        return lines

    def _round(self, view: RoundView) -> list[str]:
        lines = []
        claims = _cells(view.claims)
        if claims:
            lines.append(f"     {HELD[self.protocol]} {claims}")
        lines.append(f"     assigned {_cells(view.assignment) or '-'}")
        if view.handed != view.assignment:
            lines.append(f"     handed   {_cells(view.handed) or '-'} (the rest withheld)")
        return lines

    def sentence(self) -> str:
        last = self._violating_round()
        if self.invariant == "I1":
            owners: dict[TopicPartition, list[str]] = {}
            for m, parts in last.assignment.items():
                for tp in parts:
                    owners.setdefault(tp, []).append(m)
            double = [f"{t}-{p} to {', '.join(ms)}" for (t, p), ms in sorted(owners.items())
                      if len(ms) > 1]
            return "the leader assigned " + "; ".join(double)
        if self.invariant == "I5":
            moved = [f"{t}-{p} owned by {o} went to {m}" for m, ps in last.handed.items()
                     for (t, p) in ps for o, held in last.claims.items()
                     if o != m and (t, p) in held]
            return "in the same rebalance " + "; ".join(moved)
        bare = [m for m, ps in last.claims.items() if ps and self.codecs[m].subscription_version
                == 1 and not self.codecs[m].cooperative_user_data]
        return f"{', '.join(bare)} claimed owned partitions with no generation (KIP-792)"

    def _violating_round(self) -> RoundView:
        """The last step's first rebalance, unless only its follow-up shows the violation."""
        step = self.steps[-1]
        return step.rounds[-1] if self.at_second else step.rounds[0]

    def to_dict(self) -> TraceRecord:
        return {"protocol": self.protocol, "scope": self.scope.text(),
                "invariant": self.invariant,
                "codecs": {m: {"subscription_version": c.subscription_version,
                               "user_data_version": c.user_data_version,
                               "cooperative_user_data": c.cooperative_user_data}
                           for m, c in self.codecs.items()},
                "steps": [s.record() for s in self.steps], "story": self.story(),
                "replayed": self.replayed}


def _cells(parts: dict[str, list[TopicPartition]]) -> str:
    return " | ".join(f"{m}: {' '.join(f'{t}-{p}' for t, p in ps)}"
                      for m, ps in parts.items() if ps)


def read_trace(enc: Encoding, depth: int, wanted: list[str] | None = None) -> Trace:
    """The trace of the solver's current model, up to ``depth`` steps."""
    model = enc.solver.model()
    names, universe = enc.scope.names(), enc.scope.universe()

    def true(term: Any) -> bool:
        return bool(enc.z3.is_true(model.eval(term, model_completion=True)))

    def parts(cells: list[list[Any]], m: int) -> list[TopicPartition]:
        return [universe[p] for p in enc.p_range if true(cells[m][p])]

    codecs = {names[m]: Codecs(*(model.eval(enc.codec[n][m], model_completion=True).as_long()
                                 for n in CODEC_FIELDS)) for m in enc.m_range}
    codecs = {m: Codecs(c.subscription_version, c.user_data_version,
                        bool(c.cooperative_user_data)) for m, c in codecs.items()}
    steps: list[TraceStep] = []
    for term in enc.steps[:depth]:
        event, member = next((a, names[m]) for a, vs in term.do.items()
                             for m, v in enumerate(vs) if true(v))
        group = [m for m in enc.m_range if true(term.in_group[m])]
        leader = next((names[m] for m in group if true(term.leader[m])), None)
        missed = next((names[m] for m in enc.m_range if true(term.miss[m])), None)
        rounds = [RoundView({names[m]: parts(r.claim, m) for m in group},
                            {names[m]: parts(r.assigned, m) for m in group},
                            {names[m]: parts(r.handed, m) for m in group})
                  for r in ([term.first, term.second] if missed else [term.first])]
        steps.append(TraceStep(event, member, leader, rounds, missed))
    last = enc.steps[depth - 1]
    invariant = next(i for i in INVARIANTS if i in last.bad and true(last.bad[i])
                     and (wanted is None or i in wanted))
    at_second = not true(last.first.bad[invariant])
    return Trace(enc.protocol, enc.scope, codecs, steps, invariant, at_second=at_second)
