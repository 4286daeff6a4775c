"""A story that fails before its fault: the fault engine counts such a point's violation as
its story's, and once `BEFORE_FAULT` points of one step and protocol failed so, none reaching
its fault, it leaves that step and protocol's other points not reached (a client whose every
cooperative leave story stalls at its first settle waited out I11's bound on each point)."""

from __future__ import annotations

from groupcheck.engines.battery.faults import (
    BEFORE_FAULT,
    BeforeFault,
    FaultTally,
    before_fault,
    coverage,
)
from groupcheck.engines.faults.concurrent import PointRun, play_points
from groupcheck.engines.faults.points import FaultPoint, FaultScope, fault_points
from groupcheck.engines.faults.stories import fault_number, story
from groupcheck.model.replay import Outcome

#: the leave step's points under both protocols, on every API, errors only
SCOPE = FaultScope(steps=("leave",), kinds=("error",))


def _played(point: FaultPoint, violated_at: int | None) -> PointRun:
    """``point`` played, its story's first violation at event ``violated_at`` (None: held)."""
    events = story(point, "librdkafka", "range")
    assert not isinstance(events, str)
    if violated_at is None:
        return PointRun(point, events, Outcome([], events_run=len(events)))
    return PointRun(point, events, Outcome(["I11: not settled"], events_run=violated_at))


class FakeRun:
    """Plays a point as its protocol says: a cooperative story fails at its first settle,
    before its fault; an eager one holds."""

    def __init__(self) -> None:
        self.played: list[FaultPoint] = []

    def play(self, point: FaultPoint, _fits: object) -> PointRun:
        self.played.append(point)
        events = story(point, "librdkafka", "range")
        assert not isinstance(events, str)
        early = fault_number(events) - 1 if point.protocol == "cooperative" else None
        return _played(point, early)


def test_a_violation_before_the_fault_event_is_the_storys_not_the_faults() -> None:
    point = fault_points(SCOPE)[0]
    events = story(point, "librdkafka", "range")
    assert not isinstance(events, str)
    armed = fault_number(events)
    assert type(events[armed - 1]).__name__ == "CoordinatorError"
    assert before_fault(_played(point, armed - 1))
    assert not before_fault(_played(point, armed + 1))
    assert not before_fault(_played(point, None))


def test_a_step_whose_story_fails_before_its_fault_leaves_its_other_points_not_reached() -> None:
    points = fault_points(SCOPE)
    tally, prefixes, fake = FaultTally(len(points)), BeforeFault(), FakeRun()
    play_points(fake, prefixes.points(points, tally), 1,  # type: ignore[arg-type]
                lambda _p: True, lambda _s: True, prefixes.heard)
    cooperative = [p for p in points if p.protocol == "cooperative"]
    eager = [p for p in points if p.protocol == "eager"]
    assert [p for p in fake.played if p.protocol == "cooperative"] == cooperative[:BEFORE_FAULT]
    assert [p for p in fake.played if p.protocol == "eager"] == eager
    assert list(tally.unreached) == [p.name for p in cooperative[BEFORE_FAULT:]]
    why = tally.unreached[cooperative[-1].name]
    assert "failed before its fault on 3 points, none reaching it" in why
    assert cooperative[0].name in why and "I11: not settled" in why
    tally.played = fake.played
    assert coverage(tally).endswith(
        f"({len(tally.not_applicable)} not applicable; {len(cooperative) - BEFORE_FAULT} not "
        "reached: their story fails before its fault)")


def test_a_step_whose_story_once_reached_its_fault_keeps_every_point() -> None:
    """A story that fails before its fault only now and then (a loaded machine) still plays
    every point once one of them reached its fault."""
    points = [p for p in fault_points(SCOPE) if p.protocol == "cooperative"]
    prefixes = BeforeFault()
    prefixes.heard(_played(points[0], None))
    for point in points[1:BEFORE_FAULT + 2]:
        events = story(point, "librdkafka", "range")
        assert not isinstance(events, str)
        prefixes.heard(_played(point, fault_number(events) - 1))
    assert all(prefixes.why_not(p) == "" for p in points)
