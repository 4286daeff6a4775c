"""Properties of the consumer-protocol codec: round trips, I10 across versions, canonical
bytes, and what a reader does with a truncated encoding.

The expected values come from `groupcheck.properties.codec`, which restates the rules of
the protocol's layouts (``docs/reference/codec-rules.md``) without importing the codec.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.engines.codec_fuzz import with_header
from groupcheck.impl.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from groupcheck.impl.errors import CodecError
from groupcheck.properties.codec import (
    SUBSCRIPTION_FIELDS,
    canonical_subscription,
    codec_violations,
    layout,
    leader_view,
    project_subscription,
    subscription_size,
)

from helpers.codec_strategies import (
    WRITER_VERSIONS,
    assignment_message,
    assignments,
    decoded_or_none,
    subscription_message,
    subscriptions,
    to_assignment,
    to_subscription,
)

PAIR_VERSIONS = range(5)  # 0..3 and the first future version
FAR_FUTURE = [100, (1 << 15) - 1]
SOME = settings(max_examples=100, deadline=None)


@SOME
@given(x=subscriptions(), version=st.sampled_from(WRITER_VERSIONS))
def test_subscription_round_trip(x: dict[str, Any], version: int) -> None:
    """decode(encode_v(x)) is x in canonical form projected to v, read with the header the
    writer wrote (versions above 3 are written as 3), nothing left over."""
    data = encode_subscription(to_subscription(x), version)
    written = int.from_bytes(data[:2], "big", signed=True)
    assert written == layout(version)
    assert len(data) == subscription_size(canonical_subscription(x), version)
    decoded = subscription_message(decode_subscription(data))
    assert codec_violations(x, version, written, decoded) == []


@SOME
@given(x=assignments(), version=st.sampled_from(WRITER_VERSIONS))
def test_assignment_round_trip(x: dict[str, Any], version: int) -> None:
    """decode(encode_v(a)) is a grouped per topic in first-appearance order, partitions in
    list order, for every version (the layout never changes)."""
    data = encode_assignment(to_assignment(x), version)
    written = int.from_bytes(data[:2], "big", signed=True)
    assert written == layout(version)
    decoded = assignment_message(decode_assignment(data))
    assert codec_violations(x, version, written, decoded, "assignment") == []


@SOME
@given(x=subscriptions(), version=st.sampled_from(WRITER_VERSIONS))
def test_leader_view(x: dict[str, Any], version: int) -> None:
    """The leader's view (``to_api``) flattens owned partitions and reads a negative
    generation and a null or empty rack as absent."""
    decoded = decode_subscription(encode_subscription(to_subscription(x), version))
    api = decoded.to_api()
    got = {"topics": api.topics, "userData": api.user_data, "owned": api.owned_partitions,
           "generation": api.generation_id, "rack": api.rack_id}
    assert got == leader_view(subscription_message(decoded))


@SOME
@given(x=subscriptions())
def test_i10_every_writer_reader_pair(x: dict[str, Any]) -> None:
    """I10 for every (w, r) in 0..4 × 0..4, and readers far in the future: the bytes written
    at w with the header rewritten to r decode to x projected to min(w, r), defaults for the
    rest, the newer fields left over as ``remaining``.

    Where r's layout is larger than w's, the body ends exactly where w's layout ends, so the
    reader underflows on its first extra field: a CodecError (SchemaException) at the end of
    the input, naming that field. This is what Kafka's vectors ``v0-body-as-v1`` …
    ``v2-body-as-v3`` show (every one a SchemaException), so we require it."""
    for w in PAIR_VERSIONS:
        written = encode_subscription(to_subscription(x), w)
        for r in [*PAIR_VERSIONS, *FAR_FUTURE]:
            data = with_header(written, r)
            decoded, error = decoded_or_none(decode_subscription, subscription_message, data)
            assert codec_violations(x, w, r, decoded) == [], error
            if error is not None:
                first_missing = SUBSCRIPTION_FIELDS[layout(w) + 1][-1]
                assert (error.kafka_class, error.offset, error.field, error.version) == (
                    "SchemaException", len(data), first_missing, r)


@SOME
@given(x=assignments())
def test_i10_assignment_every_writer_reader_pair(x: dict[str, Any]) -> None:
    """I10 for assignments: all versions share one layout, so every (w, r) pair reads back
    all of x with nothing left over."""
    for w in PAIR_VERSIONS:
        written = encode_assignment(to_assignment(x), w)
        for r in [*PAIR_VERSIONS, *FAR_FUTURE]:
            decoded, error = decoded_or_none(decode_assignment, assignment_message,
                                             with_header(written, r))
            assert codec_violations(x, w, r, decoded, "assignment") == [], error


@SOME
@given(x=subscriptions(), version=st.sampled_from(WRITER_VERSIONS),
       trailing=st.binary(min_size=1, max_size=12), data=st.data())
def test_trailing_bytes_are_ignored(x: dict[str, Any], version: int, trailing: bytes,
                                    data: st.DataObject) -> None:
    """Bytes after the body change nothing but ``remaining``, under the written header or,
    for v3 bodies, a future one (read with the v3 layout)."""
    header = data.draw(st.sampled_from([layout(version), *(FAR_FUTURE if layout(version) == 3
                                                            else [])]))
    sub = with_header(encode_subscription(to_subscription(x), version), header)
    plain = subscription_message(decode_subscription(sub))
    extended = subscription_message(decode_subscription(sub + trailing))
    assert extended == {**plain, "remaining": plain["remaining"] + len(trailing)}
    a = encode_assignment(to_assignment(data.draw(assignments())), version)
    assert (assignment_message(decode_assignment(a + trailing))
            == {**assignment_message(decode_assignment(a)), "remaining": len(trailing)})


@SOME
@given(x=subscriptions(), version=st.sampled_from(WRITER_VERSIONS), data=st.data())
def test_encoding_is_canonical(x: dict[str, Any], version: int, data: st.DataObject) -> None:
    """Permuting the input order of topics and of owned partitions never changes the
    subscription's bytes (the writer sorts both, KAFKA-12898)."""
    shuffled = {**x, "topics": data.draw(st.permutations(x["topics"])),
                "owned": data.draw(st.permutations(x["owned"]))}
    assert (encode_subscription(to_subscription(shuffled), version)
            == encode_subscription(to_subscription(x), version))


@SOME
@given(x=subscriptions(max_topics=4), version=st.sampled_from(WRITER_VERSIONS))
def test_every_proper_prefix_is_rejected(x: dict[str, Any], version: int) -> None:
    """Every proper prefix of a valid encoding raises CodecError, never a value: the header
    fixes the layout and a valid body has no slack, so there is no prefix that "decodes to
    the defaults" (Kafka's vectors: all 1,658 truncated inputs raise). The error points
    inside the prefix and carries the header as read (None before it is complete).

    A prefix that ends where an older layout ends does decode, but only under that older
    header; under its own header it still fails."""
    message = canonical_subscription(x)
    for kind, data in [("subscription", encode_subscription(to_subscription(x), version)),
                       ("assignment", encode_assignment(to_assignment(
                           {"partitions": x["owned"], "userData": x["userData"]}), version))]:
        decode = decode_subscription if kind == "subscription" else decode_assignment
        for n in range(len(data)):
            with pytest.raises(CodecError) as caught:
                decode(data[:n])
            error = caught.value
            assert 0 <= error.offset <= n
            assert error.version == (layout(version) if n >= 2 else None)
            assert (error.field == "version") == (n < 2)
    for older in range(layout(version)):
        prefix = encode_subscription(to_subscription(x), version)[:subscription_size(message,
                                                                                     older)]
        decoded = subscription_message(decode_subscription(with_header(prefix, older)))
        assert decoded == {**project_subscription(message, older), "version": older,
                           "remaining": 0}


@SOME
@given(header=st.integers(-(1 << 15), -1), body=st.binary(max_size=40),
       version=st.integers(-(1 << 15), -1))
def test_negative_versions_are_rejected(header: int, body: bytes, version: int) -> None:
    """A negative header is rejected before the body is read, whatever follows; a negative
    version cannot be written."""
    data = header.to_bytes(2, "big", signed=True) + body
    for decode in (decode_subscription, decode_assignment):
        with pytest.raises(CodecError) as caught:
            decode(data)
        assert (caught.value.offset, caught.value.field, caught.value.version) == (
            0, "version", header)
    with pytest.raises(CodecError):
        encode_subscription(to_subscription({"topics": [], "userData": None, "owned": [],
                                             "generation": -1, "rack": None}), version)
    with pytest.raises(CodecError):
        encode_assignment(to_assignment({"partitions": [], "userData": None}), version)


@SOME
@given(x=subscriptions(), w=st.sampled_from(WRITER_VERSIONS), r=st.integers(0, (1 << 15) - 1))
def test_older_layouts_are_prefixes(x: dict[str, Any], w: int, r: int) -> None:
    """The body written at an older version is a prefix of the body written at a newer one
    (the broker reads every subscription as v0, so v0 must stay a prefix)."""
    sub = to_subscription(x)
    older, newer = sorted([w, r])
    assert (encode_subscription(sub, newer)[2:]
            .startswith(encode_subscription(sub, older)[2:]))
