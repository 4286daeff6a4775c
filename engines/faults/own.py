"""Which fault points failed as their story does on its own, not because of their fault, and
the points of a step and protocol that are then not played.

What lives here: `before_fault` (a violation before the point's fault was armed),
`OwnFailures` (per step and protocol, what its points and its story with no fault showed, and
the rule that leaves the other points not reached), `OWN_FAILURES` and `OWN_SHARE`.

Theory of operation: a point's violation is its story's own when it came before the fault
was armed, or when the same step and protocol's story played with no fault
(`points.no_fault`) fails too: a story that fails with no fault cannot tell its faults'
failures from its own. That story is played only when it can tell:
once a point of its step and protocol failed after its fault, it is the next one of them
taken, and again (up to `ALONE_PLAYS` plays) while it holds and another of its points fails
after its fault. Once `OWN_FAILURES` points of a step and protocol failed as
their story does, and they are at least `OWN_SHARE` of its points played, its other points
are not reached: a story that fails on its own cannot test its faults, and each of its points
waits out the bound it breaks (Java 3.2.0's commit loop, finding 22, breaks I11's 31.5 s
bound on most cooperative leave, crash and join stories). A story that fails only now and
then (kafka-python's hang, finding 7) keeps its points.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from ...model.replay import Outcome
from .concurrent import PointRun
from .points import FaultPoint, Protocol, Step, no_fault
from .stories import fault_number

__all__ = ["ALONE_PLAYS", "OWN_FAILURES", "OWN_SHARE", "OwnFailures", "before_fault"]

#: points of one step and protocol that failed as their story does and leave its other
#: points not reached, when they are at least `OWN_SHARE` of its points played
OWN_FAILURES = 3
OWN_SHARE = 0.75
#: plays at most of a step and protocol's story with no fault: one that fails on its own
#: only now and then (finding 22's loop, about two plays in three) may hold on its first
ALONE_PLAYS = 3

Key = tuple[Step, Protocol]


def before_fault(run: PointRun) -> bool:
    """Whether the played point's story showed its violation before its fault was armed."""
    outcome, armed = run.outcome, fault_number(run.events)
    return (isinstance(outcome, Outcome) and bool(outcome.violations) and armed is not None
            and outcome.events_run < armed)


@dataclass(frozen=True)
class Heard:
    """One played point: its name, its first violation ("" when it held), and whether that
    came before its fault."""

    name: str
    violation: str
    before: bool


@dataclass
class OwnFailures:
    """Per step and protocol, its points heard, the times its story with no fault was
    taken, and the first violation of each of those plays heard ("" when it held)."""

    heard: dict[Key, list[Heard]] = field(default_factory=lambda: defaultdict(list))
    alone: dict[Key, list[str]] = field(default_factory=lambda: defaultdict(list))
    asked: Counter[Key] = field(default_factory=Counter)

    def hear(self, run: PointRun) -> None:
        """A point (or a story with no fault) that ended with an outcome."""
        key = (run.point.step, run.point.protocol)
        assert isinstance(run.outcome, Outcome)
        first = run.outcome.violations[0] if run.outcome.violations else ""
        if run.point.kind == "none":
            self.alone[key].append(first)
        else:
            self.heard[key].append(Heard(run.point.name, first, before_fault(run)))

    def failed_alone(self, key: Key) -> str:
        """The first violation the story of ``key`` showed with no fault ("" when none)."""
        return next((v for v in self.alone.get(key, []) if v), "")

    def own(self, key: Key) -> list[Heard]:
        """The points of ``key`` that failed as their story does on its own: before their
        fault, or at all once the story failed with no fault (one cause may show as either
        of two invariants: finding 22's loop as I1 or I11)."""
        alone = bool(self.failed_alone(key))
        return [h for h in self.heard.get(key, []) if h.before or (alone and h.violation)]

    def why_not(self, point: FaultPoint) -> str:
        """Why ``point`` is not to be played ("" when it is)."""
        key = (point.step, point.protocol)
        own, played = self.own(key), len(self.heard.get(key, []))
        if len(own) < OWN_FAILURES or len(own) < OWN_SHARE * played:
            return ""
        story = f"the {point.step} story under {point.protocol} rebalances"
        how = ("before its fault" if all(h.before for h in own) else
               f"before its fault or after it, as it fails with no fault "
               f"({self.failed_alone(key)})")
        return (f"{story} failed {how}, on {len(own)} of the {played} points played: "
                + "; ".join(f"{h.name} ({h.violation})" for h in own))

    def _wanted(self, key: Key) -> bool:
        """Whether the story of ``key`` with no fault is to be played next: it has not
        failed yet, no play of it is under way, it was taken fewer than `ALONE_PLAYS`
        times, and more points of ``key`` failed after their fault than it was played."""
        taken = self.asked[key]
        after = sum(1 for h in self.heard.get(key, []) if h.violation and not h.before)
        return (taken < ALONE_PLAYS and taken == len(self.alone.get(key, []))
                and not self.failed_alone(key) and after > taken)

    def points(self, points: list[FaultPoint], unreached: dict[str, str]
               ) -> Iterator[FaultPoint]:
        """``points`` but those `why_not` leaves out (named in ``unreached``), decided as
        each is taken, each step and protocol's story with no fault before its next point
        once it is wanted."""
        for point in points:
            key = (point.step, point.protocol)
            if self._wanted(key):
                self.asked[key] += 1
                yield no_fault(point.step, point.protocol)
            why = self.why_not(point)
            if why:
                unreached[point.name] = why
            else:
                yield point
