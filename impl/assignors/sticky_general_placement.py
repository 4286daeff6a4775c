"""The general builder's state and its first placement (KIP-54, KAFKA-12675): who subscribes
to what, who holds which partition, the owned partitions kept, and each unassigned partition
given to its least loaded subscriber.

`GeneralPlacement` is the base of `sticky_general.GeneralAssignmentBuilder`, which then
balances by moving partitions.
"""

from __future__ import annotations

from ..types import Subscription, TopicPartition
from ..user_data import MemberData
from .partition_pool import add_free, topic_partitions
from .sticky_common import RackInfo, member_key, member_map
from .sticky_movements import SortedMembers

__all__ = ["GeneralPlacement"]


class GeneralPlacement:
    """The state of Kafka's ``GeneralAssignmentBuilder`` and its steps before balancing."""

    def __init__(self, partitions_per_topic: dict[str, int], rack_info: RackInfo,
                 members: list[str], owned: dict[str, list[TopicPartition]],
                 subscriptions: dict[str, Subscription],
                 member_data: dict[str, MemberData], max_generation: int,
                 departed_owners: bool = True) -> None:
        self.partitions_per_topic = partitions_per_topic
        #: D3: hand a partition back to a previous owner that left its topic, as Kafka does
        #: (False: such an owner cannot take it back; the assignor builds again so where
        #: Kafka's answer would keep the partition there)
        self.departed_owners = departed_owners
        self.total = sum(partitions_per_topic.values())
        self.rack_info = rack_info
        self.members = members
        self.subscriptions = subscriptions
        self.member_data = member_data
        self.max_generation = max_generation
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in partitions_per_topic}
        self.potential_topics: dict[str, list[str]] = {}
        self.topics_of: dict[str, set[str]] = {}
        shared: dict[tuple[str, ...], tuple[list[str], set[str]]] = {}
        for member in members:
            key = tuple(subscriptions[member].topics)
            known = shared.get(key)
            if known is None:
                mine = [t for t in key if t in partitions_per_topic]
                known = shared[key] = (mine, set(mine))
            self.potential_topics[member], self.topics_of[member] = known
            for topic in known[0]:
                self.topic_consumers[topic].append(member)
        self.current = owned
        self.order = member_map()
        for member in members:
            self.order.put(member)
        # currentPartitionConsumer, as one array per topic
        self.holder: dict[str, list[str | None]] = {
            t: [None] * n for t, n in partitions_per_topic.items()}
        for member in members:
            for topic, p in owned[member]:
                self.holder[topic][p] = member
        self.sorted_topics = sorted(partitions_per_topic,
                                    key=lambda t: (len(self.topic_consumers[t]), member_key(t)))
        self.sorted_all_partitions: list[TopicPartition] = []
        for topic in self.sorted_topics:
            self.sorted_all_partitions.extend(
                topic_partitions(topic, partitions_per_topic[topic]))
        self.sizes: dict[str, int] = {}
        self.sorted_members = SortedMembers(self.sizes)
        self.revocation_required = False

    def _assign_owned_partitions(self) -> dict[str, bytearray]:
        """Drop claims on topics the member left or on mismatched racks (revocation);
        returns, per topic, a mark for each partition kept by someone."""
        kept_marks = {t: bytearray(n) for t, n in self.partitions_per_topic.items()}
        racks = bool(self.rack_info.consumer_racks)
        for member in self.members:
            subscribed = self.topics_of[member]
            claims = self.current[member]
            if racks or not {t for t, _ in claims} <= subscribed:
                kept: list[TopicPartition] = []
                for tp in claims:
                    if tp[0] not in subscribed or self.rack_info.racks_mismatch(member, tp):
                        self.revocation_required = True
                    else:
                        kept.append(tp)
                self.current[member] = claims = kept
            for topic, p in claims:
                kept_marks[topic][p] = 1
        return kept_marks

    def _unassigned_partitions(self, kept: dict[str, bytearray]) -> list[TopicPartition]:
        """``sortedAllPartitions`` minus the kept ones, in the same order."""
        out: list[TopicPartition] = []
        for topic in self.sorted_topics:
            add_free(out, topic, kept[topic])
        return out

    def _give(self, tp: TopicPartition, member: str) -> None:
        self.sorted_members.discard(member)
        self.current[member].append(tp)
        self.sizes[member] += 1
        self.holder[tp[0]][tp[1]] = member
        self.sorted_members.add(member)

    def _maybe_assign(self, partitions: list[TopicPartition], rack_aware: bool) -> \
            list[TopicPartition]:
        """Give each partition to the first member of the set that may take it; returns the
        partitions left unassigned."""
        if not rack_aware:
            return self._fill_by_topic(partitions)
        left: list[TopicPartition] = []
        for tp in partitions:
            if not self.topic_consumers[tp[0]]:
                left.append(tp)
                continue

            def reject(member: str, tp: TopicPartition = tp) -> bool:
                return self.rack_info.racks_mismatch(member, tp)

            member = self.sorted_members.first_subscribed(tp[0], self.topics_of, reject)
            if member is None:
                left.append(tp)
            else:
                self._give(tp, member)
        return left

    def _fill_by_topic(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """``_maybe_assign`` without racks, one run of a topic's partitions at a time."""
        left: list[TopicPartition] = []
        start = 0
        while start < len(partitions):
            takers = self.topic_consumers[partitions[start][0]]
            end = start + 1  # a run of topics with the same subscribers fills in one go
            while end < len(partitions) and (
                    partitions[end][0] == partitions[end - 1][0]
                    or self.topic_consumers[partitions[end][0]] == takers):
                end += 1
            if takers:
                self._water_fill(partitions[start:end], takers)
            else:
                left.extend(partitions[start:end])
            start = end
        return left

    def _water_fill(self, partitions: list[TopicPartition], subscribers: list[str]) -> None:
        """Each partition to the subscriber first in (size, id) order, computed level by level:
        at size v every subscriber that has at most v takes one, in id order."""
        takers = list(dict.fromkeys(subscribers))
        sizes = self.sizes
        waiting = sorted(takers, key=lambda m: (sizes[m], member_key(m)))
        active: list[tuple[str, str]] = []
        level, i, pos = sizes[waiting[0]], 0, 0
        holder = self.holder
        current = self.current
        while pos < len(partitions):
            joined = i
            while i < len(waiting) and sizes[waiting[i]] <= level:
                i += 1
            if i > joined:
                active.extend((member_key(m), m) for m in waiting[joined:i])
                active.sort()
            batch = partitions[pos:pos + len(active)]
            for (_, member), tp in zip(active, batch, strict=False):
                current[member].append(tp)
                holder[tp[0]][tp[1]] = member
            pos += len(batch)
            level += 1
        for member in takers:
            sizes[member] = len(current[member])
        self.sorted_members.resize_many(takers)
