"""Emulation of Java's ``HashMap`` iteration order, where Kafka's outputs depend on it.

Java iterates a HashMap bucket by bucket; within a bucket, entries keep insertion order
(resizes split buckets without reordering; treeified bins are ignored, as the spec allows).
``bucket = (h ^ (h >>> 16)) & (capacity - 1)``; the capacity starts at 16 (or
``table_size_for(initial)``) and doubles whenever size exceeds 0.75 * capacity.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import TypeVar

K = TypeVar("K")

_MAX_CAPACITY = 1 << 30


def _to_int32(h: int) -> int:
    h &= 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def string_hash(s: str) -> int:
    """Java ``String.hashCode``: ``31*h + c`` over UTF-16 code units, as int32."""
    raw = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for unit in struct.unpack(f">{len(raw) // 2}H", raw):
        h = (31 * h + unit) & 0xFFFFFFFF
    return _to_int32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """Java ``TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return _to_int32(31 * (31 + partition) + string_hash(topic))


def spread(h: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` on the unsigned 32-bit value."""
    u = h & 0xFFFFFFFF
    return u ^ (u >> 16)


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= cap (at least 1)."""
    n = 1
    while n < cap and n < _MAX_CAPACITY:
        n <<= 1
    return n


def capacity_for(size: int, initial: int = 16) -> int:
    """The table length after ``size`` puts into a map created with table length ``initial``."""
    cap = initial
    while size > cap * 3 // 4 and cap < _MAX_CAPACITY:
        cap <<= 1
    return cap


def capacity_for_copy(size: int) -> int:
    """Table length of ``new HashMap<>(m)`` / ``putAll`` into an empty map of ``size`` entries."""
    if size == 0:
        return 16
    t = int(size / 0.75 + 1.0)
    return capacity_for(size, table_size_for(t))


def hash_order(keys: Sequence[K], hashes: Sequence[int], capacity: int) -> list[K]:
    """Keys (distinct, in insertion order) in the order a HashMap of ``capacity`` iterates."""
    mask = capacity - 1
    decorated = sorted(range(len(keys)), key=lambda i: (spread(hashes[i]) & mask, i))
    return [keys[i] for i in decorated]


def string_map_order(keys: Iterable[str], capacity: int | None = None) -> list[str]:
    """Iteration order of a ``HashMap<String, _>`` filled with ``keys`` in this order.

    Without ``capacity`` the map is a default one (16, doubling as it grows).
    """
    ks = list(dict.fromkeys(keys))
    cap = capacity if capacity is not None else capacity_for(len(ks))
    return hash_order(ks, [string_hash(k) for k in ks], cap)


def partition_map_order(keys: Iterable[tuple[str, int]],
                        capacity: int | None = None) -> list[tuple[str, int]]:
    """Iteration order of a ``HashMap<TopicPartition, _>`` (or HashSet) filled in this order."""
    ks = list(dict.fromkeys(keys))
    cap = capacity if capacity is not None else capacity_for(len(ks))
    topic_hashes: dict[str, int] = {}
    hashes = []
    for t, p in ks:
        th = topic_hashes.get(t)
        if th is None:
            th = topic_hashes[t] = string_hash(t)
        hashes.append(_to_int32(31 * (31 + p) + th))
    return hash_order(ks, hashes, cap)
