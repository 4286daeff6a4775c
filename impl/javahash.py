"""Emulation of Java's ``HashMap`` iteration order, where Kafka's outputs depend on it.

Java iterates a HashMap bucket by bucket; within a bucket, entries keep insertion order
(resizes split buckets without reordering; treeified bins are ignored, as the spec allows).
``bucket = (h ^ (h >>> 16)) & (capacity - 1)``; the capacity starts at 16 (or
``table_size_for(initial)``) and doubles whenever size exceeds 0.75 * capacity.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

__all__ = ["HashMapOrder", "capacity_for", "capacity_for_copy", "compute_if_absent_order",
           "hash_order", "java_string_key", "partition_map_order", "spread", "string_hash",
           "string_map_order", "table_size_for", "topic_partition_hash"]

_K = TypeVar("_K")

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


def hash_order(keys: Sequence[_K], hashes: Sequence[int], capacity: int) -> list[_K]:
    """Keys (distinct, in insertion order) in the order a HashMap of ``capacity`` iterates."""
    mask = capacity - 1
    buckets = [spread(h) & mask for h in hashes]
    return [keys[i] for i in sorted(range(len(keys)), key=buckets.__getitem__)]  # stable


def string_map_order(keys: Iterable[str], capacity: int | None = None) -> list[str]:
    """Iteration order of a ``HashMap<String, _>`` filled with ``keys`` in this order.

    Without ``capacity`` the map is a default one (16, doubling as it grows).
    """
    ks = list(dict.fromkeys(keys))
    cap = capacity if capacity is not None else capacity_for(len(ks))
    return hash_order(ks, [_cached_string_hash(k) for k in ks], cap)


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


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _surrogates(match: re.Match[str]) -> str:
    cp = ord(match.group()) - 0x10000
    return chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF))


def java_string_key(s: str) -> str:
    """A key whose Python order equals Java ``String.compareTo`` order (UTF-16 code units).

    Astral characters become their surrogate pair, so every character of the key is one
    UTF-16 code unit; strings without astral characters are their own key.
    """
    return _ASTRAL.sub(_surrogates, s) if _ASTRAL.search(s) else s


class HashMapOrder:
    """The key order of one live Java ``HashMap`` (or ``HashSet``) as it is mutated.

    Within a bucket Java keeps insertion order, a removed key that comes back goes to the
    end, and ``clear()`` keeps the table length; resizes never reorder a bucket.
    """

    __slots__ = ("capacity", "_seq", "_keys", "_hash")

    def __init__(self, capacity: int = 16, hash_fn: Callable[[Any], int] | None = None) -> None:
        self.capacity = capacity
        self._seq = 0
        self._keys: dict[Any, int] = {}
        self._hash = hash_fn or _default_hash

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def put(self, key: Any) -> None:
        """``put``/``add``: a new key joins the end of its bucket; a present one stays."""
        if key in self._keys:
            return
        self._seq += 1
        self._keys[key] = self._seq
        if len(self._keys) > self.capacity * 3 // 4 and self.capacity < _MAX_CAPACITY:
            self.capacity <<= 1

    def remove(self, key: Any) -> None:
        self._keys.pop(key, None)

    def clear(self) -> None:
        self._keys.clear()

    def order(self) -> list[Any]:
        """The keys in the order Java iterates them now."""
        mask = self.capacity - 1
        h = self._hash
        return sorted(self._keys, key=lambda k: (spread(h(k)) & mask, self._keys[k]))

    def first(self) -> Any:
        """``iterator().next()`` (the map must not be empty)."""
        mask = self.capacity - 1
        h = self._hash
        return min(self._keys, key=lambda k: (spread(h(k)) & mask, self._keys[k]))


def _default_hash(key: Any) -> int:
    if isinstance(key, str):
        return string_hash(key)
    topic, partition = key
    return topic_partition_hash(topic, partition)


def compute_if_absent_order(calls: Iterable[str]) -> list[str]:
    """Key order of a default ``HashMap<String, _>`` filled only by ``computeIfAbsent``.

    Unlike ``put``, ``HashMap.computeIfAbsent`` links a new key at the *head* of its bucket
    and resizes at the start of a call (when the size already exceeds the threshold), not
    after the insertion. ``calls`` are the keys of every call, repeats included.
    """
    capacity = 16
    seq: dict[str, int] = {}
    previous = None
    for key in calls:
        if len(seq) > capacity * 3 // 4 and capacity < _MAX_CAPACITY:
            capacity <<= 1
        if key == previous:
            continue
        previous = key
        if key not in seq:
            seq[key] = len(seq)
    mask = capacity - 1
    return sorted(seq, key=lambda k: (spread(_cached_string_hash(k)) & mask, -seq[k]))


_hash_cache: dict[str, int] = {}


def _cached_string_hash(s: str) -> int:
    h = _hash_cache.get(s)
    if h is None:
        if len(_hash_cache) > 100_000:
            _hash_cache.clear()
        h = _hash_cache[s] = string_hash(s)
    return h
