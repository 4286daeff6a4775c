"""Hostile request frames, for the broker's framing tests and its fuzzer
(``bench/fuzz_broker.py``): a sample request for every (api key, version) the broker serves,
and what a hostile client makes of it — bit flips, cuts, lying lengths and frame sizes,
unknown tagged fields.

A sample is built from the kio schema field by field (strings, numbers, one item per
array), named so that it stays away from the groups and topics a test keeps alive: group
``fz`` (or the one asked for), topic ``fz-topic``, CreateTopics with ``validate_only``,
Fetch that does not wait.
Every mutation is a pure function of its ``random.Random``: the same seed, the same bytes.
"""

from __future__ import annotations

import dataclasses
import random
import typing
import uuid
from collections.abc import Callable
from types import NoneType, UnionType
from typing import Any

from kio.index import load_request_schema

from .protocol import SUPPORTED, build, encode_request
from .request_scan import landmarks, uvarint

__all__ = ["MUTATIONS", "SERVED", "frame_of", "inject_tag", "payload_of", "sample",
           "sample_frame"]

SERVED = [(key, v) for key, (_, low, high) in sorted(SUPPORTED.items())
          for v in range(low, high + 1)]
#: a sample field's value: a Kafka value, a nested sample, or an array of one of them
SampleValue = str | int | bool | bytes | uuid.UUID | None | list["SampleValue"] | dict[
    str, "SampleValue"]
#: a sample request's fields, by name
Sample = dict[str, SampleValue]

_NAMED: Sample = {
    "group_id": "fz", "protocol_type": "consumer", "member_id": "", "name": "fz-topic",
    "topic": "fz-topic", "validate_only": True, "max_wait": 0, "min_bytes": 0,
    "session_timeout": 6000, "rebalance_timeout": 100, "num_partitions": 1,
    "replication_factor": 1, "transactional_id": None, "group_instance_id": None,
    "key_type": 0, "timeout": 100, "acks": 1, "generation_id": -1,
    "client_software_name": "groupcheck-fuzz", "client_software_version": "1.0",
}
_KIND: Sample = {"string": "fz", "bytes": b"\x00\x01", "records": b"", "bool": False,
                 "uuid": uuid.UUID(int=0)}


def _plain(cls: type[Any], group: str) -> Sample:
    hints = typing.get_type_hints(cls)
    data: Sample = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if typing.get_origin(hint) in (UnionType, typing.Union):
            hint = next(a for a in typing.get_args(hint) if a is not NoneType)
        array = typing.get_origin(hint) is tuple
        inner = typing.get_args(hint)[0] if array else hint
        if dataclasses.is_dataclass(inner) and isinstance(inner, type):
            value: SampleValue = _plain(inner, group)
        elif f.name == "group_id":
            value = group
        elif f.name in _NAMED:
            value = _NAMED[f.name]
        else:
            value = _KIND.get(str(f.metadata.get("kafka_type")), 1)
        data[f.name] = [value] if array else value
    return data


def sample(api_key: int, version: int, group: str = "fz") -> Any:
    """A kio request of this version with sample values in every field."""
    schema = load_request_schema(api_key, version)
    return build(schema, _plain(schema, group))


def sample_frame(api_key: int, version: int, correlation_id: int = 1,
                 client_id: str | None = "fz", group: str = "fz") -> bytes:
    return encode_request(sample(api_key, version, group), correlation_id, client_id)


def payload_of(frame: bytes) -> bytes:
    return frame[4:]


def frame_of(payload: bytes, size: int | None = None) -> bytes:
    """A frame around ``payload``; ``size`` overrides (a lie about) its length."""
    return (len(payload) if size is None else size).to_bytes(4, "big", signed=True) + payload


def _layout(payload: bytes) -> tuple[type[Any], type[Any]]:
    key, version = (int.from_bytes(payload[i:i + 2], "big") for i in (0, 2))
    schema = load_request_schema(key, version)
    return schema.__header_schema__, schema


def inject_tag(payload: bytes, rng: random.Random) -> bytes:
    """``payload`` with an unknown tagged field (tag ≥ 1000) in one of its tagged-field
    sections, at any depth; the payload itself when it has none (not flexible)."""
    sections = [m for m in landmarks(payload, *_layout(payload)) if m.width == -1]
    if not sections:
        return payload
    at = rng.choice(sections).offset
    count, used = _read_uvarint(payload, at)
    value = rng.randbytes(rng.randrange(0, 24))
    field = uvarint(rng.randrange(1000, 1 << 21)) + uvarint(len(value)) + value
    return payload[:at] + uvarint(count + 1) + field + payload[at + used:]


def _read_uvarint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    for i in range(5):
        byte = data[at + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i + 1
        shift += 7
    raise ValueError("varint longer than 5 bytes")


def lie_about_a_length(payload: bytes, rng: random.Random) -> bytes:
    """One string, bytes or array length (or tagged-field count) set to a hostile value."""
    marks = landmarks(payload, *_layout(payload))
    if not marks:
        return payload
    mark = rng.choice(marks)
    hostile = rng.choice([0, 1, 2, 0x7FFF, 0x8000, 0xFFFF, 2**31 - 1, 2**32 - 1, 2**34,
                          rng.randrange(0, 1 << 20)])
    if mark.width <= 0:
        old, used = _read_uvarint(payload, mark.offset)
        new = uvarint(hostile & (2**35 - 1))
    else:
        used, bits = mark.width, 8 * mark.width
        signed = rng.choice([hostile, -rng.randrange(1, 100)])
        new = (signed % (1 << bits)).to_bytes(mark.width, "big")
    return payload[:mark.offset] + new + payload[mark.offset + used:]


def flip_bits(payload: bytes, rng: random.Random) -> bytes:
    data = bytearray(payload)
    for _ in range(rng.choice([1, 1, 2, 3, 8])):
        bit = rng.randrange(8 * len(data))
        data[bit // 8] ^= 1 << (bit % 8)
    return bytes(data)


def truncate(payload: bytes, rng: random.Random) -> bytes:
    return payload[:rng.randrange(len(payload))]


def random_bytes(payload: bytes, rng: random.Random) -> bytes:
    """Random bytes, half of them behind a served api key and version."""
    junk = rng.randbytes(rng.randrange(0, 64))
    return payload[:4] + junk if rng.random() < 0.5 else junk


#: Mutations of a valid payload (the frame's size stays honest).
MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "bit flips": flip_bits, "truncated": truncate, "lying length": lie_about_a_length,
    "unknown tag": inject_tag, "random bytes": random_bytes,
}
