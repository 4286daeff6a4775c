"""Kafka's ``RoundRobinAssignor`` ("roundrobin"), list-for-list equal to the Java client.

Members sit in a circular iterator in MemberInfo order (static members first, KAFKA-8356).
Partitions are laid out topic by topic (Java ``String`` order, i.e. a ``TreeSet``), ascending
within a topic; each goes to the next member subscribed to its topic, and the iterator
position carries over from topic to topic.

Within one topic, once the first partition has found its subscriber, the following ones go to
the topic's subscribers in circular order; so each subscriber's share of a topic is an
arithmetic progression of partition numbers, computed without walking partition by partition.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import chain
from operator import itemgetter

from ..javahash import java_string_key
from ..types import Assignment, Cluster, Subscription, TopicPartition
from .common import StatelessEagerAssignor, member_info_order, partition_count
from .partition_pool import POOLED_FROM, topic_partitions

__all__ = ["RoundRobinAssignor"]


def _positions_per_topic(topics: list[str], ordered: list[str],
                         sets: dict[str, frozenset[str]]) -> dict[str, list[int]]:
    """For each topic, the circular-iterator positions of its subscribers (ascending).

    Equal subscriptions (the common case) give every topic one shared list of all positions.
    """
    if len(set(sets.values())) == 1:
        return dict.fromkeys(topics, list(range(len(ordered))))
    wanted = set(topics)
    cache: dict[frozenset[str], list[str]] = {}
    out: dict[str, list[int]] = {t: [] for t in topics}
    for position, member in enumerate(ordered):
        key = sets[member]
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = [t for t in key if t in wanted]
        for topic in hit:
            out[topic].append(position)
    return out


def _deal(lists: list[list[TopicPartition]], holders: list[int], first: int, count: int,
          run: list[str]) -> None:
    """Deal ``count`` partitions of each topic in ``run`` (same subscribers, same start).

    Partition ``p`` goes to ``holders[(first + p) % len(holders)]``; a member's share of one
    topic is ``range(offset, count, len(holders))``, and topics stay in ``run`` order.
    """
    step = len(holders)
    if count < POOLED_FROM:  # small topics: tuples made here are cheaper than the pool's
        for offset in range(min(step, count)):
            lists[holders[(first + offset) % step]].extend(
                [(t, p) for t in run for p in range(offset, count, step)])
        return
    pooled = [topic_partitions(t, count) for t in run]
    for offset in range(min(step, count)):
        target = lists[holders[(first + offset) % step]]
        if offset + step >= count:
            target.extend(map(itemgetter(offset), pooled))
        else:
            target.extend(chain.from_iterable(ps[offset::step] for ps in pooled))


class RoundRobinAssignor(StatelessEagerAssignor):
    """The "roundrobin" assignor (eager only); keeps no state and sends no user data."""

    name = "roundrobin"

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        members, subscribed_by = self.members_of(cluster, subscriptions)
        result: dict[str, list[TopicPartition]] = {m: [] for m in members}
        subscribed = dict.fromkeys(subscribed_by.all_topics())
        topics = sorted((t for t in subscribed if partition_count(cluster, t) > 0),
                        key=java_string_key)
        ordered = member_info_order(members, subscriptions)
        if not topics:
            return {m: Assignment(parts) for m, parts in result.items()}
        positions = _positions_per_topic(topics, ordered, subscribed_by.sets)
        lists = [result[m] for m in ordered]
        size = len(ordered)
        cursor = 0
        runs: list[tuple[list[int], int, int, list[str]]] = []
        for topic in topics:
            count = partition_count(cluster, topic)
            holders = positions[topic]
            first = bisect_left(holders, cursor)
            if first == len(holders):
                first = 0
            cursor = (holders[(first + count - 1) % len(holders)] + 1) % size
            last = runs[-1] if runs else None
            if last is not None and last[1:3] == (first, count) and last[0] == holders:
                last[3].append(topic)
            else:
                runs.append((holders, first, count, [topic]))
        for holders, first, count, run in runs:
            _deal(lists, holders, first, count, run)
        return {m: Assignment(parts) for m, parts in result.items()}
