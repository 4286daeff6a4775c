"""A bare Kafka client for tests that speak to a broker frame by frame: kio's message
classes, one blocking socket, no client library in between."""

from __future__ import annotations

import datetime
import socket
import struct
import typing
from typing import Any

from groupcheck.targets.kafka_frames import decode_response, request_frame


def schema(api_key: int, version: int, response: bool = False) -> Any:
    from kio.index import load_request_schema, load_response_schema

    return (load_response_schema if response else load_request_schema)(api_key, version)


def entry(cls: Any, field: str) -> Any:
    """The kio class of the items of a list field."""
    return typing.get_args(typing.get_type_hints(cls)[field])[0]


def millis(ms: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=ms)


class Connection:
    """One client connection; `ask` sends a request and reads its answer's payload."""

    def __init__(self, bootstrap: str, timeout: float = 20.0) -> None:
        host, _, port = bootstrap.split(",")[0].rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation = 0

    def send(self, api_key: int, version: int, body: Any) -> int:
        self.correlation += 1
        self.sock.sendall(request_frame(api_key, version, self.correlation, body))
        return self.correlation

    def receive(self) -> bytes:
        """The next answer's payload; b'' when the broker closed the connection."""
        head = self._exactly(4)
        if len(head) < 4:
            return b""
        return self._exactly(struct.unpack(">i", head)[0])

    def _exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                return data
            data += chunk
        return data

    def ask(self, api_key: int, version: int, body: Any) -> tuple[Any, Any]:
        self.send(api_key, version, body)
        return decode_response(api_key, version, self.receive())

    def close(self) -> None:
        self.sock.close()


def join_request(version: int, group: str, member_id: str = "", session_ms: int = 3000,
                 protocol: str = "range", metadata: bytes = b"\0\0\0\0\0\0\0\0") -> Any:
    cls = schema(11, version)
    fields = dict(group_id=group, session_timeout=millis(session_ms),
                  rebalance_timeout=millis(session_ms), member_id=member_id,
                  protocol_type="consumer",
                  protocols=(entry(cls, "protocols")(name=protocol, metadata=metadata),))
    if version >= 5:
        fields["group_instance_id"] = None
    return cls(**fields)


def sync_request(version: int, group: str, generation: int, member_id: str,
                 assignments: dict[str, bytes]) -> Any:
    cls = schema(14, version)
    item = entry(cls, "assignments")
    fields: dict[str, Any] = dict(
        group_id=group, generation_id=generation, member_id=member_id,
        assignments=tuple(item(member_id=m, assignment=a) for m, a in assignments.items()))
    if version >= 3:
        fields["group_instance_id"] = None
    return cls(**fields)
