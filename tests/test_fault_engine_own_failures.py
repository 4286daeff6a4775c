"""A story that fails on its own: the fault engine counts a point's violation as its story's
when it came before the fault, or when the story with no fault breaks the same invariant
(played once a point failed after its fault); once `OWN_FAILURES` points of one step and
protocol failed so, at least `OWN_SHARE` of those played, it leaves that step and
protocol's other points not reached (a client whose cooperative leave stories stall waited out
I11's bound on each point); the full scope takes the steps and protocols in turn."""

from __future__ import annotations

from groupcheck.engines.battery.faults import FaultTally, coverage, in_turn
from groupcheck.engines.faults.concurrent import PointRun, play_points
from groupcheck.engines.faults.own import ALONE_PLAYS, OWN_FAILURES, OwnFailures, before_fault
from groupcheck.engines.faults.points import FaultPoint, FaultScope, fault_points, no_fault
from groupcheck.engines.faults.stories import FAULT_EVENTS, fault_number, story
from groupcheck.model.events import DomainEvent
from groupcheck.model.replay import Outcome

#: the leave step's points under both protocols, on every API, errors only
SCOPE = FaultScope(steps=("leave",), kinds=("error",))


def _events(point: FaultPoint) -> list[DomainEvent]:
    events = story(point, "librdkafka", "range")
    assert not isinstance(events, str)
    return events


def _armed(point: FaultPoint) -> int:
    armed = fault_number(_events(point))
    assert armed is not None
    return armed


def _played(point: FaultPoint, violated_at: int | None,
            violation: str = "I11: not settled") -> PointRun:
    """``point`` played, its story's first violation at event ``violated_at`` (None: held)."""
    events = _events(point)
    if violated_at is None:
        return PointRun(point, events, Outcome([], events_run=len(events)))
    return PointRun(point, events, Outcome([violation], events_run=violated_at))


class FakeRun:
    """Plays a point as its protocol says: a cooperative story fails at its first settle,
    before its fault; an eager one holds."""

    def __init__(self) -> None:
        self.played: list[FaultPoint] = []

    def play(self, point: FaultPoint, _fits: object) -> PointRun:
        self.played.append(point)
        early = _armed(point) - 1 if point.protocol == "cooperative" else None
        return _played(point, early)


def test_a_violation_before_the_fault_event_is_the_storys_not_the_faults() -> None:
    point = fault_points(SCOPE)[0]
    armed = _armed(point)
    assert type(_events(point)[armed - 1]).__name__ == "CoordinatorError"
    assert before_fault(_played(point, armed - 1))
    assert not before_fault(_played(point, armed + 1))
    assert not before_fault(_played(point, None))


def test_a_step_whose_story_fails_before_its_fault_leaves_its_other_points_not_reached() -> None:
    points = fault_points(SCOPE)
    tally, own, fake = FaultTally(len(points)), OwnFailures(), FakeRun()
    play_points(fake, own.points(points, tally.unreached), 1,  # type: ignore[arg-type]
                lambda _p: True, lambda _s: True, own.hear)
    cooperative = [p for p in points if p.protocol == "cooperative"]
    eager = [p for p in points if p.protocol == "eager"]
    assert [p for p in fake.played if p.protocol == "cooperative"] == cooperative[:OWN_FAILURES]
    assert [p for p in fake.played if p.protocol == "eager"] == eager
    assert list(tally.unreached) == [p.name for p in cooperative[OWN_FAILURES:]]
    why = tally.unreached[cooperative[-1].name]
    assert "failed before its fault, on 3 of the 3 points played" in why
    assert cooperative[0].name in why and "I11: not settled" in why
    tally.played = fake.played
    assert coverage(tally).endswith(
        f"({len(tally.not_applicable)} not applicable; {len(cooperative) - OWN_FAILURES} not "
        "reached: their story fails on its own)")


def _heard(own: OwnFailures, points: list[FaultPoint], pattern: str) -> None:
    """``points`` heard in order, ``pattern`` saying of each: R reached its fault, F failed
    before it."""
    for point, mark in zip(points, pattern, strict=False):
        own.hear(_played(point, None if mark == "R" else _armed(point) - 1))


def test_a_story_that_fails_before_its_fault_now_and_then_keeps_every_point() -> None:
    """Half the plays reaching the fault (a loaded machine, an intermittent hang) is below
    the share: every point stays."""
    points = [p for p in fault_points(SCOPE) if p.protocol == "cooperative"]
    own = OwnFailures()
    _heard(own, points, "RFRFRFRF")
    assert all(own.why_not(p) == "" for p in points)


def test_a_story_that_mostly_fails_before_its_fault_is_cut_though_one_reached_it() -> None:
    """Three of every four plays failing before the fault is the share: one play that
    reached it does not keep the others."""
    points = [p for p in fault_points(SCOPE) if p.protocol == "cooperative"]
    own = OwnFailures()
    _heard(own, points, "RFF")
    assert own.why_not(points[-1]) == ""
    _heard(own, points[3:], "F")
    assert "failed before its fault, on 3 of the 4 points played" in own.why_not(points[-1])


class AfterFaultRun:
    """Plays every point as failing after its fault (at its story's end, with I11); the
    story with no fault fails with ``alone`` ("": it holds) from its ``failing_from``-th
    play on."""

    def __init__(self, alone: str, failing_from: int = 1) -> None:
        self.alone, self.failing_from, self.played = alone, failing_from, list[FaultPoint]()

    def play(self, point: FaultPoint, _fits: object) -> PointRun:
        self.played.append(point)
        end = len(_events(point))
        if point.kind == "none":
            fails = self.alone and self.played.count(point) >= self.failing_from
            return _played(point, end if fails else None, self.alone)
        return _played(point, end)


def _play_after_fault(alone: str, failing_from: int = 1
                      ) -> tuple[list[FaultPoint], FaultTally, AfterFaultRun]:
    points = [p for p in fault_points(SCOPE) if p.protocol == "cooperative"]
    tally, own = FaultTally(len(points)), OwnFailures()
    fake = AfterFaultRun(alone, failing_from)
    play_points(fake, own.points(points, tally.unreached), 1,  # type: ignore[arg-type]
                lambda _p: True, lambda _s: True, own.hear)
    return points, tally, fake


def test_the_story_with_no_fault_is_played_after_a_points_failure_and_has_no_fault() -> None:
    alone = no_fault("leave", "cooperative")
    assert alone.name == "leave/cooperative/no fault"
    events = _events(alone)
    assert fault_number(events) is None and not any(isinstance(e, FAULT_EVENTS) for e in events)
    assert len(events) == len(_events(fault_points(SCOPE)[0])) - 1
    points, _, fake = _play_after_fault("")
    assert fake.played[:3] == [points[0], alone, points[1]]


def test_points_failing_as_their_story_does_with_no_fault_leave_the_others_not_reached(
        ) -> None:
    """The story with no fault breaks I11 too: the points' I11 is the story's, and after
    three of them the step and protocol's other points are not reached."""
    points, tally, fake = _play_after_fault("I11: not settled after 31500 ms")
    assert [p for p in fake.played if p.kind != "none"] == points[:OWN_FAILURES]
    assert list(tally.unreached) == [p.name for p in points[OWN_FAILURES:]]
    why = tally.unreached[points[-1].name]
    assert ("failed before its fault or after it, as it fails with no fault (I11: not "
            "settled after 31500 ms), on 3 of the 3 points played") in why


def test_points_failing_after_their_fault_where_the_story_holds_alone_are_all_played(
        ) -> None:
    """The story with no fault is played again after each more failure, at most
    `ALONE_PLAYS` times; holding each time, it leaves every point played."""
    points, tally, fake = _play_after_fault("")
    assert [p for p in fake.played if p.kind != "none"] == points and not tally.unreached
    alone = no_fault("leave", "cooperative")
    assert len(points) > ALONE_PLAYS
    assert [i for i, p in enumerate(fake.played) if p == alone] == [
        1 + 2 * n for n in range(ALONE_PLAYS)]


def test_a_story_that_fails_on_its_own_only_on_its_second_play_still_cuts_its_points(
        ) -> None:
    """Finding 22's loop shows on about two plays in three: the story with no fault held on
    its first play, broke I11 on its second (after the next point's failure), and the points
    failing so are the story's."""
    points, tally, fake = _play_after_fault("I11: not settled", failing_from=2)
    alone = no_fault("leave", "cooperative")
    assert fake.played.count(alone) == 2
    played = [p for p in fake.played if p.kind != "none"]
    assert played == points[:OWN_FAILURES] and list(tally.unreached) == [
        p.name for p in points[OWN_FAILURES:]]


def test_a_story_failing_alone_on_another_invariant_still_cuts_its_points() -> None:
    """One cause shows as either of two invariants (finding 22's loop: I1 or I11): a story
    that fails with no fault cannot tell any of its points' failures from its own."""
    points, tally, _ = _play_after_fault("I1: t0-0 owned by two members")
    assert list(tally.unreached) == [p.name for p in points[OWN_FAILURES:]]


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
