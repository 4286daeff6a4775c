"""Kafka frames with kio's message schemas: what a proxy or a test needs to read and write
requests and responses of any version without writing a byte layout by hand.

A frame is a 4-byte big-endian size, then the payload: a request header (api key, version,
correlation id, client id, and tagged fields from the flexible versions on) and the body; a
response header (the correlation id) and the body. kio names, per API and version, the
header and body classes; `decode_request` and `decode_response` read with them and `frame`
writes them. kio is optional (the ``peers`` extra) and imported on first use.
"""

from __future__ import annotations

import asyncio
import io
import struct
from typing import Any

MAX_FRAME = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes default


def load_kio() -> Any:
    """kio, imported on first use (an optional library: the ``peers`` extra)."""
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


def decode_request(payload: bytes) -> tuple[int, int, int, Any]:
    """api key, version, correlation id and the kio body of one request payload."""
    kio = load_kio()
    api_key, version, correlation_id = struct.unpack_from(">hhi", payload)
    schema = kio.index.load_request_schema(api_key, version)
    _header, size = kio.serial.entity_reader(schema.__header_schema__)(payload, 0)
    body, _ = kio.serial.entity_reader(schema)(payload, size)
    return api_key, version, correlation_id, body


def decode_response(api_key: int, version: int, payload: bytes) -> tuple[Any, Any]:
    """The kio header and body of one response payload to a request of that version."""
    kio = load_kio()
    schema = kio.index.load_response_schema(api_key, version)
    header, size = kio.serial.entity_reader(schema.__header_schema__)(payload, 0)
    body, _ = kio.serial.entity_reader(schema)(payload, size)
    return header, body


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    """One frame's payload; `asyncio.IncompleteReadError` at the end of the stream."""
    size = struct.unpack(">i", await reader.readexactly(4))[0]
    if not 0 <= size <= MAX_FRAME:
        raise ConnectionError(f"frame size {size} out of range")
    return await reader.readexactly(size)
