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
from ..types import Assignment, Cluster, RebalanceProtocol, Subscription, TopicPartition
from .common import (
    all_topics,
    check_inputs,
    checked_topics_of,
    frozen_topics,
    leader_map_order,
    member_info_order,
    partition_count,
)
from .partition_pool import topic_partitions


def _positions_per_topic(topics: list[str], ordered: list[str],
                         topics_of: dict[str, list[str]]) -> dict[str, list[int]]:
    """For each topic, the circular-iterator positions of its subscribers (ascending).

    Members with equal topic sets are grouped first; a topic only one group subscribes to
    gets that group's list (shared between such topics), else the groups' lists merged.
    """
    sets = frozen_topics(topics_of)
    by_set: dict[frozenset[str], list[int]] = {}
    for position, member in enumerate(ordered):
        by_set.setdefault(sets[member], []).append(position)
    holders: dict[str, list[list[int]]] = {t: [] for t in topics}
    for subscribed, positions in by_set.items():
        for topic in subscribed:
            found = holders.get(topic)
            if found is not None:
                found.append(positions)
    merged: dict[tuple[int, ...], list[int]] = {}
    out: dict[str, list[int]] = {}
    for topic, lists in holders.items():
        if len(lists) == 1:
            out[topic] = lists[0]
            continue
        key = tuple(map(id, lists))
        if key not in merged:
            merged[key] = sorted(chain.from_iterable(lists))
        out[topic] = merged[key]
    return out


def _deal(lists: list[list[TopicPartition]], holders: list[int], first: int, count: int,
          run: list[str]) -> None:
    """Deal ``count`` partitions of each topic in ``run`` (same subscribers, same start).

    Partition ``p`` goes to ``holders[(first + p) % len(holders)]``; a member's share of one
    topic is ``range(offset, count, len(holders))``, and topics stay in ``run`` order.
    """
    step = len(holders)
    pooled = [topic_partitions(t, count) for t in run]
    for offset in range(min(step, count)):
        target = lists[holders[(first + offset) % step]]
        if offset + step >= count:
            target.extend(map(itemgetter(offset), pooled))
        else:
            target.extend(chain.from_iterable(ps[offset::step] for ps in pooled))


class RoundRobinAssignor:
    """The "roundrobin" assignor (eager only); keeps no state and sends no user data."""

    name = "roundrobin"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        check_inputs(cluster, subscriptions)
        members = leader_map_order(subscriptions)
        topics_of = checked_topics_of(members, subscriptions)
        result: dict[str, list[TopicPartition]] = {m: [] for m in members}
        subscribed = dict.fromkeys(all_topics(topics_of))
        topics = sorted((t for t in subscribed if partition_count(cluster, t) > 0),
                        key=java_string_key)
        ordered = member_info_order(members, subscriptions)
        if not topics:
            return {m: Assignment(parts) for m, parts in result.items()}
        positions = _positions_per_topic(topics, ordered, topics_of)
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

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        """RoundRobin keeps no state."""

    def subscription_user_data(self, topics: set[str]) -> None:
        """RoundRobin sends no user data."""
        return None
