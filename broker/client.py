"""A small Kafka protocol client on kio: one connection, requests in, answers out, and the
admin call the wire layer makes (`describe_group`, DescribeGroups over the wire).

What lives here: `KafkaConnection` (send a request, read its answer in order, or see
whether one is waiting) and `describe_group`, which asks any broker — groupcheck's own, or
another — for a group as its coordinator holds it and gives a `GroupDescription`.

Theory of operation: requests are built from plain data with `protocol.build` for the
version asked for and framed by `protocol.encode_request`; answers are read back with kio's
reader for the same (api key, version), the header first. A connection keeps the
(correlation id, api key, version) of every request it sent and reads answers in that
order, as Kafka answers one connection's requests. Every read is bounded by the socket's
timeout; a broker that closes the connection is a `ConnectionError`.
"""

from __future__ import annotations

import select
import socket
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader

from .description import GroupDescription, MemberDescription
from .protocol import Fields, build, encode_request

__all__ = ["KafkaConnection", "describe_group"]

_DESCRIBE_GROUPS, _DESCRIBE_GROUPS_VERSION = 15, 5


class KafkaConnection:
    """One connection to a broker; ``with KafkaConnection(bootstrap, client_id) as c:``."""

    def __init__(self, bootstrap: str, client_id: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self._correlation = 0
        self._sent: list[tuple[int, int, int]] = []  # (correlation, api key, version)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> KafkaConnection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def send(self, api_key: int, version: int, data: Fields) -> None:
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
        """The answer to the oldest request not read yet."""
        correlation, api_key, version = self._sent.pop(0)
        payload = self._read(int.from_bytes(self._read(4), "big"))
        schema = load_response_schema(api_key, version)
        header, size = entity_reader(schema.__header_schema__)(payload, 0)
        if header.correlation_id != correlation:
            raise ConnectionError(f"answer to request {header.correlation_id} arrived while "
                                  f"waiting for {correlation}")
        return entity_reader(schema)(payload, size)[0]

    def call(self, api_key: int, version: int, data: Fields) -> Any:
        self.send(api_key, version, data)
        return self.receive()


def describe_group(bootstrap: str, group: str, client_id: str = "groupcheck-admin",
                   timeout: float = 10.0) -> GroupDescription:
    """DescribeGroups (v5) for ``group`` from the broker at ``bootstrap`` (its coordinator:
    a one-node cluster). The generation is not part of Kafka's answer (-1 here); member
    metadata and assignments are empty unless the group is Stable, as Kafka answers."""
    with KafkaConnection(bootstrap, client_id, timeout) as connection:
        answer = connection.call(_DESCRIBE_GROUPS, _DESCRIBE_GROUPS_VERSION, {
            "groups": [group], "include_authorized_operations": False})
    found = answer.groups[0]
    if int(found.error_code) != 0:
        raise ConnectionError(f"DescribeGroups {group}: error {int(found.error_code)}")
    members = tuple(MemberDescription(str(m.member_id), str(m.client_id),
                                      None if m.group_instance_id is None
                                      else str(m.group_instance_id),
                                      bytes(m.member_metadata), bytes(m.member_assignment))
                    for m in found.members)
    return GroupDescription(str(found.group_id), str(found.group_state), -1,
                            str(found.protocol_type) or None, str(found.protocol_data) or None,
                            None, members)
