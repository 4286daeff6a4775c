"""User data of the two sticky assignors, as Kafka writes it: no version header.

* ``StickyAssignor`` (KIP-54, KIP-341): v0 = array of ``{topic, partitions}``; v1 = v0 +
  ``int32 generation``. Topics are written in the order of Java's ``HashMap`` grouping
  (``CollectionUtils.groupPartitionsByTopic``), partitions in list order, duplicates kept.
* ``CooperativeStickyAssignor`` (KAFKA-12984): ``int32 generation``.

Decoding is the leader's lenient fallback: it never raises. The sticky decoder tries v1,
then v0 (generation absent), and gives up with no partitions at generation -1.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .errors import CodecError
from .javahash import compute_if_absent_order
from .types import TopicPartition
from .wire import Reader, Writer

__all__ = ["DEFAULT_GENERATION", "MemberData", "decode_cooperative_user_data",
           "decode_sticky_user_data", "encode_cooperative_user_data", "encode_sticky_user_data",
           "group_partitions_by_topic"]

DEFAULT_GENERATION = -1


@dataclass(frozen=True)
class MemberData:
    """What the leader learns of a member's previous assignment (Kafka's ``MemberData``).

    ``generation`` is ``None`` for Java's ``Optional.empty()``.
    """

    partitions: list[TopicPartition]
    generation: int | None


def group_partitions_by_topic(partitions: list[TopicPartition]) -> list[tuple[str, list[int]]]:
    """``CollectionUtils.groupPartitionsByTopic``: a ``HashMap`` filled by ``computeIfAbsent``."""
    grouped: dict[str, list[int]] = {}
    for topic, partition in partitions:
        grouped.setdefault(topic, []).append(partition)
    if len(grouped) == 1:
        return list(grouped.items())
    order = compute_if_absent_order(tp[0] for tp in partitions)
    return [(topic, grouped[topic]) for topic in order]


def encode_sticky_user_data(partitions: list[TopicPartition], generation: int | None) -> bytes:
    """v1 when ``generation`` is given (the client always gives it), else v0."""
    w = Writer()
    entries = group_partitions_by_topic(partitions)
    w.int32(len(entries))
    for topic, numbers in entries:
        w.string(topic, "topic")
        w.int32_array(numbers)
    if generation is not None:
        w.int32(generation)
    return w.getvalue()


class _Malformed(Exception):
    """The bytes do not parse under the schema being tried."""


_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def _read_topic_partitions(buf: bytes, names: dict[bytes, str]) -> tuple[list[TopicPartition], int]:
    """``array of {topic string, partitions array of int32}`` from the start of ``buf``.

    Fails where Kafka's ``Schema.read`` throws: short buffer, negative length or count, or a
    count larger than the bytes left. Topic names decode as Java does (U+FFFD replacement).
    """
    end = len(buf)
    if end < 4:
        raise _Malformed
    (count,) = _I32.unpack_from(buf, 0)
    pos = 4
    if count < 0 or count > end - pos:
        raise _Malformed
    out: list[TopicPartition] = []
    append, extend = out.append, out.extend
    i16, i32, lookup = _I16.unpack_from, _I32.unpack_from, names.get
    for _ in range(count):
        if end - pos < 6:
            raise _Malformed
        length = i16(buf, pos)[0]
        pos += 2
        if length < 0 or length + 4 > end - pos:
            raise _Malformed
        raw = buf[pos:pos + length]
        topic = lookup(raw)
        if topic is None:
            topic = names[raw] = raw.decode("utf-8", "groupcheck-java-replace")
        pos += length
        n = i32(buf, pos)[0]
        pos += 4
        if n == 1 and end - pos >= 4:
            append((topic, i32(buf, pos)[0]))
            pos += 4
            continue
        if n < 0 or 4 * n > end - pos:
            raise _Malformed
        extend([(topic, p) for p in struct.unpack_from(f">{n}i", buf, pos)])
        pos += 4 * n
    return out, pos


def decode_sticky_user_data(data: bytes | None, names: dict[bytes, str] | None = None
                            ) -> MemberData:
    """The leader's reading of ``StickyAssignor`` user data (KIP-341 fallback chain).

    Null or empty: no partitions, generation absent. v1 first (it underflows on v0 bytes),
    then v0 (generation absent); if both fail: no partitions, generation -1. Trailing bytes
    are ignored, as Kafka's ``Schema.read`` does. ``names`` caches decoded topic names.
    """
    if not data:
        return MemberData([], None)
    buf = bytes(data)
    try:
        partitions, pos = _read_topic_partitions(buf, {} if names is None else names)
    except _Malformed:
        return MemberData([], DEFAULT_GENERATION)
    if len(buf) - pos >= 4:
        return MemberData(partitions, _I32.unpack_from(buf, pos)[0])
    return MemberData(partitions, None)


def encode_cooperative_user_data(generation: int) -> bytes:
    """``CooperativeStickyAssignor`` user data: the generation alone."""
    w = Writer()
    w.int32(generation)
    return w.getvalue()


def decode_cooperative_user_data(data: bytes | None) -> int | None:
    """The generation in cooperative user data: ``None`` when null, -1 when unreadable."""
    if data is None:
        return None
    try:
        return Reader(data, "cooperative user data").int32("generation")
    except CodecError:
        return DEFAULT_GENERATION
