"""A bare Kafka protocol client for tests of groupcheck's broker: kio entities over a socket.

`RawClient` is the broker's own `KafkaConnection`: it sends one request and reads its answer
(`call`), or sends now and reads later (`send`, `receive`, `pending`), so a test can see
which of two connections is answered first. `join`, `sync`, `heartbeat` build group requests
at the newest served versions.
"""

from __future__ import annotations

from typing import Any

from groupcheck.broker.client import KafkaConnection
from groupcheck.impl.consumer_protocol import encode_assignment, encode_subscription
from groupcheck.impl.types import Assignment, Subscription

JOIN_V, SYNC_V, HEARTBEAT_V, LEAVE_V = 9, 5, 4, 5


class RawClient(KafkaConnection):
    """`broker.client.KafkaConnection` with the group requests a test sends by hand."""

    # -- the group requests ---------------------------------------------------------------

    def send_join(self, group: str, member_id: str, topics: list[str],
                  protocol: str = "range", session_ms: int = 10_000) -> None:
        metadata = encode_subscription(Subscription(topics=topics))
        self.send(11, JOIN_V, {"group_id": group, "session_timeout": session_ms,
                               "rebalance_timeout": 30_000, "member_id": member_id,
                               "protocol_type": "consumer", "group_instance_id": None,
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
                  protocol: str = "range") -> None:
        rows = [{"member_id": m, "assignment": encode_assignment(Assignment(parts))}
                for m, parts in (assignments or {}).items()]
        self.send(14, SYNC_V, {"group_id": group, "generation_id": generation,
                               "member_id": member_id, "group_instance_id": None,
                               "protocol_type": "consumer", "protocol_name": protocol,
                               "assignments": rows})

    def heartbeat(self, group: str, member_id: str, generation: int) -> Any:
        return self.call(12, HEARTBEAT_V, {"group_id": group, "generation_id": generation,
                                           "member_id": member_id, "group_instance_id": None})

    def leave(self, group: str, member_id: str) -> Any:
        return self.call(13, LEAVE_V, {"group_id": group, "members": [
            {"member_id": member_id, "group_instance_id": None, "reason": None}]})
