"""A bounded pool of partition tuples shared between assignments.

A group leader assigns the same metadata again and again, and a large assignment spends most
of its time making the same ``(topic, p)`` tuples each time: a million new heap objects for
Kafka's scale shape, and the cyclic collector's passes over them. Tuples are immutable, so one
tuple can sit in many answers; this pool hands out, per (topic name, partition count), one
shared tuple of that topic's partitions, ``(topic, 0) .. (topic, count - 1)``.

Theory of operation. Entries are keyed by ``(topic, count)``: the same name and count
in two metadata snapshots share an entry, a topic whose count changed gets a new one (the
old one ages out). The pool holds at most ``capacity`` partitions in all; after a new entry
the least recently used ones are dropped until it fits again, and a topic larger than the
whole capacity is made afresh each time and never held. Assignors on several threads share
one pool: a lookup is two single steps under CPython's GIL (no lock), an insertion and the
drops after it hold a lock, and the tuples of an entry are made outside it (two threads may
both make one; the first stored one wins). `topic_partitions`, the assignors' way in, makes
topics of fewer than `POOLED_FROM` partitions directly: for the prover's and the audit's
small groups a lookup costs more than the few tuples. The pool only saves work: answers are
equal with it empty or full.

A first sticky assignment hands out every partition of the group's topics, in topic order,
from one sequence. `partition_run` gives it as one tuple, and the pool holds the last run
it made (its slots: 8 bytes a partition, the tuples are the entries'): assigning the same
metadata again then neither builds nor frees a list of a million slots. The run is dropped
with the first entry dropped, so it never keeps a dropped entry's tuples alive.

`add_free` picks a topic's free partitions for the sticky builders: from the pool when most
of the topic is free (a first assignment), else one by one (a reassignment keeps most
partitions, so a topic the pool does not hold is not made whole for a few of them).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from itertools import chain, compress, repeat

from ..types import TopicPartition

__all__ = ["DEFAULT_CAPACITY", "POOLED_FROM", "RUN_POOLED_FROM", "Made", "PartitionPool",
           "Partitions", "TopicCounts", "add_free", "partition_run", "shared_pool",
           "topic_partitions"]

#: a ``bytes.translate`` table turning a partition's "taken" mark (1) into "free" (1 where it
#: was 0), for picking the free ones with ``itertools.compress``
_FREE_MARKS = bytes([1]) + bytes(255)

#: topics with fewer partitions are made afresh by `topic_partitions`, not pooled
POOLED_FROM = 16

#: runs of fewer partitions are made afresh by `partition_run`, not held
RUN_POOLED_FROM = 1024

#: partitions the shared pool holds at most (64 bytes each, tuple and slot: about 130 MB)
DEFAULT_CAPACITY = 2_000_000

Partitions = tuple[TopicPartition, ...]
#: (topic, partition count) pairs in the order their partitions run
TopicCounts = tuple[tuple[str, int], ...]
#: told how many new tuples a lookup made
Made = Callable[[int], object]


class PartitionPool:
    """Per (topic, count), one shared tuple of the topic's partition tuples; bounded, LRU."""

    __slots__ = ("capacity", "_entries", "_held", "_lock", "_numbers", "_run")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 0:
            raise ValueError(f"capacity must be at least 0, not {capacity}")
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, int], Partitions] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        #: the partition numbers 0..n-1 as shared ints (most are not cached small ints), n the
        #: largest count made so far within the capacity
        self._numbers: tuple[int, ...] = ()
        #: the last run made of held entries only, with its (topic, count) pairs
        self._run: tuple[TopicCounts, Partitions] | None = None

    def partitions(self, topic: str, count: int, made: Made | None = None) -> Partitions:
        """``((topic, 0), ..., (topic, count - 1))``, shared with earlier callers; ``made``
        hears how many new tuples a miss made (the assignor's `CollectorPause.made`)."""
        found = self.get(topic, count)
        if found is not None:
            return found
        fresh = tuple(zip(repeat(topic), self._range(count)))
        if made is not None:
            made(count)
        if count > self.capacity:
            return fresh
        key = (topic, count)
        with self._lock:
            found = self._entries.setdefault(key, fresh)
            if found is not fresh:  # another thread made it meanwhile
                self._entries.move_to_end(key)
                return found
            self._held += count
            while self._held > self.capacity:
                _, dropped = self._entries.popitem(last=False)
                self._held -= len(dropped)
                self._run = None
        return fresh

    def run(self, topics: TopicCounts, made: Made | None = None) -> Partitions:
        """Every partition of ``topics`` in their order, ``((t0, 0), ..., (t1, 0), ...)``:
        the held run when it has these (topic, count) pairs, else a new one made of the
        entries (held when every topic's entry is). A hit refreshes its topics' entries."""
        held = self._run
        if held is not None and held[0] == topics:
            for topic, count in topics:
                self.get(topic, count)
            return held[1]
        parts = [self.partitions(topic, count, made) for topic, count in topics]
        fresh = tuple(chain.from_iterable(parts))
        with self._lock:  # not while a drop is on its way
            if all(self.get(t, count) is part
                   for (t, count), part in zip(topics, parts, strict=True)):
                self._run = (topics, fresh)
        return fresh

    def get(self, topic: str, count: int) -> Partitions | None:
        """The held partitions of ``topic`` with ``count`` partitions, or None (nothing made).

        No lock: each ``OrderedDict`` operation here is one step under CPython's GIL (the
        keys are str and int), and an entry dropped by another thread between the two
        steps is still a correct answer.
        """
        key = (topic, count)
        entries = self._entries
        found = entries.get(key)
        if found is not None:
            try:
                entries.move_to_end(key)
            except KeyError:  # dropped meanwhile by another thread
                pass
        return found

    def _range(self, count: int) -> tuple[int, ...] | range:
        """0..count-1, from the shared ints when the pool has that many."""
        numbers = self._numbers
        if count <= len(numbers):
            return numbers if count == len(numbers) else numbers[:count]
        if count <= self.capacity:
            self._numbers = numbers = tuple(range(count))
            return numbers
        return range(count)

    @property
    def held(self) -> int:
        """Partitions held now (never more than ``capacity``)."""
        return self._held

    def keys(self) -> list[tuple[str, int]]:
        """The (topic, count) entries held, least recently used first."""
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        """Drop every entry (the next lookups make their tuples again)."""
        with self._lock:
            self._entries.clear()
            self._held = 0
            self._numbers = ()
            self._run = None


#: the pool every builtin assignor shares
shared_pool = PartitionPool()


def topic_partitions(topic: str, count: int, made: Made | None = None) -> Partitions:
    """The shared pool's partitions of ``topic`` with ``count`` partitions; a small topic's
    are made afresh (cheaper than a lookup)."""
    if count < POOLED_FROM:
        if made is not None:
            made(count)
        return tuple(zip(repeat(topic), range(count)))
    return shared_pool.partitions(topic, count, made)


def partition_run(topics: TopicCounts, made: Made | None = None) -> Partitions:
    """Every partition of ``topics`` in their order: the shared pool's run
    (`PartitionPool.run`), or made afresh under `RUN_POOLED_FROM` partitions in all."""
    if sum(count for _, count in topics) < RUN_POOLED_FROM:
        return tuple(chain.from_iterable(topic_partitions(t, count, made) for t, count in topics))
    return shared_pool.run(topics, made)


def add_free(out: list[TopicPartition], topic: str, taken: bytearray,
             made: Made | None = None) -> None:
    """Append to ``out`` the partitions of ``topic`` whose mark in ``taken`` is 0, in order.

    Many free (a first assignment): the shared pool's tuples, made and held on a miss, picked
    in one C-level pass (``compress``). Few free (a reassignment, where most are kept): jump
    from free mark to free mark (``find``), taking the pool's tuple where the pool holds the
    topic and making just that tuple where it does not, so a reassignment on an empty pool
    never makes a whole topic's tuples for a few of them.
    """
    count = len(taken)
    free = count - taken.count(1)
    if 4 * free > count:
        partitions = shared_pool.partitions(topic, count, made)
        out.extend(partitions if free == count
                   else compress(partitions, taken.translate(_FREE_MARKS)))
        return
    held = shared_pool.get(topic, count)
    p = taken.find(0)
    while p >= 0:
        out.append((topic, p) if held is None else held[p])
        p = taken.find(0, p + 1)
