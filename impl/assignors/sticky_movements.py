"""Bookkeeping of the general builder: the member ``TreeSet``, ``PartitionMovements`` and
the previous owners of an older generation (``older_claims``).

``SortedMembers`` is Kafka's ``sortedCurrentSubscriptions``: members ordered by (number of
partitions, member id in Java order). ``PartitionMovements`` records where partitions moved in
this rebalance so that a move back undoes an earlier one (stickiness, KIP-54); when several
partitions qualify, Kafka takes the first of a ``HashSet``, whose order is emulated.
``state_key`` fingerprints who holds what, for the loop guard of deviation D4.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from hashlib import blake2b

from ..errors import AssignorError
from ..javahash import HashMapOrder
from ..types import TopicPartition
from ..user_data import DEFAULT_GENERATION, MemberData
from .sticky_common import member_key

__all__ = ["MAX_SWAP_PASSES", "PartitionMovements", "PrevOwner", "ReassignmentLimitError",
           "ReassignmentStats", "SortedMembers", "older_claims", "state_key"]

_ConsumerPair = tuple[str, str]
PrevOwner = tuple[str, int, bool]  # (member, generation, generation was reported)


def older_claims(members: list[str], member_data: dict[str, MemberData],
                 max_generation: int) -> dict[TopicPartition, PrevOwner]:
    """``prevAssignment`` (KIP-341, KAFKA-14639): each partition claimed by a member of a
    generation below ``max_generation``, with the highest such claimant (the first one on a
    tie); a member that reported no generation counts as ``DEFAULT_GENERATION``."""
    prev: dict[TopicPartition, PrevOwner] = {}
    for member in members:
        data = member_data[member]
        if data.generation is not None and data.generation < max_generation:
            generation = data.generation
        elif data.generation is None and max_generation > DEFAULT_GENERATION:
            generation = DEFAULT_GENERATION
        else:
            continue
        reported = data.generation is not None
        for tp in data.partitions:
            known = prev.get(tp)
            if known is None or generation > known[1]:
                prev[tp] = (member, generation, reported)
    return prev


#: Passes of one ``performReassignments`` call with the swap rule on before the build gives
#: up (Kafka's runs take a handful; a loop is caught as a repeated state long before).
MAX_SWAP_PASSES = 1000
_MASK64 = (1 << 64) - 1


class ReassignmentLimitError(AssignorError):
    """The reassignment loop went past a bound it provably stays within (D4)."""


@dataclass(frozen=True)
class ReassignmentStats:
    """What one general build's reassignment loop did (D4)."""

    passes: int  # passes over the reassignable partitions, both calls together
    moves: int  # partitions moved
    swap_rule_dropped: bool  # a pass would have repeated: Kafka's loop would never end


@lru_cache(maxsize=65536)
def _name_code(name: str) -> int:
    """64 bits of a member id or topic (Java's ``hashCode`` collides too easily: "Aa"/"BB")."""
    return int.from_bytes(blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest())


def state_key(tp: TopicPartition, member: str) -> int:
    """A 64-bit key of "``tp`` is held by ``member``" (the XOR of the keys of an assignment
    fingerprints it; deterministic, unlike Python's salted ``hash``)."""
    h = (_name_code(tp[0]) * 0x9E3779B97F4A7C15 + tp[1] * 0xBF58476D1CE4E5B9
         + _name_code(member) * 0x94D049BB133111EB) & _MASK64
    h ^= h >> 31
    h = (h * 0xD6E8FEB86659FD93) & _MASK64
    return h ^ (h >> 32)


class SortedMembers:
    """Members by (size, id); sizes change only between ``discard`` and ``add``."""

    def __init__(self, sizes: dict[str, int]) -> None:
        self._sizes = sizes
        self._buckets: dict[int, list[tuple[str, str]]] = {}
        self._where: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, member: object) -> bool:
        return member in self._where

    def add(self, member: str) -> None:
        if member in self._where:
            return
        size = self._sizes[member]
        insort(self._buckets.setdefault(size, []), (member_key(member), member))
        self._where[member] = size

    def discard(self, member: str) -> None:
        size = self._where.pop(member, None)
        if size is None:
            return
        bucket = self._buckets[size]
        del bucket[bisect_left(bucket, (member_key(member), member))]
        if not bucket:
            del self._buckets[size]

    def resize_many(self, members: list[str]) -> None:
        """Re-file many members whose sizes changed (in bulk, for the first assignment)."""
        moved = set(members)
        for size in {self._where[m] for m in moved if m in self._where}:
            kept = [e for e in self._buckets[size] if e[1] not in moved]
            if kept:
                self._buckets[size] = kept
            else:
                del self._buckets[size]
        fresh: dict[int, list[tuple[str, str]]] = {}
        for member in moved:
            size = self._where[member] = self._sizes[member]
            fresh.setdefault(size, []).append((member_key(member), member))
        for size, entries in fresh.items():
            bucket = self._buckets.setdefault(size, [])
            bucket.extend(entries)
            bucket.sort()

    def __iter__(self) -> Iterator[str]:
        for size in sorted(self._buckets):
            for _, member in list(self._buckets[size]):
                yield member

    def first_subscribed(self, topic: str, topics_of: dict[str, set[str]],
                         reject: Callable[[str], bool] | None = None) -> str | None:
        """The first member (in set order) that may take ``topic`` and is not rejected."""
        for size in sorted(self._buckets):
            for _, member in self._buckets[size]:
                if topic in topics_of[member] and (reject is None or not reject(member)):
                    return member
        return None

    def first(self) -> str:
        return self._buckets[min(self._buckets)][0][1]

    def last(self) -> str:
        return self._buckets[max(self._buckets)][-1][1]

    def min_size(self) -> int:
        return min(self._buckets)

    def max_size(self) -> int:
        return max(self._buckets)


class PartitionMovements:
    """Kafka's ``PartitionMovements``: per partition its (source, destination) this round."""

    def __init__(self) -> None:
        self._movements: dict[TopicPartition, _ConsumerPair] = {}
        self._by_topic: dict[str, dict[_ConsumerPair, HashMapOrder]] = {}

    def _remove_record(self, tp: TopicPartition) -> _ConsumerPair:
        pair = self._movements.pop(tp)
        per_topic = self._by_topic[tp[0]]
        per_topic[pair].remove(tp)
        if not len(per_topic[pair]):
            del per_topic[pair]
        if not per_topic:
            del self._by_topic[tp[0]]
        return pair

    def _add_record(self, tp: TopicPartition, pair: _ConsumerPair) -> None:
        self._movements[tp] = pair
        per_topic = self._by_topic.setdefault(tp[0], {})
        if pair not in per_topic:
            per_topic[pair] = HashMapOrder()
        per_topic[pair].put(tp)

    def move_partition(self, tp: TopicPartition, old: str, new: str) -> None:
        """Record a move; a move back to where the partition started cancels the record."""
        if tp in self._movements:
            source = self._remove_record(tp)[0]
            if source != new:
                self._add_record(tp, (source, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """``getTheActualPartitionToBeMoved``: prefer undoing a move from ``new`` to ``old``."""
        per_topic = self._by_topic.get(tp[0])
        if per_topic is None:
            return tp
        if tp in self._movements:
            old = self._movements[tp][0]
        reverse = per_topic.get((new, old))
        if reverse is None:
            return tp
        first: TopicPartition = reverse.first()
        return first
