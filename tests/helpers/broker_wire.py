"""A bare Kafka protocol client for tests of groupcheck's broker: kio entities over a socket.

`RawClient` is the broker's own `KafkaConnection`: it sends one request and reads its answer
(`call`), or sends now and reads later (`send`, `receive`, `pending`), so a test can see
which of two connections is answered first. `join`, `sync`, `heartbeat` build group requests
at the newest served versions, `commit` an OffsetCommit v8. `form_pair` brings two clients
into one generation, its SyncGroups not sent yet (`sync_both` sends them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groupcheck.broker.client import KafkaConnection
from groupcheck.impl.consumer_protocol import encode_assignment, encode_subscription
from groupcheck.impl.types import Assignment, Subscription

JOIN_V, SYNC_V, HEARTBEAT_V, LEAVE_V, COMMIT_V = 9, 5, 4, 5, 8
REBALANCE_IN_PROGRESS = 27


class RawClient(KafkaConnection):
    """`broker.client.KafkaConnection` with the group requests a test sends by hand."""

    # -- the group requests ---------------------------------------------------------------

    def send_join(self, group: str, member_id: str, topics: list[str],
                  protocol: str = "range", session_ms: int = 10_000,
                  instance: str | None = None) -> None:
        """``instance``: a static member's group instance id (KIP-345)."""
        metadata = encode_subscription(Subscription(topics=topics))
        self.send(11, JOIN_V, {"group_id": group, "session_timeout": session_ms,
                               "rebalance_timeout": 30_000, "member_id": member_id,
                               "protocol_type": "consumer", "group_instance_id": instance,
                               "protocols": [{"name": protocol, "metadata": metadata}],
                               "reason": None})

    def join(self, group: str, topics: list[str], **kw: Any) -> Any:
        """KIP-394: the first join gets a member id; join again with it."""
        self.send_join(group, "", topics, **kw)
        first = self.receive()
        assert first.error_code == 79, first
        self.send_join(group, first.member_id, topics, **kw)
        return self.receive()

    def send_sync(self, group: str, member_id: str, generation: int,
                  assignments: dict[str, list[tuple[str, int]]] | None = None,
                  protocol: str = "range", instance: str | None = None) -> None:
        rows = [{"member_id": m, "assignment": encode_assignment(Assignment(parts))}
                for m, parts in (assignments or {}).items()]
        self.send(14, SYNC_V, {"group_id": group, "generation_id": generation,
                               "member_id": member_id, "group_instance_id": instance,
                               "protocol_type": "consumer", "protocol_name": protocol,
                               "assignments": rows})

    def heartbeat(self, group: str, member_id: str, generation: int,
                  instance: str | None = None) -> Any:
        return self.call(12, HEARTBEAT_V, {"group_id": group, "generation_id": generation,
                                           "member_id": member_id, "group_instance_id": instance})

    def commit(self, group: str, member_id: str, generation: int, instance: str | None,
               topic: str, partition: int, offset: int) -> Any:
        """One offset committed with OffsetCommit v8 (its group instance id from v7 on)."""
        return self.call(8, COMMIT_V, {
            "group_id": group, "generation_id_or_member_epoch": generation,
            "member_id": member_id, "group_instance_id": instance, "topics": [{
                "name": topic, "partitions": [{
                    "partition_index": partition, "committed_offset": offset,
                    "committed_leader_epoch": -1, "committed_metadata": None}]}]})

    def leave(self, group: str, member_id: str, instance: str | None = None) -> Any:
        return self.call(13, LEAVE_V, {"group_id": group, "members": [
            {"member_id": member_id, "group_instance_id": instance, "reason": None}]})


@dataclass
class JoinedPair:
    a: RawClient
    b: RawClient
    a_id: str
    b_id: str
    generation: int


def told(client: RawClient, topic: str) -> None:
    """The client asks for the topic's metadata, as a leader does before assigning."""
    client.call(3, 12, {"topics": [{"name": topic, "topic_id": None}],
                        "allow_auto_topic_creation": False,
                        "include_topic_authorized_operations": False})


def form_pair(bootstrap: str, group: str, topic: str) -> JoinedPair:
    """a joins alone (generation 1, leader), then b joins; a rejoins on its heartbeat's
    REBALANCE_IN_PROGRESS; both are in generation 2 with a as leader, not yet synced."""
    a, b = RawClient(bootstrap, "a"), RawClient(bootstrap, "b")
    told(a, topic)
    first = a.join(group, [topic])
    assert (first.error_code, first.generation_id) == (0, 1)
    a.send_sync(group, first.member_id, 1, {first.member_id: [(topic, p) for p in range(4)]})
    assert a.receive().error_code == 0
    b.send_join(group, "", [topic])
    b_id = b.receive().member_id
    b.send_join(group, b_id, [topic])
    assert a.heartbeat(group, first.member_id, 1).error_code == REBALANCE_IN_PROGRESS
    a.send_join(group, first.member_id, [topic])
    joined_a, joined_b = a.receive(), b.receive()
    assert joined_a.leader == first.member_id and joined_a.generation_id == 2
    assert joined_b.generation_id == 2
    return JoinedPair(a, b, first.member_id, b_id, 2)


def sync_both(p: JoinedPair, group: str, topic: str) -> None:
    """The follower's SyncGroup, then the leader's: two partitions each."""
    p.b.send_sync(group, p.b_id, p.generation)
    p.a.send_sync(group, p.a_id, p.generation, {p.a_id: [(topic, 0), (topic, 1)],
                                                 p.b_id: [(topic, 2), (topic, 3)]})
