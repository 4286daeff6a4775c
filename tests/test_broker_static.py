"""Static membership (KIP-345) on groupcheck's broker, with bare protocol clients: a static
member's first join, a restart within the session timeout (no rebalance, the assignment
back), the old member id fenced, a static leader's restart (KIP-814's skip_assignment), a
changed subscription, a leave by instance id and a session that ends.

Each test forms the same group: a (instance ``ia``, the leader) and b (instance ``ib``) in
generation 2, a owning t-0 and t-1, b owning t-2 and t-3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.impl.consumer_protocol import decode_assignment  # noqa: E402

from helpers.broker_wire import RawClient, told  # noqa: E402

GROUP, TOPIC = "static", "t"
UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID = 25, 27, 82
pytestmark = pytest.mark.broker_config(topics={TOPIC: 4, "u": 2})


@dataclass
class StaticPair:
    a: RawClient
    b: RawClient
    a_id: str
    b_id: str


def _synced(client: RawClient, member_id: str, instance: str, generation: int,
            assignments: dict[str, list[tuple[str, int]]] | None = None) -> list[tuple[str, int]]:
    client.send_sync(GROUP, member_id, generation, assignments, instance=instance)
    answer = client.receive()
    assert answer.error_code == 0, answer
    return sorted(decode_assignment(bytes(answer.assignment)).to_api().partitions)


def _static_pair(bootstrap: str) -> StaticPair:
    a, b = RawClient(bootstrap, "a"), RawClient(bootstrap, "b")
    told(a, TOPIC)
    a.send_join(GROUP, "", [TOPIC], instance="ia")
    first = a.receive()
    a_id = first.member_id
    _synced(a, a_id, "ia", first.generation_id, {a_id: [(TOPIC, p) for p in range(4)]})
    b.send_join(GROUP, "", [TOPIC], instance="ib")
    assert a.heartbeat(GROUP, a_id, 1, "ia").error_code == REBALANCE_IN_PROGRESS
    a.send_join(GROUP, a_id, [TOPIC], instance="ia")
    joined_a, joined_b = a.receive(), b.receive()
    assert (joined_a.generation_id, joined_b.generation_id) == (2, 2)
    b_id = joined_b.member_id
    b.send_sync(GROUP, b_id, 2, instance="ib")
    assert _synced(a, a_id, "ia", 2, {a_id: [(TOPIC, 0), (TOPIC, 1)],
                                      b_id: [(TOPIC, 2), (TOPIC, 3)]}) == [(TOPIC, 0), (TOPIC, 1)]
    assert b.receive().error_code == 0
    return StaticPair(a, b, a_id, b_id)


def _restart(bootstrap: str, instance: str, topics: list[str] | None = None) -> tuple[
        RawClient, Any]:
    """A new consumer with the instance id, no member id: a restarted static member."""
    client = RawClient(bootstrap, f"{instance}-again")
    client.send_join(GROUP, "", topics or [TOPIC], instance=instance)
    return client, client.receive()


def test_a_static_member_is_given_its_member_id_without_member_id_required(
        broker: Broker) -> None:
    a = RawClient(broker.bootstrap, "a")
    a.send_join(GROUP, "", [TOPIC], instance="ia")
    first = a.receive()
    assert first.error_code == 0 and first.generation_id == 1
    assert first.member_id.startswith("ia-")


def test_a_static_restart_within_the_session_timeout_keeps_generation_and_assignment(
        broker: Broker) -> None:
    p = _static_pair(broker.bootstrap)
    again, joined = _restart(broker.bootstrap, "ib")
    assert joined.error_code == 0 and joined.generation_id == 2  # no rebalance
    assert joined.member_id != p.b_id and joined.leader == p.a_id
    assert _synced(again, joined.member_id, "ib", 2) == [(TOPIC, 2), (TOPIC, 3)]
    assert p.a.heartbeat(GROUP, p.a_id, 2, "ia").error_code == 0
    described = broker.describe_group(GROUP)
    assert described is not None and described.generation == 2
    assert {m.instance_id: m.member_id for m in described.members} == {
        "ia": p.a_id, "ib": joined.member_id}


def test_a_static_restart_takes_the_old_member_ids_place_in_the_generations_round(
        broker: Broker) -> None:
    """The round the wire layer reads names the restarted member's new id, with the old
    id's assignment and the leadership when the leader restarted."""
    p = _static_pair(broker.bootstrap)
    before = broker.rounds(GROUP)[-1]
    _, joined = _restart(broker.bootstrap, "ia")
    after = broker.rounds(GROUP)[-1]
    assert after.generation == before.generation == 2
    assert set(after.subscriptions) == {joined.member_id, p.b_id}
    assert after.leader == joined.member_id
    assert after.assignments[joined.member_id] == before.assignments[p.a_id]
    assert after.client_ids[joined.member_id] == "ia-again" and not after.complete


def test_the_member_id_a_static_restart_replaced_is_fenced(broker: Broker) -> None:
    """Every request of the replaced member id is answered FENCED_INSTANCE_ID, its
    OffsetCommit too (Kafka's validateMember reads the instance id first): a client told
    UNKNOWN_MEMBER_ID would rejoin under the instance id and take it back from the new one."""
    p = _static_pair(broker.bootstrap)
    _restart(broker.bootstrap, "ib")
    assert p.b.heartbeat(GROUP, p.b_id, 2, "ib").error_code == FENCED_INSTANCE_ID
    committed = p.b.commit(GROUP, p.b_id, 2, "ib", TOPIC, 2, 1)  # not UNKNOWN_MEMBER_ID
    assert committed.topics[0].partitions[0].error_code == FENCED_INSTANCE_ID
    p.b.send_join(GROUP, p.b_id, [TOPIC], instance="ib")
    assert p.b.receive().error_code == FENCED_INSTANCE_ID
    left = p.b.leave(GROUP, p.b_id, "ib")
    assert [m.error_code for m in left.members] == [FENCED_INSTANCE_ID]


def test_a_duplicate_instance_fences_the_member_that_joined_first(broker: Broker) -> None:
    """Two consumers started with one instance id: the later join takes it over; the
    earlier one's next request is answered FENCED_INSTANCE_ID, as Kafka answers it."""
    p = _static_pair(broker.bootstrap)
    twin, joined = _restart(broker.bootstrap, "ia")
    assert joined.error_code == 0
    p.a.send_sync(GROUP, p.a_id, 2, instance="ia")
    assert p.a.receive().error_code == FENCED_INSTANCE_ID
    assert twin.heartbeat(GROUP, joined.member_id, 2, "ia").error_code == 0


def test_a_static_leader_restart_gets_the_members_and_skips_the_assignment(
        broker: Broker) -> None:
    """KIP-814: the restarted leader is told the members with skip_assignment, so it
    learns the group without assigning again; the generation stays."""
    p = _static_pair(broker.bootstrap)
    _, joined = _restart(broker.bootstrap, "ia")
    assert (joined.error_code, joined.generation_id) == (0, 2)
    assert joined.leader == joined.member_id and joined.skip_assignment is True
    assert sorted(m.group_instance_id for m in joined.members) == ["ia", "ib"]
    assert p.b.heartbeat(GROUP, p.b_id, 2, "ib").error_code == 0


def test_a_static_member_rejoining_with_a_changed_subscription_starts_a_rebalance(
        broker: Broker) -> None:
    p = _static_pair(broker.bootstrap)
    p.b.send_join(GROUP, p.b_id, [TOPIC, "u"], instance="ib")
    assert p.a.heartbeat(GROUP, p.a_id, 2, "ia").error_code == REBALANCE_IN_PROGRESS
    p.a.send_join(GROUP, p.a_id, [TOPIC], instance="ia")
    assert (p.a.receive().generation_id, p.b.receive().generation_id) == (3, 3)


def test_a_static_member_that_leaves_by_instance_id_starts_a_rebalance(broker: Broker) -> None:
    p = _static_pair(broker.bootstrap)
    left = p.b.leave(GROUP, p.b_id, "ib")
    assert left.error_code == 0 and [m.error_code for m in left.members] == [0]
    assert p.a.heartbeat(GROUP, p.a_id, 2, "ia").error_code == REBALANCE_IN_PROGRESS


def test_a_crashed_static_member_leaves_when_its_session_ends(broker: Broker) -> None:
    """A static member sends no LeaveGroup when it stops: its session ending removes it,
    and its instance id is free for a new member id after that."""
    p = _static_pair(broker.bootstrap)
    broker.drop_session(GROUP, p.b_id)
    assert p.a.heartbeat(GROUP, p.a_id, 2, "ia").error_code == REBALANCE_IN_PROGRESS
    assert p.b.heartbeat(GROUP, p.b_id, 2, "ib").error_code == UNKNOWN_MEMBER_ID
