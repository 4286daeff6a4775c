"""Kafka's ``RangeAssignor`` ("range"), list-for-list equal to the Java client.

Per topic, the subscribers in MemberInfo order (static members first, KAFKA-8355) take
contiguous ranges: ``n // c`` partitions each, one more for the first ``n % c``.

Orders that Java leaves to ``HashMap`` iteration are emulated: the result's member order is
the leader's ``HashMap<String, _>`` order, and a member's list follows the order of the
``HashMap`` of topics built from the ``HashSet`` of all subscribed topics.

Rack-aware range (KIP-881) runs when some topic needs it (consumer racks meet replica racks,
and not every partition has the same rack set): first a rack-matching pass (co-partitioned
topics, i.e. same subscribers and same partition count, are matched index by index,
KAFKA-14891), then plain range for the rest with unchanged quotas, then every member's list
is sorted by (topic, partition).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter

from ..javahash import java_string_key, string_map_order
from ..types import Assignment, Cluster, Subscription, TopicPartition
from .common import StatelessEagerAssignor, member_info_order, partition_count
from .partition_pool import POOLED_FROM, topic_partitions

__all__ = ["RangeAssignor"]


class _TopicState:
    """One topic's quotas and unassigned partitions (Kafka: ``TopicAssignmentState``)."""

    def __init__(self, topic: str, count: int, consumers: Sequence[str],
                 consumer_racks: dict[str, str], cluster: Cluster) -> None:
        self.topic = topic
        self.count = count
        self.consumers = consumers
        self.racks = {c: consumer_racks.get(c) for c in consumers}
        self.assigned = dict.fromkeys(consumers, 0)
        self.taken = bytearray(count)
        self.left = count
        self.base, self.extra = divmod(count, len(consumers)) if consumers else (0, 0)
        member_racks = {r for r in self.racks.values() if r is not None}
        # Partition racks are only gathered when some subscriber has a rack.
        self.partition_racks: list[frozenset[str]] = []
        union: set[str] = set()
        if member_racks:
            self.partition_racks = [frozenset(cluster.replica_racks(topic, p))
                                    for p in range(count)]
            for racks in self.partition_racks:
                union |= racks
        self.needs_rack_aware = bool(member_racks & union) and not all(
            racks == union for racks in self.partition_racks)
        self._pointers: dict[str | None, int] = {}
        self._by_rack: dict[str, list[int]] = {}

    def max_assignable(self, consumer: str) -> int:
        quota = self.base + (1 if self.extra > 0 else 0)
        return max(0, quota - self.assigned[consumer])

    def racks_match(self, consumer: str, partition: int) -> bool:
        rack = self.racks[consumer]
        return rack is None or rack in self.partition_racks[partition]

    def take(self, consumer: str, partitions: list[int],
             result: dict[str, list[TopicPartition]]) -> None:
        result[consumer].extend(zip(repeat(self.topic), partitions, strict=False))
        n = self.assigned[consumer] + len(partitions)
        self.assigned[consumer] = n
        if n > self.base:
            self.extra -= 1
        for p in partitions:
            self.taken[p] = 1
        self.left -= len(partitions)

    def first_free(self, consumer: str, limit: int, rack_aware: bool) -> list[int]:
        """The ``limit`` lowest unassigned partitions (matching the consumer's rack if asked).

        Each rack keeps a scan pointer: everything matching before it is already assigned.
        """
        rack = self.racks[consumer] if rack_aware else None
        if rack is None:
            candidates: Sequence[int] = range(self.count)
        else:
            if rack not in self._by_rack:
                self._by_rack[rack] = [p for p, racks in enumerate(self.partition_racks)
                                       if rack in racks]
            candidates = self._by_rack[rack]
        i = self._pointers.get(rack, 0)
        picked: list[int] = []
        taken = self.taken
        while i < len(candidates) and len(picked) < limit:
            p = candidates[i]
            if not taken[p]:
                picked.append(p)
            i += 1
        self._pointers[rack] = i
        return picked


def _assign_ranges(state: _TopicState, rack_aware: bool,
                   result: dict[str, list[TopicPartition]]) -> None:
    """Each consumer in order takes the lowest free partitions allowed, up to its quota."""
    for consumer in state.consumers:
        if state.left == 0:
            break
        limit = state.max_assignable(consumer)
        if limit == 0:
            continue
        picked = state.first_free(consumer, limit, rack_aware)
        if picked:
            state.take(consumer, picked, result)


def _assign_co_partitioned(states: list[_TopicState], count: int,
                           result: dict[str, list[TopicPartition]]) -> None:
    """KAFKA-14891: partition p of every topic in the group goes to one rack-matching member."""
    remaining = list(states[0].consumers)
    for p in range(count):
        match = next((c for c in remaining if all(
            s.racks_match(c, p) and s.max_assignable(c) > 0 for s in states)), None)
        if match is None:
            continue
        for s in states:
            s.take(match, [p], result)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def _subscribers_per_topic(topics: list[str], ordered: list[str],
                           sets: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    """Each topic's subscribers in MemberInfo order, sharing lists between equal groups."""
    groups: dict[frozenset[str], list[str]] = {}
    for member in ordered:
        groups.setdefault(sets[member], []).append(member)
    wanted = set(topics)
    holders: dict[str, list[int]] = {}
    group_members = list(groups.values())
    for index, subscribed in enumerate(groups):
        for topic in subscribed & wanted:
            holders.setdefault(topic, []).append(index)
    rank = {m: i for i, m in enumerate(ordered)}
    merged: dict[tuple[int, ...], list[str]] = {}
    out: dict[str, list[str]] = {}
    for topic, indices in holders.items():
        key = tuple(indices)
        if key not in merged:
            merged[key] = (group_members[indices[0]] if len(indices) == 1 else sorted(
                chain.from_iterable(group_members[i] for i in indices), key=rank.__getitem__))
        out[topic] = merged[key]
    return out


def _plain_ranges(topics: list[str], counts: dict[str, int], subscribers: dict[str, list[str]],
                  result: dict[str, list[TopicPartition]]) -> None:
    """Non-rack range; consecutive topics with the same layout are handled in one sweep."""
    start = 0
    while start < len(topics):
        first = topics[start]
        layout = (id(subscribers[first]), counts[first])
        end = start + 1
        while end < len(topics) and (id(subscribers[topics[end]]),
                                     counts[topics[end]]) == layout:
            end += 1
        run = topics[start:end]
        # small topics: tuples made here are cheaper than the pool's
        pooled = ([topic_partitions(t, counts[first]) for t in run]
                  if counts[first] >= POOLED_FROM else None)
        members = subscribers[first]
        base, extra = divmod(counts[first], len(members))
        low = 0
        for i, member in enumerate(members):
            high = low + base + (1 if i < extra else 0)
            if high == low:
                break
            if pooled is None:
                result[member].extend([(t, p) for t in run for p in range(low, high)])
            elif high == low + 1:
                result[member].extend(map(itemgetter(low), pooled))
            else:
                result[member].extend(chain.from_iterable(ps[low:high] for ps in pooled))
            low = high
        start = end


class RangeAssignor(StatelessEagerAssignor):
    """The "range" assignor (eager only); keeps no state and sends no user data."""

    name = "range"

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        members, subscribed_by = self.members_of(cluster, subscriptions)
        # HashSet of all subscribed topics, then the HashMap of those with metadata.
        subscribed = string_map_order(subscribed_by.all_topics())
        topics = string_map_order([t for t in subscribed if partition_count(cluster, t) > 0])
        counts = {t: partition_count(cluster, t) for t in topics}
        subscribers = _subscribers_per_topic(
            topics, member_info_order(members, subscriptions), subscribed_by.sets)
        result: dict[str, list[TopicPartition]] = {m: [] for m in members}
        consumer_racks = {m: r for m in members if (r := subscriptions[m].rack_id)}
        states: list[_TopicState] = []
        if consumer_racks:
            states = [_TopicState(t, counts[t], subscribers[t], consumer_racks, cluster)
                      for t in topics]
        if any(s.needs_rack_aware for s in states):
            self._rack_aware(states, result)
        else:
            _plain_ranges(topics, counts, subscribers, result)
        return {m: Assignment(parts) for m, parts in result.items()}

    @staticmethod
    def _rack_aware(states: list[_TopicState], result: dict[str, list[TopicPartition]]) -> None:
        """KIP-881: rack-matching pass, plain range for the rest, then sort each list."""
        groups: dict[tuple[tuple[tuple[str, str | None], ...], int],
                     list[_TopicState]] = {}
        for s in states:
            key = (tuple(s.racks.items()), len(s.partition_racks))
            groups.setdefault(key, []).append(s)
        for (_, count), group in groups.items():
            if len(group) > 1:
                _assign_co_partitioned(group, count, result)
            elif group[0].needs_rack_aware:
                _assign_ranges(group[0], True, result)
        for s in states:
            _assign_ranges(s, False, result)
        keys: dict[str, str] = {}
        for parts in result.values():
            for t, _ in parts:
                if t not in keys:
                    keys[t] = java_string_key(t)
            parts.sort(key=lambda tp: (keys[tp[0]], tp[1]))
