"""Fuzzing the decoders: random bytes and mutated valid encodings go into every decoder
(`decode_subscription`, `decode_assignment`, and the JSON-lines ``decode_*`` ops), which
must give a value or a `CodecError`, nothing else (I10's last clause). Also: a hostile
count or length costs neither time nor memory.

The long run is ``tox -e fuzz`` (``bench/fuzz_codec.py``); this is the default run's share.
"""

from __future__ import annotations

import random
import struct
import time
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.engines.codec_fuzz import (
    INT16_MAX,
    INT32_MAX,
    KINDS,
    Kind,
    WireField,
    bad_values,
    decoder_problems,
    flip_bits,
    fuzz_input,
    large_subscription,
    random_assignment,
    random_subscription,
    set_field,
    wire_fields,
)
from groupcheck.impl.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from groupcheck.impl.errors import CodecError

from helpers.codec_strategies import (
    INT16,
    WRITER_VERSIONS,
    assignments,
    subscriptions,
    to_assignment,
    to_subscription,
)

FUZZ = settings(max_examples=300, deadline=None)
ROUNDS = 4  # mutations tried per generated encoding (generating is the costly part)
DECODE = {"subscription": decode_subscription, "assignment": decode_assignment}
#: a decode slower than this walked a count of up to 2^31-1 items (a hang, not a speed)
HANG_SECONDS = 5.0


@st.composite
def encodings(draw: st.DrawFn) -> tuple[Kind, bytes]:
    """A valid encoding of either kind at any writer version."""
    kind: Kind = draw(st.sampled_from(KINDS))
    version = draw(st.sampled_from(WRITER_VERSIONS))
    if kind == "subscription":
        return kind, encode_subscription(to_subscription(draw(subscriptions())), version)
    return kind, encode_assignment(to_assignment(draw(assignments())), version)


def _report(data: bytes) -> str:
    return f"input {data.hex()}: " + "; ".join(decoder_problems(data))


@FUZZ
@given(data=st.binary(max_size=64))
def test_random_bytes(data: bytes) -> None:
    """Random bytes give a value or a CodecError in every decoder."""
    assert not decoder_problems(data), _report(data)


@FUZZ
@given(header=st.one_of(st.integers(-2, 5), INT16), body=st.binary(max_size=64))
def test_random_body_behind_a_header(header: int, body: bytes) -> None:
    """A random body behind a real, future or negative header gives a value or a
    CodecError in every decoder."""
    data = struct.pack(">h", header) + body
    assert not decoder_problems(data), _report(data)


@FUZZ
@given(encoding=encodings(), data=st.data())
def test_hostile_length_and_count_fields(encoding: tuple[Kind, bytes],
                                         data: st.DataObject) -> None:
    """A header, length or count field set to -1, -2, the extremes, one more or less than
    it should be, more than the bytes that remain, or any value, gives a value or a
    CodecError."""
    kind, valid = encoding
    for _ in range(ROUNDS):
        field = data.draw(st.sampled_from(wire_fields(valid, kind)))
        bits = 16 if field.size == 2 else 32
        value = data.draw(st.sampled_from(bad_values(field, valid))
                          | st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1))
        mutated = set_field(valid, field, value)
        assert not decoder_problems(mutated), _report(mutated)


@FUZZ
@given(encoding=encodings(), data=st.data())
def test_bit_flips(encoding: tuple[Kind, bytes], data: st.DataObject) -> None:
    """Flipping one to four bits of a valid encoding gives a value or a CodecError."""
    _, valid = encoding
    for _ in range(ROUNDS):
        bits = data.draw(st.lists(st.integers(0, 8 * len(valid) - 1), min_size=1, max_size=4))
        mutated = flip_bits(valid, bits)
        assert not decoder_problems(mutated), _report(mutated)


@settings(max_examples=200, deadline=None)
@given(a=encodings(), b=encodings(), data=st.data())
def test_truncation_and_splicing(a: tuple[Kind, bytes], b: tuple[Kind, bytes],
                                 data: st.DataObject) -> None:
    """A truncated encoding, and the head of one encoding joined to the tail of another,
    give a value or a CodecError."""
    first, second = a[1], b[1]
    for _ in range(ROUNDS // 2):
        i = data.draw(st.integers(0, len(first)))
        j = data.draw(st.integers(0, len(second)))
        for mutated in (first[:i], first[:i] + second[j:]):
            assert not decoder_problems(mutated), _report(mutated)


@settings(max_examples=60, deadline=None)
@given(rng=st.randoms(use_true_random=False))
def test_mutation_chains(rng: random.Random) -> None:
    """The long fuzz loop's own inputs (random bytes, one or two mutations of a valid
    encoding) give a value or a CodecError, the same from bytes, bytearray and memoryview."""
    for _ in range(20):
        data = fuzz_input(rng)
        assert not decoder_problems(data), _report(data)
        for decode in DECODE.values():
            outcomes = []
            for view in (data, bytearray(data), memoryview(data)):
                try:
                    outcomes.append(vars(decode(view)))
                except CodecError as exc:
                    outcomes.append({"error": str(exc)})
            assert outcomes[0] == outcomes[1] == outcomes[2], data.hex()


def _max_value_cases() -> list[tuple[str, Kind, bytes, WireField]]:
    """Every length and count field of small encodings of every version, and those of the
    first and last topic of the 500-topic one (and its unindexed ones)."""
    rng = random.Random(7)
    valid: list[tuple[Kind, bytes]] = [("subscription", encode_subscription(
        large_subscription(), 3))]
    for version in range(4):
        valid.append(("subscription", encode_subscription(random_subscription(rng), version)))
        valid.append(("assignment", encode_assignment(random_assignment(rng), version)))
    last = len(large_subscription().topics) - 1
    return [(f"{kind}-v{data[1]}-{len(data)}B-{f.name}", kind, data, f)
            for kind, data in valid for f in wire_fields(data, kind)[1:]
            if len(data) < 1000 or "[" not in f.name or f"[{last}]" in f.name
            or "[0]" in f.name]


MAX_VALUE_CASES = _max_value_cases()
TINY = [(kind, struct.pack(">hi", v, INT32_MAX) + body) for kind in KINDS
        for v in (0, 1, 2, 3, 4) for body in (b"", b"\x00", b"\x00\x01abc")]


def _assert_cheap(decode: Any, data: bytes) -> None:
    """``decode(data)`` raises CodecError without walking the count it was given (a loop
    over 2^31-1 items would run for minutes: `HANG_SECONDS` turns that into a failure, it
    times nothing) and allocates less than 64 KiB plus 8 bytes per input byte (what it
    decoded before the bad field); a list of 2^31-1 items would take 16 GiB. How fast the
    codec fails is measured by ``bench/fuzz_codec.py``."""
    started = time.perf_counter()
    with pytest.raises(CodecError):
        decode(data)
    took = time.perf_counter() - started
    assert took < HANG_SECONDS, f"{took:.1f} s: the decoder walks the count it was given"
    tracemalloc.start()
    try:
        with pytest.raises(CodecError):
            decode(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 + 8 * len(data), f"{peak} bytes allocated"


@pytest.mark.parametrize("kind,data", TINY, ids=[f"{k}-{d.hex()}" for k, d in TINY])
def test_max_count_with_tiny_body_fails_fast(kind: Kind, data: bytes) -> None:
    """A header, a count of 2^31-1 and a tiny body: CodecError at once, no allocation
    proportional to the count."""
    _assert_cheap(DECODE[kind], data)


@pytest.mark.parametrize("name,kind,data,field", MAX_VALUE_CASES,
                         ids=[c[0] for c in MAX_VALUE_CASES])
def test_max_length_or_count_fails_fast(name: str, kind: Kind, data: bytes,
                                        field: WireField) -> None:
    """Any one length or count field of a valid encoding set to its largest value (2^31-1,
    or 2^15-1 for a string) runs past the end: CodecError at once, nothing allocated for
    it."""
    _assert_cheap(DECODE[kind], set_field(data, field, INT16_MAX if field.size == 2
                                           else INT32_MAX))


@settings(max_examples=100, deadline=None)
@given(encoding=encodings())
def test_wire_fields_walk_the_whole_encoding(encoding: tuple[Kind, bytes]) -> None:
    """The fuzzer's field map finds every length and count field: one per string, bytes
    field, array and per-topic partition array of the version's layout."""
    kind, data = encoding
    fields = wire_fields(data, kind)
    if kind == "subscription":
        d = decode_subscription(data)
        expected = 3 + len(d.topics) + (1 + 2 * len(d.owned_partitions)) * (d.version >= 1)
        expected += d.version >= 3
    else:
        expected = 3 + 2 * len(decode_assignment(data).assigned_partitions)
    assert len(fields) == expected
    assert fields[0] == WireField(0, 2, "version")
    assert all(a.offset + a.size <= b.offset for a, b in zip(fields, fields[1:], strict=False))
