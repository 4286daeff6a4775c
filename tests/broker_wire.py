"""A bare Kafka protocol client for tests of groupcheck's broker: kio entities over a socket.

`RawClient` sends one request and reads its answer (`call`), or sends now and reads later
(`send`, `receive`, `pending`), so a test can see which of two connections is answered
first. `join`, `sync`, `heartbeat` build group requests at the newest served versions.
"""

from __future__ import annotations

import select
import socket
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader

from groupcheck.broker.protocol import build, encode_request
from groupcheck.impl.consumer_protocol import encode_assignment, encode_subscription
from groupcheck.impl.types import Assignment, Subscription

JOIN_V, SYNC_V, HEARTBEAT_V, LEAVE_V = 9, 5, 4, 5


class RawClient:
    def __init__(self, bootstrap: str, client_id: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self._correlation = 0
        self._sent: list[tuple[int, int, int]] = []  # (correlation, api key, version)

    def close(self) -> None:
        self.sock.close()

    def send(self, api_key: int, version: int, data: dict[str, Any]) -> None:
        body = build(load_request_schema(api_key, version), data)
        self._correlation += 1
        self.sock.sendall(encode_request(body, self._correlation, self.client_id))
        self._sent.append((self._correlation, api_key, version))

    def pending(self, wait: float = 0.0) -> bool:
        """Whether an answer is ready to read (within ``wait`` seconds)."""
        return bool(select.select([self.sock], [], [], wait)[0])

    def _read(self, size: int) -> bytes:
        out = b""
        while len(out) < size:
            chunk = self.sock.recv(size - len(out))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            out += chunk
        return out

    def receive(self) -> Any:
        correlation, api_key, version = self._sent.pop(0)
        payload = self._read(int.from_bytes(self._read(4), "big"))
        schema = load_response_schema(api_key, version)
        header, size = entity_reader(schema.__header_schema__)(payload, 0)
        assert header.correlation_id == correlation
        return entity_reader(schema)(payload, size)[0]

    def call(self, api_key: int, version: int, data: dict[str, Any]) -> Any:
        self.send(api_key, version, data)
        return self.receive()

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
