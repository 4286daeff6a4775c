"""A story that fails before its fault: the fault engine counts such a point's violation as
its story's, and once `BEFORE_FAULT` points of one step and protocol failed so, at least
`BEFORE_FAULT_SHARE` of those played, it leaves that step and protocol's other points not
reached (a client whose cooperative leave stories stall at their first settle waited out
I11's bound on each point); the full scope takes the steps and protocols in turn."""

from __future__ import annotations

from groupcheck.engines.battery.faults import (
    BEFORE_FAULT,
    BeforeFault,
    FaultTally,
    before_fault,
    coverage,
    in_turn,
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
    assert "failed before its fault on 3 of the 3 points played" in why
    assert cooperative[0].name in why and "I11: not settled" in why
    tally.played = fake.played
    assert coverage(tally).endswith(
        f"({len(tally.not_applicable)} not applicable; {len(cooperative) - BEFORE_FAULT} not "
        "reached: their story fails before its fault)")


def _heard(prefixes: BeforeFault, points: list[FaultPoint], pattern: str) -> None:
    """``points`` heard in order, ``pattern`` saying of each: R reached its fault, F failed
    before it."""
    for point, mark in zip(points, pattern, strict=False):
        events = story(point, "librdkafka", "range")
        assert not isinstance(events, str)
        prefixes.heard(_played(point, None if mark == "R" else fault_number(events) - 1))


def test_a_story_that_fails_before_its_fault_now_and_then_keeps_every_point() -> None:
    """Half the plays reaching the fault (a loaded machine, an intermittent hang) is below
    the share: every point stays."""
    points = [p for p in fault_points(SCOPE) if p.protocol == "cooperative"]
    prefixes = BeforeFault()
    _heard(prefixes, points, "RFRFRFRF")
    assert all(prefixes.why_not(p) == "" for p in points)


def test_a_story_that_mostly_fails_before_its_fault_is_cut_though_one_reached_it() -> None:
    """Three of every four plays failing before the fault is the share: one play that
    reached it does not keep the others."""
    points = [p for p in fault_points(SCOPE) if p.protocol == "cooperative"]
    prefixes = BeforeFault()
    _heard(prefixes, points, "RFF")
    assert prefixes.why_not(points[-1]) == ""
    _heard(prefixes, points[3:], "F")
    assert "failed before its fault on 3 of the 4 points played" in prefixes.why_not(points[-1])


def test_the_full_scope_takes_each_step_and_protocol_in_turn_longest_late_answers_first(
        ) -> None:
    points = fault_points(FaultScope(steps=("first_join", "leave"), kinds=("error", "delay")))
    late = {p: (5.0 if p.kind == "delay" else 0.0) for p in points}
    ordered = in_turn(points, late.__getitem__)
    assert sorted(ordered, key=points.index) == points
    delays = [p for p in ordered if p.kind == "delay"]
    assert ordered[:len(delays)] == delays
    errors = ordered[len(delays):]
    keys = sorted({(p.step, p.protocol) for p in points})
    first = [(p.step, p.protocol) for p in errors[:len(keys)]]
    assert sorted(first) == keys  # one of each before any second
    for key in keys:
        mine = [p for p in errors if (p.step, p.protocol) == key]
        assert mine == [p for p in points if (p.step, p.protocol) == key and p.kind == "error"]
