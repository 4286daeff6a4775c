"""A bare Kafka client for tests that speak to a broker frame by frame: kio's message
classes (Kafka's schemas, every version), one blocking socket, no client library between."""

from __future__ import annotations

import datetime
import io
import socket
import struct
import typing
from typing import Any


def load_kio() -> Any:
    """kio, imported on first use (the ``dev`` extra)."""
    import kio.index
    import kio.schema.errors
    import kio.serial

    return kio


def frame(header: Any, body: Any) -> bytes:
    """One Kafka frame (size prefix included) of a kio header and body."""
    kio = load_kio()
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    kio.serial.entity_writer(type(header))(buffer, header)
    kio.serial.entity_writer(type(body))(buffer, body)
    data = bytearray(buffer.getvalue())
    data[:4] = struct.pack(">i", len(data) - 4)
    return bytes(data)


def request_frame(api_key: int, version: int, correlation_id: int, body: Any,
                  client_id: str = "groupcheck") -> bytes:
    """A request frame as a client writes it; ``body`` a kio request of that version."""
    header_type = type(body).__header_schema__
    header = header_type(request_api_key=api_key, request_api_version=version,
                         correlation_id=correlation_id, client_id=client_id)
    return frame(header, body)


def decode_response(api_key: int, version: int, payload: bytes) -> tuple[Any, Any]:
    """The kio header and body of one response payload to a request of that version."""
    kio = load_kio()
    schema = kio.index.load_response_schema(api_key, version)
    header, size = kio.serial.entity_reader(schema.__header_schema__)(payload, 0)
    body, _ = kio.serial.entity_reader(schema)(payload, size)
    return header, body


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

    def __init__(self, bootstrap: str, timeout: float = 20.0,
                 client_id: str = "groupcheck") -> None:
        host, _, port = bootstrap.split(",")[0].rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation = 0
        self.client_id = client_id

    def send(self, api_key: int, version: int, body: Any) -> int:
        self.correlation += 1
        self.sock.sendall(request_frame(api_key, version, self.correlation, body,
                                        self.client_id))
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
