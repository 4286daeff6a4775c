"""A connection closed before its answer and a coordinator moved to another node, as events:
groupcheck's broker backend aims each at the member it names (a move needs a broker of two
nodes, an opt-in), a target or backend that cannot play them (the mock) refuses them before
anything happens, a replay file holds them, and a fault point's short story of each kind plays
on real librdkafka consumers, who reconnect or find the new coordinator while the group settles
and every invariant holds.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("kio")

from groupcheck.engines.faults.points import FaultPoint  # noqa: E402
from groupcheck.engines.faults.stories import story  # noqa: E402
from groupcheck.model.event_registry import read_event, write_event  # noqa: E402
from groupcheck.model.events import apply_event  # noqa: E402
from groupcheck.model.group_events import ConnectionClosed, CoordinatorMoved  # noqa: E402
from groupcheck.model.spec import ReferenceModel  # noqa: E402
from groupcheck.targets.registry import group_target_factory  # noqa: E402
from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend  # noqa: E402
from groupcheck.targets.wire.wire_group import SESSION_MS, WireGroup  # noqa: E402

from helpers.broker_wire import RawClient  # noqa: E402
from helpers.environment import missing, on_broker, resolve  # noqa: E402

GROUP = "g"
NOT_COORDINATOR, UNKNOWN_MEMBER_ID = 16, 25


def _heartbeat(client: RawClient) -> int:
    return int(client.heartbeat(GROUP, "m", -1).error_code)


@pytest.fixture
def backend() -> Iterator[GroupcheckBackend]:
    made = GroupcheckBackend(frozenset({"librdkafka"}), SESSION_MS, nodes=2)
    try:
        yield made
    finally:
        made.close()


def test_the_backend_closes_the_named_members_connection_and_no_other(
        backend: GroupcheckBackend) -> None:
    backend.close_before_answer("heartbeat", "b")
    with RawClient(backend.bootstrap, "a") as a, RawClient(backend.bootstrap, "b") as b:
        assert _heartbeat(a) == UNKNOWN_MEMBER_ID
        with pytest.raises(ConnectionError, match="closed the connection"):
            _heartbeat(b)
        assert _heartbeat(a) == UNKNOWN_MEMBER_ID  # a's connection lives on
    assert [e.who.client_id for e in backend.broker.steered()] == ["b"]


def test_the_backend_of_two_nodes_moves_the_coordinator_on_the_named_members_request(
        backend: GroupcheckBackend) -> None:
    backend.move_coordinator("Heartbeat", "b")
    with RawClient(backend.bootstrap, "a") as a, RawClient(backend.bootstrap, "b") as b:
        assert _heartbeat(a) == UNKNOWN_MEMBER_ID and backend.broker.coordinator_of(GROUP) == 0
        assert _heartbeat(b) == NOT_COORDINATOR
    assert backend.broker.coordinator_of(GROUP) == 1


def test_a_backend_of_one_node_by_default_refuses_a_move() -> None:
    backend = GroupcheckBackend(frozenset({"librdkafka"}), SESSION_MS)
    try:
        with pytest.raises(ValueError, match="broker's 1 nodes"):
            backend.move_coordinator("Heartbeat", "b")
    finally:
        backend.close()


@pytest.mark.parametrize("event", [ConnectionClosed("c1", "JoinGroup"),
                                   CoordinatorMoved("c2", "Heartbeat")])
def test_a_replay_file_holds_the_event_and_a_target_that_cannot_play_it_refuses(
        event: ConnectionClosed | CoordinatorMoved) -> None:
    written = write_event(event)
    assert written == {"op": event.op, "member": event.member, "api": event.api}
    assert read_event(written) == event
    target = group_target_factory("builtin:range")()
    with pytest.raises(ValueError, match="builtin:range cannot"):
        event.apply(target, ReferenceModel())


@pytest.mark.parametrize("event", [ConnectionClosed("c1", "Heartbeat"),
                                   CoordinatorMoved("c1", "Heartbeat")])
def test_a_wire_group_on_the_mock_refuses_the_event_as_the_mock_cannot(
        event: ConnectionClosed | CoordinatorMoved) -> None:
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    target = resolve("librdkafka:range", settings=on_broker("mock"))
    assert target.group is not None
    group = target.group()
    try:
        with pytest.raises(ValueError, match="mock: the mock cannot"):
            event.apply(group, ReferenceModel())
    finally:
        group.close()


@pytest.mark.wire
@pytest.mark.parametrize("kind", ["close", "move"])
def test_a_fault_points_story_of_each_kind_settles_on_librdkafka_with_every_invariant(
        kind: str, backend: GroupcheckBackend) -> None:
    """c1 is in a settled group; the fault hits its JoinGroup when c2 joins: it reconnects
    and asks again (close), or is told NOT_COORDINATOR and finds node 1 (move)."""
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    point = FaultPoint("second_join", "eager", "JoinGroup", kind)  # type: ignore[arg-type]
    events = story(point, "librdkafka", "range")
    assert not isinstance(events, str)
    group = WireGroup("wire:librdkafka:range", ("librdkafka",), "range", backend=backend)
    model, found = ReferenceModel(), list[str]()
    try:
        for event in events:
            found += apply_event(event, group, model)
    finally:
        group.close()
    assert found == []
    steered = backend.broker.steered()
    assert [(e.who.client_id, e.api) for e in steered] == [("c1", "JoinGroup")]
    later = [e for e in backend.broker.exchanges() if e.seq > steered[0].seq]
    assert any(e.who.client_id == "c1" and e.api == "JoinGroup" and e.error_code == 0
               for e in later)  # c1 asked again and was answered
    if kind == "move":
        assert backend.broker.coordinator_of("groupcheck") == 1
        assert {e.who.client_id for e in later if e.api == "FindCoordinator"} >= {"c1", "c2"}
    rounds = [r for r in backend.rounds() if r.complete]
    assert sorted(rounds[-1].names.values()) == ["c1", "c2"]
