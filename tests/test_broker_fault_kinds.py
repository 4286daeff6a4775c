"""The broker's fault kinds past fail rules, each applied to the member it names and to no
other: the coordinator that moves to another node (NOT_COORDINATOR from the old node,
FindCoordinator naming the new one), the connection closed instead of an answer, and an
answer delayed past the member's request timeout (from its driver's configuration).

Members here are bare protocol clients, so every step is deterministic.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.targets.wire.timeouts import (  # noqa: E402
    past_request_timeout,
    request_timeout_ms,
)

from helpers.broker_wire import RawClient, told  # noqa: E402

GROUP, TOPIC = "g", "t"
NOT_COORDINATOR, UNKNOWN_MEMBER_ID = 16, 25


def _heartbeat(client: RawClient) -> int:
    return int(client.call(12, 4, {"group_id": GROUP, "generation_id": -1, "member_id": "m",
                                   "group_instance_id": None}).error_code)


def _coordinator(client: RawClient) -> Any:
    return client.call(10, 4, {"key_type": 0, "coordinator_keys": [GROUP]}).coordinators[0]


@pytest.mark.broker_config(nodes=2)
def test_every_node_is_in_metadata_and_node_0_coordinates_until_moved(broker: Broker) -> None:
    with RawClient(broker.bootstrap, "a") as a:
        brokers = a.call(3, 12, {"topics": [], "allow_auto_topic_creation": False,
                                 "include_topic_authorized_operations": False}).brokers
        assert [f"{b.host}:{b.port}" for b in brokers] == [broker.address(0), broker.address(1)]
        assert int(_coordinator(a).node_id) == 0
    assert broker.coordinator_of(GROUP) == 0


@pytest.mark.broker_config(nodes=2)
def test_a_move_aimed_at_one_member_moves_the_coordinator_on_that_members_request(
        broker: Broker) -> None:
    broker.move_coordinator("b", "Heartbeat")
    with RawClient(broker.bootstrap, "a") as a, RawClient(broker.bootstrap, "b") as b:
        assert _heartbeat(a) == UNKNOWN_MEMBER_ID  # a's request moves nothing
        assert broker.coordinator_of(GROUP) == 0
        assert _heartbeat(b) == NOT_COORDINATOR  # b's moves it: node 0 no longer answers
        assert broker.coordinator_of(GROUP) == 1
        assert _heartbeat(a) == NOT_COORDINATOR  # nor for anyone else
        found = _coordinator(a)
        assert (int(found.node_id), f"{found.host}:{found.port}") == (1, broker.address(1))
    with RawClient(broker.address(1), "a") as moved:
        assert _heartbeat(moved) == UNKNOWN_MEMBER_ID  # the new coordinator answers
    assert [(e.who.client_id, e.steering) for e in broker.steered()] == [
        ("b", "move Heartbeat (coordinator to the next node)")]


@pytest.mark.broker_config(nodes=3)
def test_offsets_follow_the_coordinator_to_the_node_a_move_names(broker: Broker) -> None:
    fetch = {"require_stable": False, "groups": [{"group_id": GROUP, "topics": None}]}
    broker.move_coordinator("a", "FindCoordinator", node=2)
    with RawClient(broker.bootstrap, "a") as a:
        found = _coordinator(a)  # moves, then answers: FindCoordinator names the new node
        assert int(found.node_id) == 2
        assert int(a.call(9, 8, fetch).groups[0].error_code) == NOT_COORDINATOR
    with RawClient(broker.address(1), "a") as other:
        assert int(other.call(9, 8, fetch).groups[0].error_code) == NOT_COORDINATOR
    with RawClient(broker.address(2), "a") as moved:
        assert int(moved.call(9, 8, fetch).groups[0].error_code) == 0


@pytest.mark.broker_config(nodes=2, topics={TOPIC: 4})
def test_a_join_parked_at_the_old_node_is_answered_not_coordinator_and_rejoins_at_the_new(
        broker: Broker) -> None:
    with RawClient(broker.bootstrap, "a") as a, RawClient(broker.bootstrap, "b") as b:
        told(a, TOPIC)
        a_id = a.join(GROUP, [TOPIC]).member_id
        a.send_sync(GROUP, a_id, 1, {a_id: [(TOPIC, p) for p in range(4)]})
        assert int(a.receive().error_code) == 0
        b.send_join(GROUP, "", [TOPIC])
        b_id = b.receive().member_id
        b.send_join(GROUP, b_id, [TOPIC])  # parked until a rejoins
        broker.move_coordinator("a", "Heartbeat")
        assert int(a.heartbeat(GROUP, a_id, 1).error_code) == NOT_COORDINATOR
        with RawClient(broker.address(1), "a") as a1, RawClient(broker.address(1), "b") as b1:
            a1.send_join(GROUP, a_id, [TOPIC])
            joined = a1.receive()
            assert (int(joined.error_code), int(joined.generation_id)) == (0, 2)
            assert int(b.receive().error_code) == NOT_COORDINATOR  # asked of the old node
            b1.send_join(GROUP, b_id, [TOPIC])  # the lost answer, asked again
            again = b1.receive()
            assert (int(again.error_code), int(again.generation_id)) == (0, 2)


def test_a_move_on_a_broker_of_one_node_is_refused(broker: Broker) -> None:
    with pytest.raises(ValueError, match="to one of the broker's 1 nodes"):
        broker.move_coordinator("b", "Heartbeat")
    for node in (-1, 1):
        with pytest.raises(ValueError, match=f"no node {node}: the broker is nodes 0-0"):
            broker.address(node)


def test_a_close_aimed_at_one_member_drops_its_connection_instead_of_the_answer(
        broker: Broker) -> None:
    broker.close_before_answer("b", "Heartbeat")
    with RawClient(broker.bootstrap, "a") as a, RawClient(broker.bootstrap, "b") as b:
        assert _heartbeat(a) == UNKNOWN_MEMBER_ID
        with pytest.raises(ConnectionError, match="closed the connection"):
            _heartbeat(b)
        assert _heartbeat(a) == UNKNOWN_MEMBER_ID  # a's connection lives on
    with RawClient(broker.bootstrap, "b") as again:
        assert _heartbeat(again) == UNKNOWN_MEMBER_ID  # fired once
    closed = broker.steered()
    assert [(e.who.client_id, e.api, e.answered_ms) for e in closed] == [("b", "Heartbeat", None)]
    assert closed[0].error_code == UNKNOWN_MEMBER_ID  # the coordinator answered; it was lost
    assert any("Heartbeat answer to 'b' withheld" in line for line in broker.notes())


@pytest.mark.parametrize(("client", "config", "api", "expected_ms"), [
    ("kafka-python", {}, "Heartbeat", 30_000),
    ("kafka-python", {"request_timeout_ms": 4000}, "OffsetCommit", 4000),
    ("kafka-python", {"request_timeout_ms": 4000, "max_poll_interval_ms": 3000}, "JoinGroup",
     8000),
    ("librdkafka", {"request_timeout_ms": 4000}, "OffsetFetch", 4000),
    ("librdkafka", {"request_timeout_ms": 4000, "max_poll_interval_ms": 3000}, "JoinGroup",
     6000),
    ("librdkafka", {"session_timeout_ms": 2000}, "SyncGroup", 5000),
    ("librdkafka", {"session_timeout_ms": 2000}, "Heartbeat", 2000),
    ("java", {}, "Heartbeat", 30_000),
    ("aiokafka", {}, "JoinGroup", 40_000),
    ("aiokafka", {"request_timeout_ms": 4000, "max_poll_interval_ms": 3000}, "JoinGroup", 4000),
    ("aiokafka", {"request_timeout_ms": 4000, "session_timeout_ms": 2000}, "SyncGroup", 4000),
    ("java@3.4.0", {"request_timeout_ms": 4000}, "OffsetCommit", 4000),
    ("java@2.8.0", {"request_timeout_ms": 4000, "max_poll_interval_ms": 3000}, "JoinGroup",
     8000),
    ("java", {"request_timeout_ms": 10_000, "max_poll_interval_ms": 3000}, "JoinGroup",
     10_000),
    ("kafkajs", {}, "SyncGroup", 30_000),
    ("kafkajs@2.2.4", {"request_timeout_ms": 4000, "max_poll_interval_ms": 3000}, "JoinGroup",
     8000),
])
def test_a_members_request_timeout_comes_from_its_driver_config(
        client: str, config: dict[str, int], api: str, expected_ms: int) -> None:
    assert request_timeout_ms(client, config, api) == expected_ms
    assert past_request_timeout(client, config, api, margin_s=0.5) == expected_ms / 1000 + 0.5


def test_an_unmodelled_clients_request_timeout_is_refused() -> None:
    for client in ("kafka-python@2.0.2", "aiokafka@0.10.0"):
        with pytest.raises(ValueError, match=f"{client!r} are not modelled"):
            request_timeout_ms(client, {}, "Heartbeat")
    with pytest.raises(ValueError, match="KafkaJS 1.16.0 enforces no request timeout"):
        request_timeout_ms("kafkajs@1.16.0", {}, "Heartbeat")


def test_a_delay_past_the_request_timeout_outlasts_the_named_member_only(
        broker: Broker) -> None:
    config = {"request_timeout_ms": 400}
    seconds = past_request_timeout("kafka-python", config, "Heartbeat", margin_s=0.3)
    broker.delay("b", "Heartbeat", seconds)
    timeout = config["request_timeout_ms"] / 1000  # the bare client waits that long, too
    with RawClient(broker.bootstrap, "a", timeout) as a, \
            RawClient(broker.bootstrap, "b", timeout) as b:
        assert _heartbeat(a) == UNKNOWN_MEMBER_ID
        with pytest.raises(TimeoutError):
            _heartbeat(b)
    delayed = broker.steered()
    assert [(e.who.client_id, e.steering) for e in delayed] == [
        ("b", f"delay Heartbeat ({seconds:g}s)")]
