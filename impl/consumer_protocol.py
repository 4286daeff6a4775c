"""ConsumerProtocolSubscription and ConsumerProtocolAssignment, versions 0 to 3.

Rules (Kafka's ``ConsumerProtocol``): big-endian, non-flexible; ``int16 version`` then the body.
The writer sorts topics and owned partitions (KAFKA-12898) and silently drops fields the version
lacks; versions above 3 are written as 3 and read with the v3 layout; trailing bytes are
ignored; a negative version is rejected. Decoding returns the raw message (`SubscriptionData`,
`AssignmentData`); ``to_api()`` gives what the group leader sees (generation < 0 and an empty
rack read as absent). Every malformed input raises `CodecError`, nothing else.

Subscriptions, which every rebalance writes and reads once per member, go through one pass
first (`encode_ascii_subscription`, `decode_well_formed_subscription`) that handles the
usual message with local variables and no call per field; anything out of the ordinary
(a non-ASCII name, a bad length, malformed UTF-8) goes to the field-by-field writer and
reader (`write_subscription_fields`, `read_subscription_fields`), whose values and errors
are the reference. A test holds the two paths equal.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import groupby, repeat
from operator import itemgetter

from .errors import CodecError
from .javahash import java_string_key
from .types import Assignment, Subscription, TopicPartition
from .wire import Reader, Writer

__all__ = ["HIGHEST_VERSION", "AssignmentData", "SubscriptionData", "TopicPartitions",
           "decode_assignment", "decode_subscription", "decode_well_formed_subscription",
           "encode_ascii_subscription", "encode_assignment", "encode_subscription",
           "read_subscription_fields", "write_subscription_fields"]

HIGHEST_VERSION = 3
_MAX_NAME = 0x7FFF  # the longest string an int16 length can carry
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_TOPIC, _PARTITION = itemgetter(0), itemgetter(1)

TopicPartitions = tuple[str, list[int]]


def _check_version(version: int, what: str) -> int:
    if version < 0:
        raise CodecError(f"Unsupported {what} version: {version}", offset=0, field="version",
                         version=version)
    return min(version, HIGHEST_VERSION)


def _group_by_topic(partitions: Iterable[TopicPartition]) -> list[TopicPartitions]:
    """Consecutive runs of one topic become one entry (order kept, duplicates kept)."""
    out: list[TopicPartitions] = []
    current: list[int] = []
    for topic, p in partitions:
        if not out or topic != out[-1][0]:
            current = []
            out.append((topic, current))
        current.append(p)
    return out


def _flatten(entries: Iterable[TopicPartitions]) -> list[TopicPartition]:
    """``[(topic, [p, ...]), ...]`` as one list of (topic, p), in order."""
    out: list[TopicPartition] = []
    for topic, numbers in entries:
        out += zip(repeat(topic), numbers)
    return out


def _all_ascii(strings: Iterable[str]) -> bool:
    """True when every item is an ASCII string; there Python's order is Java's."""
    try:
        return "".join(strings).isascii()
    except TypeError:
        return False


def _java_sorted(strings: Iterable[str]) -> list[str]:
    """Sorted in Java's ``String`` order (UTF-16 code units)."""
    items = list(strings)
    return sorted(items) if _all_ascii(items) else sorted(items, key=java_string_key)


def _canonical_owned(owned: Iterable[TopicPartition]) -> list[TopicPartitions]:
    """Owned partitions sorted by (topic, partition) and grouped per topic (KAFKA-12898)."""
    items = list(owned)
    if _all_ascii(tp[0] for tp in items):
        return _group_by_topic(sorted(items))
    return _group_by_topic(sorted(items, key=lambda tp: (java_string_key(tp[0]), tp[1])))


def _write_topic_partitions(w: Writer, entries: list[TopicPartitions]) -> None:
    w.keyed_int32_arrays(entries, "topic")


def encode_subscription(sub: Subscription, version: int = HIGHEST_VERSION) -> bytes:
    """Kafka's writer: canonical order, newer fields dropped for older versions."""
    v = _check_version(version, "subscription")
    quick = encode_ascii_subscription(sub, v)
    return quick if quick is not None else write_subscription_fields(sub, v)


def write_subscription_fields(sub: Subscription, v: int) -> bytes:
    """The writer field by field (``v`` already checked): the reference for every input."""
    w = Writer()
    w.int16(v)
    topics = _java_sorted(sub.topics)
    w.int32(len(topics))
    w.strings(topics, "topicsElement")
    w.bytes_(sub.user_data)
    if v >= 1:
        _write_topic_partitions(w, _canonical_owned(sub.owned_partitions))
    if v >= 2:
        w.int32(-1 if sub.generation_id is None else sub.generation_id)
    if v >= 3:
        w.string(sub.rack_id, "rackId")
    return w.getvalue()


def encode_ascii_subscription(sub: Subscription, v: int) -> bytes | None:
    """`encode_subscription`'s bytes in one pass, for the usual subscription: every name an
    ASCII string of at most 32,767 characters (then Python's order is Java's and a name's
    UTF-8 is its ASCII), user data bytes or None. None for anything else, and the field by
    field writer takes over (its values and errors are the reference)."""
    names = sub.topics
    rack = sub.rack_id
    try:
        if not ("".join(names) + (rack or "")).isascii() or max(map(len, names), default=0) \
                > _MAX_NAME or (rack is not None and len(rack) > _MAX_NAME):
            return None
        topics = sorted(names)
        i16, i32 = _I16.pack, _I32.pack
        parts = [i16(v), i32(len(topics))]
        for topic in topics:
            parts += (i16(len(topic)), topic.encode("ascii"))
        data = sub.user_data
        if data is None:
            parts.append(i32(-1))
        elif type(data) is bytes:
            parts += (i32(len(data)), data)
        else:
            return None
        if v >= 1:
            entries = [(topic, list(map(_PARTITION, run)))
                       for topic, run in groupby(sorted(sub.owned_partitions), _TOPIC)]
            parts.append(i32(len(entries)))
            for topic, numbers in entries:
                if len(topic) > _MAX_NAME or not topic.isascii():
                    return None
                n = len(numbers)
                parts += (i16(len(topic)), topic.encode("ascii"), i32(n),
                          struct.pack(f">{n}i", *numbers))
        if v >= 2:
            parts.append(i32(-1 if sub.generation_id is None else sub.generation_id))
        if v >= 3:
            parts += (i16(-1),) if rack is None else (i16(len(rack)), rack.encode("ascii"))
    except (TypeError, AttributeError, IndexError, struct.error):
        return None
    return b"".join(parts)


def encode_assignment(assignment: Assignment, version: int = HIGHEST_VERSION) -> bytes:
    """Entries in first-appearance order of their topic, partitions in list order."""
    v = _check_version(version, "assignment")
    by_topic: dict[str, list[int]] = {}
    for t, p in assignment.partitions:
        by_topic.setdefault(t, []).append(p)
    w = Writer()
    w.int16(v)
    _write_topic_partitions(w, list(by_topic.items()))
    w.bytes_(assignment.user_data)
    return w.getvalue()


@dataclass
class SubscriptionData:
    """The raw message as read: ``generation_id`` -1 by default, ``rack_id`` "" kept."""

    version: int
    topics: list[str]
    user_data: bytes | None
    owned_partitions: list[TopicPartitions] = field(default_factory=list)
    generation_id: int = -1
    rack_id: str | None = None
    remaining: int = 0

    def to_api(self, group_instance_id: str | None = None) -> Subscription:
        """What the leader's assignor sees (ConsumerProtocol.deserializeSubscription)."""
        return Subscription(
            topics=list(self.topics),
            user_data=self.user_data,
            owned_partitions=_flatten(self.owned_partitions),
            generation_id=self.generation_id if self.generation_id >= 0 else None,
            rack_id=self.rack_id or None,
            group_instance_id=group_instance_id,
        )


@dataclass
class AssignmentData:
    """The raw assignment message as read."""

    version: int
    assigned_partitions: list[TopicPartitions]
    user_data: bytes | None
    remaining: int = 0

    def to_api(self) -> Assignment:
        return Assignment(_flatten(self.assigned_partitions), self.user_data)


def _read_header(r: Reader, what: str) -> int:
    saved, r.context = r.context, "header"
    version = r.int16("version")
    r.context = saved
    r.version = version
    _check_version(version, what)
    return version


def _read_topic_partitions(r: Reader, field_name: str) -> list[TopicPartitions]:
    n = r.count(field_name, 6)  # int16 topic length + int32 partition count at least
    return r.keyed_int32_arrays(n, "topic", "partitions")


def decode_subscription(data: bytes | bytearray | memoryview) -> SubscriptionData:
    """Read a subscription of any version; versions above 3 use the v3 layout."""
    buf = data if type(data) is bytes else bytes(data)
    quick = decode_well_formed_subscription(buf)
    return quick if quick is not None else read_subscription_fields(buf)


def read_subscription_fields(data: bytes | bytearray | memoryview) -> SubscriptionData:
    """The reader field by field: the reference value or `CodecError` for every input."""
    r = Reader(data, "subscription")
    version = _read_header(r, "subscription")
    layout = min(version, HIGHEST_VERSION)
    n = r.count("topics", 2)
    topics = r.texts(n, "topics element")
    user_data = r.bytes_("userData")
    result = SubscriptionData(version, topics, user_data)
    if layout >= 1:
        result.owned_partitions = _read_topic_partitions(r, "ownedPartitions")
    if layout >= 2:
        result.generation_id = r.int32("generationId")
    if layout >= 3:
        result.rack_id = r.string("rackId", nullable=True)
    result.remaining = r.remaining
    return result


def decode_assignment(data: bytes | bytearray | memoryview) -> AssignmentData:
    """Read an assignment of any version (the layout is the same in all of them)."""
    r = Reader(data, "assignment")
    version = _read_header(r, "assignment")
    assigned = _read_topic_partitions(r, "assignedPartitions")
    user_data = r.bytes_("userData")
    return AssignmentData(version, assigned, user_data, r.remaining)


def decode_well_formed_subscription(buf: bytes) -> SubscriptionData | None:
    """`decode_subscription`'s value in one pass, for a well-formed subscription: every
    length and count in bounds, every name valid UTF-8. None for anything else, and the
    field by field reader takes over (its values and errors are the reference). Whatever
    this pass reads, the field by field reader reads the same: each array item it read took
    at least the bytes that reader's count check asks for."""
    i16, i32 = _I16.unpack_from, _I32.unpack_from
    end = len(buf)
    try:
        version = i16(buf, 0)[0]
        n = i32(buf, 2)[0]
        pos = 6
        if version < 0 or n < 0 or 2 * n > end - pos:
            return None
        topics: list[str] = []
        for _ in range(n):
            k = i16(buf, pos)[0]
            first = pos + 2
            pos = first + k
            if k < 0 or pos > end:
                return None
            topics.append(buf[first:pos].decode("utf-8"))
        k = i32(buf, pos)[0]
        pos += 4
        user_data = None
        if k >= 0:
            if pos + k > end:
                return None
            user_data = buf[pos:pos + k]
            pos += k
        result = SubscriptionData(version, topics, user_data)
        if version >= 1:
            n = i32(buf, pos)[0]
            pos += 4
            if n < 0 or 6 * n > end - pos:
                return None
            owned: list[TopicPartitions] = []
            for _ in range(n):
                k = i16(buf, pos)[0]
                first = pos + 2
                pos = first + k
                count = i32(buf, pos)[0]
                values = pos + 4
                pos = values + 4 * count
                if k < 0 or count < 0 or pos > end:
                    return None
                owned.append((buf[first:first + k].decode("utf-8"),
                              list(struct.unpack_from(f">{count}i", buf, values))))
            result.owned_partitions = owned
        if version >= 2:
            result.generation_id = i32(buf, pos)[0]
            pos += 4
        if version >= 3:
            k = i16(buf, pos)[0]
            pos += 2
            if k >= 0:
                if pos + k > end:
                    return None
                result.rack_id = buf[pos:pos + k].decode("utf-8")
                pos += k
    except (struct.error, UnicodeDecodeError):
        return None
    result.remaining = end - pos
    return result
