"""The fault engine's points side by side (`engines.faults.concurrent`): on one broker and one
driver pool, each point on a group of its own, a point's verdict is the one it gets alone;
a short slice of the scope, played several at once on librdkafka and on one Java release,
gives every point a verdict and counts them in the coverage line; one JVM hosts every
point's Java consumers for the run; a point still under way when its engine's time is over
is abandoned, not waited for."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the default wire backend) needs kio")

from groupcheck.engines.battery.faults import play_scope  # noqa: E402
from groupcheck.engines.battery.results import invariant_id  # noqa: E402
from groupcheck.engines.faults.concurrent import (  # noqa: E402
    Abandoned,
    PointRun,
    SharedRun,
    delayed,
    play_points,
)
from groupcheck.engines.faults.points import FaultScope, fault_points, no_fault  # noqa: E402
from groupcheck.engines.faults.stories import PointNames, story  # noqa: E402
from groupcheck.model.replay import Outcome  # noqa: E402
from groupcheck.targets.wire.clients import ClientInfo  # noqa: E402
from groupcheck.targets.wire.driver_pool import EventSink  # noqa: E402
from groupcheck.targets.wire.driver_process import DriverProcess  # noqa: E402

from helpers.environment import missing, resolve  # noqa: E402
from helpers.kafka_releases import repo_releases  # noqa: E402

#: six points of every step and both protocols, errors that make a member rejoin
MIXED = ("first_join/eager/SyncGroup/REBALANCE_IN_PROGRESS",
         "second_join/eager/Heartbeat/REBALANCE_IN_PROGRESS",
         "leave/eager/JoinGroup/UNKNOWN_MEMBER_ID",
         "crash/eager/Heartbeat/UNKNOWN_MEMBER_ID",
         "second_join/cooperative/SyncGroup/ILLEGAL_GENERATION",
         "leave/cooperative/LeaveGroup/UNKNOWN_MEMBER_ID")
#: the default run's slice: six points, a FindCoordinator error at three steps
SLICE = FaultScope(steps=("second_join", "leave", "crash"), protocols=("eager",),
                   apis=("FindCoordinator",), kinds=("error",))


def _verdicts(target: str, workers: int) -> dict[str, tuple[str, ...] | str]:
    """Each MIXED point's verdict (its violations' invariants, or why not applicable)."""
    points = [p for p in fault_points() if p.name in MIXED]
    runs: list[PointRun] = []
    shared = SharedRun(resolve(target))
    try:
        play_points(shared, points, workers, lambda _p: True, lambda _s: True, runs.append)
    finally:
        shared.close()
    return {r.point.name: tuple(sorted({invariant_id(v) for v in r.outcome.violations}))
            if isinstance(r.outcome, Outcome) else str(r.outcome) for r in runs}


def test_each_point_is_named_apart_from_every_other_point() -> None:
    names = [PointNames.of(n) for n in range(len(fault_points()))]
    members = [m for n in names for m in n.members]
    assert len(set(members)) == len(members) == 3 * len(names)
    assert len({n.topic for n in names}) == len(names)


@pytest.mark.heavy  # twelve points played twice; a slice side by side runs by default
@pytest.mark.wire
def test_the_same_points_alone_and_side_by_side_get_the_same_verdicts() -> None:
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    alone = _verdicts("wire:librdkafka:range", 1)
    side_by_side = _verdicts("wire:librdkafka:range", len(MIXED))
    assert sorted(alone) == sorted(MIXED)
    assert side_by_side == alone


@pytest.mark.wire
def test_a_fault_the_broker_refuses_makes_its_own_point_not_applicable_and_no_other(
        tmp_path: Path) -> None:
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    refused = "first_join/eager/SyncGroup/INCONSISTENT_GROUP_PROTOCOL"  # from v5 on
    scope = FaultScope(steps=("first_join",), protocols=("eager",), apis=("SyncGroup",),
                       kinds=("error",))
    _, tally = play_scope(resolve("wire:librdkafka:range"), 60, str(tmp_path), scope=scope,
                          workers=4, every_finding=True)
    assert list(tally.not_applicable) == [refused]
    assert "refused" in tally.not_applicable[refused]
    assert len(tally.played) == len(fault_points(scope)) - 1


def _slice(target: str, tmp_path: Path) -> None:
    result, tally = play_scope(resolve(target), 60, str(tmp_path), scope=SLICE,
                               workers=len(fault_points(SLICE)), every_finding=True)
    points = fault_points(SLICE)
    assert tally.played == [p for p in points if p.name not in tally.not_applicable], \
        "a point of the slice got no verdict, or the tally left the scope's order"
    assert len(tally.played) + len(tally.not_applicable) == len(points) == 6
    assert result.runs == len(tally.played)
    assert result.note == (f"{len(tally.played)} of {len(points)} fault points played "
                           f"({len(tally.not_applicable)} not applicable)")
    assert result.seconds <= 40


@pytest.mark.wire
def test_a_slice_played_side_by_side_on_librdkafka_gives_every_point_a_verdict(
        tmp_path: Path) -> None:
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    _slice("wire:librdkafka:range", tmp_path)


@pytest.mark.wire
def test_one_jvm_hosts_every_points_java_consumers_for_the_whole_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Six points at once on a Java release: every point's members but a crashed one are
    placed on the run's one JVM (a crashed member's JVM is its point's own: its crash is a
    kill), and each point gets a verdict."""
    release = repo_releases()[-1]
    if missing("java"):
        pytest.skip(missing("java"))
    points = [p for p in fault_points() if p.name in MIXED]
    runs: list[PointRun] = []
    shared = SharedRun(resolve(f"wire:java@{release}:range"))
    hosts: list[tuple[str, DriverProcess]] = []
    place = shared.pool.place

    def placed(info: ClientInfo, classpath: str, member: str, sink: EventSink
               ) -> DriverProcess:
        hosts.append((member, place(info, classpath, member, sink)))
        return hosts[-1][1]
    monkeypatch.setattr(shared.pool, "place", placed)
    try:
        play_points(shared, points, len(points), lambda _p: True, lambda _s: True, runs.append)
    finally:
        shared.close()
    assert len(hosts) >= 2 * len(points) and len({id(d) for _, d in hosts}) == 1
    assert "java" in hosts[0][1].label
    assert sorted(r.point.name for r in runs) == sorted(MIXED)
    assert all(isinstance(r.outcome, Outcome) for r in runs), [r.outcome for r in runs]


@pytest.mark.wire
def test_a_slice_played_side_by_side_on_a_java_release_gives_every_point_a_verdict(
        tmp_path: Path) -> None:
    release = repo_releases()[-1]
    if missing("java"):
        pytest.skip(missing("java"))
    _slice(f"wire:java@{release}:range", tmp_path)


def test_each_play_of_a_story_with_no_fault_gets_a_group_and_names_of_its_own() -> None:
    """A story with no fault may be played more than once in a run: each play is numbered
    apart from every point and every other play (its group id, members and topic), while a
    point keeps its own number."""
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    shared = SharedRun(resolve("wire:librdkafka:range"))
    try:
        point, alone = fault_points()[5], no_fault("leave", "cooperative")
        assert shared.number(point) == shared.number(point) == 5
        plays = [shared.number(alone) for _ in range(3)]
        assert len(set(plays)) == 3 and min(plays) >= len(fault_points())
    finally:
        shared.close()


@pytest.mark.wire
def test_a_point_under_way_when_its_engine_is_overdue_is_abandoned_not_waited_for() -> None:
    """A Heartbeat answer held for three seconds keeps its point under way that long; told
    at 0.3 s that the engine's time is over, the run stops the point at its group's next
    wait and hands it on as not reached (a settle's whole bound is not waited out)."""
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    (point,) = fault_points(FaultScope(steps=("first_join",), protocols=("eager",),
                                       apis=("Heartbeat",), kinds=("delay",)))
    events = story(point, "librdkafka", "range")
    assert not isinstance(events, str) and delayed(events) == 3.0
    runs: list[PointRun] = []
    shared = SharedRun(resolve("wire:librdkafka:range"))
    began = time.perf_counter()
    try:
        play_points(shared, [point], 1, lambda _p: True, lambda _s: True, runs.append,
                    overdue=lambda: time.perf_counter() > began + 0.3)
        took = time.perf_counter() - began
        group = shared.group(point, shared.number(point))  # a group made after it is over
        with pytest.raises(Abandoned):
            group.check_harness()
        group.close()  # closing an abandoned group raises nothing
    finally:
        shared.close()
    assert [(r.point, r.outcome) for r in runs] == [(point, None)]
    assert took < 1.5, f"the point was waited for ({took:.1f} s)"
