"""The broker's fault kinds past fail rules, each applied to the member it names and to no
other: the coordinator that moves to another node (NOT_COORDINATOR from the old node,
FindCoordinator naming the new one), and the connection closed instead of an answer.

Members here are bare protocol clients, so every step is deterministic.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402

from helpers.broker_wire import RawClient  # noqa: E402

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


def test_a_move_on_a_broker_of_one_node_is_refused(broker: Broker) -> None:
    with pytest.raises(ValueError, match="to one of the broker's 1 nodes"):
        broker.move_coordinator("b", "Heartbeat")
