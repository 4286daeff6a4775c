"""User data of the sticky assignors: Kafka's recorded bytes, and the leader's fallbacks."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from groupcheck.impl.types import Assignment
from groupcheck.impl.user_data import (
    MemberData,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    group_partitions_by_topic,
)

from helpers.sticky_vectors import STICKY_NAMES, b64, make, pairs
from helpers.vectors import line_id, load

LINES = [(i, x) for i, x in enumerate(load("codec.jsonl"))
         if x["request"]["op"] == "user_data" and x["request"]["assignor"] in STICKY_NAMES]


@pytest.mark.parametrize("index,line", LINES, ids=[line_id(i, x) for i, x in LINES])
def test_user_data_matches_kafka(index: int, line: dict[str, Any]) -> None:
    """What a consumer sends after it was given ``owned`` in ``generation``."""
    request = line["request"]
    assignor = make(request["assignor"])
    if request["generation"] is not None:
        assignor.on_assignment(Assignment(pairs(request["owned"])), request["generation"])
    got = assignor.subscription_user_data(set(request["topics"]))
    assert b64(got) == line["response"]["userData"]
    if got is not None and request["assignor"] == "sticky":
        decoded = decode_sticky_user_data(got)
        assert sorted(decoded.partitions) == sorted(pairs(request["owned"]))
        assert decoded.generation == request["generation"]


def test_spec_example_v1() -> None:
    """Spec §2: t1:[0,1] at generation 5."""
    data = encode_sticky_user_data([("t1", 0), ("t1", 1)], 5)
    assert data.hex() == "00000001" "00027431" "00000002" "00000000" "00000001" "00000005"


def test_sticky_decode_fallbacks() -> None:
    """KIP-341: null or empty -> nothing, generation absent; v0 -> generation absent;
    unreadable -> nothing at generation -1; trailing bytes ignored."""
    v0 = encode_sticky_user_data([("t", 3)], None)
    assert decode_sticky_user_data(None) == MemberData([], None)
    assert decode_sticky_user_data(b"") == MemberData([], None)
    assert decode_sticky_user_data(v0) == MemberData([("t", 3)], None)
    assert decode_sticky_user_data(v0[:-1]) == MemberData([], -1)
    assert decode_sticky_user_data(b"\xff\xff\xff\xff") == MemberData([], -1)
    v1 = encode_sticky_user_data([("t", 3)], 7)
    assert decode_sticky_user_data(v1 + b"junk") == MemberData([("t", 3)], 7)


def test_cooperative_user_data() -> None:
    """KAFKA-12984: the generation alone; null -> absent, unreadable -> -1."""
    assert encode_cooperative_user_data(-1) == b"\xff\xff\xff\xff"
    assert decode_cooperative_user_data(None) is None
    assert decode_cooperative_user_data(b"\x00\x00\x00\x05extra") == 5
    assert decode_cooperative_user_data(b"\x00\x05") == -1


def test_grouping_follows_compute_if_absent() -> None:
    """``computeIfAbsent`` links new keys at the head of a bucket: colliding topics
    ("AaAa", "AaBB", "BBBB" share a hash) come out in reverse order of first use."""
    grouped = group_partitions_by_topic([("AaAa", 0), ("AaBB", 1), ("BBBB", 2), ("AaAa", 3)])
    assert grouped == [("BBBB", [2]), ("AaBB", [1]), ("AaAa", [0, 3])]
    assert base64.b64decode(b64(encode_sticky_user_data([("x", 1)], 2)) or "")[-4:] == \
        b"\x00\x00\x00\x02"
