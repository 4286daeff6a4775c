"""The one-pass subscription writer and reader against the field-by-field ones.

`encode_subscription` and `decode_subscription` try one pass first and hand anything out of
the ordinary to `write_subscription_fields` / `read_subscription_fields`, the reference.
These properties hold the two paths equal on every input (the same bytes; the same value or
the same `CodecError`), and check that the one pass really takes the usual messages (ASCII
names, well-formed bytes), so that the equality is not won by always handing over.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.engines.codec_fuzz import mutate, random_encoding
from groupcheck.impl.consumer_protocol import (
    decode_subscription,
    encode_subscription,
    read_subscription_fields,
    write_subscription_fields,
)
from groupcheck.impl.consumer_protocol import (
    decode_well_formed_subscription as _decode_well_formed_subscription,
)
from groupcheck.impl.consumer_protocol import (
    encode_ascii_subscription as _encode_ascii_subscription,
)
from groupcheck.impl.errors import CodecError

from helpers.codec_strategies import WRITER_VERSIONS, subscriptions, to_subscription

SOME = settings(max_examples=300, deadline=None)
ASCII_NAMES = st.text(alphabet="abtz019._-", max_size=5)


def _outcome(decode: Any, data: bytes) -> tuple[str, Any]:
    try:
        value = decode(data)
    except CodecError as exc:
        return "error", (str(exc), exc.kafka_class, exc.offset, exc.field, exc.version)
    return "value", value


@SOME
@given(x=subscriptions(), version=st.sampled_from(WRITER_VERSIONS))
def test_writer_gives_the_field_by_field_bytes(x: dict[str, Any], version: int) -> None:
    """For any subscription (names of any script, repeats, any int32) and writer version,
    `encode_subscription` writes exactly what the field-by-field writer writes."""
    sub = to_subscription(x)
    assert encode_subscription(sub, version) == write_subscription_fields(sub, min(version, 3))


@SOME
@given(topics=st.lists(ASCII_NAMES, max_size=6),
       owned=st.lists(st.tuples(ASCII_NAMES, st.integers(-(1 << 31), (1 << 31) - 1)),
                      max_size=8),
       user_data=st.one_of(st.none(), st.binary(max_size=12)),
       generation=st.integers(-(1 << 31), (1 << 31) - 1),
       rack=st.one_of(st.none(), ASCII_NAMES), version=st.sampled_from(WRITER_VERSIONS))
def test_one_pass_writes_every_ascii_subscription(
        topics: list[str], owned: list[tuple[str, int]], user_data: bytes | None,
        generation: int, rack: str | None, version: int) -> None:
    """An all-ASCII subscription is written by the one pass, and read back by the one-pass
    reader, each giving what the field-by-field path gives."""
    sub = to_subscription({"topics": topics, "owned": owned, "userData": user_data,
                           "generation": generation, "rack": rack})
    v = min(version, 3)
    data = _encode_ascii_subscription(sub, v)
    assert data is not None
    assert data == write_subscription_fields(sub, v)
    assert _decode_well_formed_subscription(data) == read_subscription_fields(data)


@SOME
@given(x=subscriptions(), version=st.sampled_from(WRITER_VERSIONS),
       trailing=st.binary(max_size=4))
def test_reader_reads_every_encoding_as_the_field_by_field_reader(
        x: dict[str, Any], version: int, trailing: bytes) -> None:
    """Any written subscription, with or without trailing bytes, reads the same on both
    paths (malformed UTF-8 that Java replaces goes to the field-by-field reader)."""
    data = encode_subscription(to_subscription(x), version) + trailing
    assert decode_subscription(data) == read_subscription_fields(data)


@SOME
@given(data=st.binary(max_size=64))
def test_reader_agrees_on_random_bytes(data: bytes) -> None:
    """On arbitrary bytes: the same value, or the same error (text, class, offset, field,
    version)."""
    assert _outcome(decode_subscription, data) == _outcome(read_subscription_fields, data)


@settings(max_examples=200, deadline=None)
@given(rng=st.randoms(use_true_random=False))
def test_reader_agrees_on_mutated_encodings(rng: random.Random) -> None:
    """Hostile lengths and counts, bit flips, truncation, splices and trailing bytes over
    valid encodings: the one-pass reader never answers differently."""
    for _ in range(8):
        data = random_encoding(rng, "subscription")
        mutated = mutate(rng, data, "subscription", random_encoding(rng, "subscription"))
        for candidate in (data, mutated):
            assert _outcome(decode_subscription, candidate) == \
                _outcome(read_subscription_fields, candidate)
