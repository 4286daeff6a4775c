"""Kafka's request and response framing for groupcheck's broker, on kio's message schemas.

What lives here: the API versions the broker serves, decoding one request frame (header and
body) and encoding one response frame, the ApiVersions answer a real broker gives to a
version it does not know, and two converters between kio's typed entities and plain data
(`build` and `plain`), so the handlers can be written once for every version of an API.

Theory of operation
-------------------
A frame is a 4-byte size and a payload. Every request header starts with api key, api
version and correlation id; which header version follows (v1, or v2 with tagged fields) and
which body layout, kio knows per (api key, version): its request classes name their header
class. The broker never writes a byte layout itself: kio's readers decode (after
`request_scan` has walked the bytes with Kafka's checks and cut out unknown tagged
fields, KIP-482), its writers encode, and the response header version comes from the
response class (ApiVersions answers always use header v0, KIP-511). A request for a
version outside `SUPPORTED` is decoded no further than its header; ApiVersions is the
exception (KIP-511): the broker answers it with UNSUPPORTED_VERSION and its ranges in the
v0 layout, so the client retries lower. An ApiVersions v3+ whose client software name or
version Kafka would find invalid is answered INVALID_REQUEST (Kafka's
ApiVersionsRequest.isValid).

Handlers describe a response as nested plain data (dicts, lists, ints, strings); `build`
turns that into the kio class of the version asked for, dropping fields that version lacks
and leaving out fields it does not know to their schema default.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import io
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import SerialError
from kio.serial.readers import read_int16, read_int32
from kio.static.primitive import i32Timedelta, i64Timedelta

from .messages import ApiVersionsData
from .request_scan import ScanError, scan

__all__ = ["API_KEYS", "INVALID_REQUEST", "MAX_FRAME", "SUPPORTED", "FrameError", "RequestFrame",
           "api_versions_data", "api_versions_valid", "build", "decode_request", "encode_request",
           "encode_response", "frame_name", "millis", "plain", "response_type", "serves",
           "unsupported_api_versions"]

#: API key → (name, lowest version, highest version) this broker serves. Versions from
#: Kafka 4.0's ranges (KIP-896 removed the oldest), capped where a newer version names
#: topics by id only (Fetch ≥ 13, Produce 13, OffsetCommit/OffsetFetch 10) — a broker may
#: advertise any lower maximum, and every client then speaks by topic name.
SUPPORTED: dict[int, tuple[str, int, int]] = {
    0: ("Produce", 3, 12),
    1: ("Fetch", 4, 12),
    2: ("ListOffsets", 1, 9),
    3: ("Metadata", 0, 12),
    8: ("OffsetCommit", 2, 9),
    9: ("OffsetFetch", 1, 9),
    10: ("FindCoordinator", 0, 6),
    11: ("JoinGroup", 0, 9),
    12: ("Heartbeat", 0, 4),
    13: ("LeaveGroup", 0, 5),
    14: ("SyncGroup", 0, 5),
    15: ("DescribeGroups", 0, 5),
    16: ("ListGroups", 0, 5),
    18: ("ApiVersions", 0, 4),
    19: ("CreateTopics", 2, 7),
    22: ("InitProducerId", 0, 5),
}
API_KEYS: dict[str, int] = {name: key for key, (name, _, _) in SUPPORTED.items()}
_API_VERSIONS_KEY = 18
_UNSUPPORTED_VERSION = 35
MAX_FRAME = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes default
INVALID_REQUEST = 42
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
#: What kio's readers raise on bytes they refuse, after the walk: an unreadable value (a
#: duration past ``timedelta``, a UUID, a date), never a length or a tag.
_KIO_ERRORS = (SerialError, ValueError, KeyError, OverflowError, TypeError)


class FrameError(Exception):
    """A request that cannot be read: ``offset`` and ``field`` say where."""

    def __init__(self, message: str, *, offset: int, field: str) -> None:
        super().__init__(f"{message} (offset {offset}, field {field})")
        self.offset = offset
        self.field = field


@dataclass(frozen=True)
class RequestFrame:
    """One decoded request; ``body`` is None when the version is not served."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body: Any

    @property
    def api_name(self) -> str:
        entry = SUPPORTED.get(self.api_key)
        return entry[0] if entry else f"api-{self.api_key}"

    @property
    def supported(self) -> bool:
        return self.body is not None


def serves(api_key: int, version: int) -> bool:
    entry = SUPPORTED.get(api_key)
    return entry is not None and entry[1] <= version <= entry[2]


def decode_request(payload: bytes) -> RequestFrame:
    """The header and body of one request frame (without its size prefix). The bytes are
    walked first (`request_scan`): Kafka's length checks, unknown tagged fields skipped."""
    try:
        api_key, _ = read_int16(payload, 0)
        version, _ = read_int16(payload, 2)
        correlation_id, _ = read_int32(payload, 4)
    except SerialError as e:
        raise FrameError(f"truncated request header: {e}", offset=0, field="header") from None
    if not serves(api_key, version):
        return RequestFrame(api_key, version, correlation_id, None, None)
    schema = _request_type(api_key, version)
    what = f"{SUPPORTED[api_key][0]} v{version} body"
    try:
        data = scan(payload, schema.__header_schema__, schema)
    except ScanError as e:
        part = "request header" if e.field.startswith("RequestHeader") else what
        raise FrameError(f"bad {part}: {e.reason}", offset=e.offset, field=e.field) from None
    try:
        header, size = entity_reader(schema.__header_schema__)(data, 0)
    except _KIO_ERRORS as e:
        raise FrameError(f"bad request header: {e}", offset=8, field="client_id") from None
    try:
        body, _ = entity_reader(schema)(data, size)
    except _KIO_ERRORS as e:
        raise FrameError(f"bad {what}: {e}", offset=size, field=schema.__name__) from None
    return RequestFrame(api_key, version, correlation_id, header.client_id, body)


def api_versions_valid(version: int, body: Any) -> bool:
    """Kafka's ApiVersionsRequest.isValid (KIP-511): from v3 on, the client's software name
    and version are letters, digits, '-' and '.', starting and ending with a letter or digit.
    An invalid one is answered INVALID_REQUEST, with no API ranges."""
    return version < 3 or all(_SOFTWARE.fullmatch(str(text)) for text in (
        body.client_software_name, body.client_software_version))


def encode_request(body: Any, correlation_id: int, client_id: str | None) -> bytes:
    """A request frame (size prefix included), as a client would send it; for tests and
    benchmarks that speak to the broker without a client library."""
    header_type = type(body).__header_schema__
    header = header_type(request_api_key=body.__api_key__, request_api_version=body.__version__,
                         correlation_id=correlation_id, client_id=client_id)
    return _frame(entity_writer(header_type), header, entity_writer(type(body)), body)


def encode_response(body: Any, correlation_id: int) -> bytes:
    """A response frame (size prefix included), with the header version kio names."""
    header_type = type(body).__header_schema__
    return _frame(entity_writer(header_type), header_type(correlation_id=correlation_id),
                  entity_writer(type(body)), body)


def _frame(write_header: Any, header: Any, write_body: Any, body: Any) -> bytes:
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    write_header(buffer, header)
    write_body(buffer, body)
    data = bytearray(buffer.getvalue())
    data[:4] = (len(data) - 4).to_bytes(4, "big", signed=True)
    return bytes(data)


def api_versions_data(error: int = 0) -> ApiVersionsData:
    """The ApiVersions answer: every served API with its range."""
    return {"error_code": error, "throttle_time": 0,
            "api_keys": [{"api_key": key, "min_version": low, "max_version": high}
                         for key, (_, low, high) in sorted(SUPPORTED.items())]}


def unsupported_api_versions(correlation_id: int) -> bytes:
    """KIP-511: a version of ApiVersions the broker does not know gets UNSUPPORTED_VERSION
    and the supported ranges in the v0 layout (header v0), whatever version was asked."""
    schema = load_response_schema(_API_VERSIONS_KEY, 0)
    return encode_response(build(schema, api_versions_data(_UNSUPPORTED_VERSION)), correlation_id)


@functools.cache
def response_type(api_key: int, version: int) -> type[Any]:
    return load_response_schema(api_key, version)


@functools.cache
def _request_type(api_key: int, version: int) -> type[Any]:
    return load_request_schema(api_key, version)


# -- plain data <-> kio entities -------------------------------------------------------------


def _coerce(kafka_type: str, value: Any) -> Any:
    if kafka_type == "timedelta_i32":
        return i32Timedelta.parse(datetime.timedelta(milliseconds=int(value)))
    if kafka_type == "timedelta_i64":
        return i64Timedelta.parse(datetime.timedelta(milliseconds=int(value)))
    if kafka_type == "error_code":
        return ErrorCode(int(value))
    return value


def _entity_of(hint: Any) -> type[Any] | None:
    """The kio class inside a field's annotation (``X``, ``tuple[X, ...]``, ``X | None``)."""
    if dataclasses.is_dataclass(hint):
        return hint if isinstance(hint, type) else None
    for arg in typing.get_args(hint):
        found = _entity_of(arg)
        if found is not None:
            return found
    return None


#: a Kafka message's fields as plain data, of any API and version: `build` reads each by its
#: name in the version's kio class (a response's own shape is in `messages`)
Fields = Mapping[str, object]
_Layout = tuple[tuple[str, "type[Any] | None", str], ...]
_LAYOUTS: dict[type[Any], _Layout] = {}


def _layout(cls: type[Any]) -> _Layout:
    """Each field of a kio class: name, nested kio class (or None), Kafka type (cached)."""
    found = _LAYOUTS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = tuple((f.name, _entity_of(hints[f.name]), f.metadata.get("kafka_type", ""))
                      for f in dataclasses.fields(cls))
        _LAYOUTS[cls] = found
    return found


def build(cls: type[Any], data: Fields) -> Any:
    """An instance of kio class ``cls`` from plain data; keys ``cls`` lacks are dropped."""
    return cls(**{name: _value(nested, kafka_type, data[name])
                  for name, nested, kafka_type in _layout(cls) if name in data})


def _value(nested: type[Any] | None, kafka_type: str, value: Any) -> Any:
    """One field's plain value as ``cls`` takes it: a nested entity (or a tuple of them),
    a tuple of values, or a value of its Kafka type."""
    if nested is not None and value is not None:
        if isinstance(value, (list, tuple)):
            return tuple(build(nested, item) for item in value)
        return build(nested, value)
    if isinstance(value, list):
        return tuple(_coerce(kafka_type, v) for v in value)
    return _coerce(kafka_type, value)


def plain(value: Any) -> Any:
    """A kio entity as plain data: dicts, lists, ints, strings, bytes; times in ms."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds() * 1000)
    if isinstance(value, ErrorCode):
        return int(value)
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    return value


def millis(value: datetime.timedelta | int) -> int:
    """A kio duration field in milliseconds."""
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds() * 1000)
    return int(value)


def frame_name(payload: bytes) -> str:
    """The API and version a payload names, for a log line about bytes that are no request."""
    if len(payload) < 4:
        return f"{len(payload)}-byte frame"
    key, version = int.from_bytes(payload[:2], "big", signed=True), \
        int.from_bytes(payload[2:4], "big", signed=True)
    entry = SUPPORTED.get(key)
    return f"{entry[0] if entry else f'api-{key}'} v{version}"
