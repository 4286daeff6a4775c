"""The constrained builder: every member subscribes to the same topics (KAFKA-9987, 12464).

Steps (Kafka's ``ConstrainedAssignmentBuilder``): keep owned partitions up to the quotas, in
(partition, topic) order (KAFKA-16277); fill members under ``min_quota`` round robin
(rack-matching first, KIP-881, KAFKA-15170), then give the leftovers one each to members at
exactly ``min_quota``. Partitions that leave a member are recorded in
``partitions_transferring_ownership`` (KIP-429).

The partitions nobody kept wait in one sequence, in (topic, partition) order, made of the
shared pool's tuples (`partition_pool`: a leader assigning the same metadata again makes no
new tuple; in a first assignment the sequence is the pool's run of all partitions, made
once); a member's share of a block of round-robin passes is one strided slice of it, so a
first assignment of a million partitions copies pointers, a member's list at a time, and the
collector's passes over each list run while it is still in the processor's cache.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from ..javahash import capacity_for_copy
from ..types import TopicPartition
from .partition_pool import add_free, partition_run
from .sticky_common import (
    CollectorPause,
    IllegalStateError,
    RackInfo,
    member_key,
    member_order,
    partition_key,
)

__all__ = ["ConstrainedAssignmentBuilder", "owned_sorter", "sorted_owned"]

#: the (partition, topic) key where Python's str order is Java's (no surrogate code units)
_BY_PARTITION_THEN_TOPIC: Callable[[TopicPartition], Any] = itemgetter(1, 0)
_TOPIC, _NUMBER = itemgetter(0), itemgetter(1)
#: the first surrogate code unit, where the two orders part (chr: mypyc takes no surrogate literal)
_SURROGATES = chr(0xD800)


def owned_sorter(topics: list[str]) -> Callable[[TopicPartition], Any]:
    """(partition, topic) key: a C-level itemgetter when Python's str order is Java's."""
    if all(max(t, default="\0") < _SURROGATES for t in topics):
        return _BY_PARTITION_THEN_TOPIC
    return partition_key


def sorted_owned(claims: list[TopicPartition], key: Callable[[TopicPartition], Any]
                 ) -> list[TopicPartition]:
    """``claims`` sorted by ``key``; the (partition, topic) key as two stable sorts (by
    topic, then by partition), which make no key tuple per partition."""
    if key is not _BY_PARTITION_THEN_TOPIC:
        return sorted(claims, key=key)
    owned = sorted(claims, key=_TOPIC)
    owned.sort(key=_NUMBER)
    return owned


class ConstrainedAssignmentBuilder:
    """Kafka's ``ConstrainedAssignmentBuilder`` (``AbstractStickyAssignor``)."""

    #: set by the assignor for one call: the collector's passes while partitions are made
    collector: CollectorPause | None = None

    def __init__(self, partitions_per_topic: dict[str, int], rack_info: RackInfo,
                 members: list[str], owned: dict[str, list[TopicPartition]],
                 partitions_with_multiple_previous_owners: set[TopicPartition]) -> None:
        self.partitions_per_topic = partitions_per_topic
        self.rack_info = rack_info
        self.members = members
        self.owned = owned
        self.multiple = partitions_with_multiple_previous_owners
        total = sum(partitions_per_topic.values())
        n = len(members)
        self.min_quota = total // n
        self.max_quota = -(-total // n)
        self.expected_over = total % n
        self.current_over = 0
        self.maybe_revoked: dict[TopicPartition, str] = {}
        self.under_min: list[str] = []
        self.exactly_min: list[str] = []
        self.assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
        self.transferring: dict[TopicPartition, str] = {}

    def build(self) -> dict[str, list[TopicPartition]]:
        """The assignment, keyed in the order of Kafka's result map."""
        assigned = self._assign_owned_partitions()
        unassigned = self._unassigned_partitions(assigned)
        self.under_min.sort(key=member_key)
        self.exactly_min.sort(key=member_key)
        rack = self.rack_info
        if rack.num_consumers_by_partition or rack.consumer_racks:
            unassigned = rack.sort_by_rack_consumers(unassigned)
            if rack.consumer_racks:
                unassigned = self._assign_rack_aware_round_robin(unassigned)
        self._assign_round_robin(unassigned)
        self._verify_unfilled_members()
        return self._in_result_order()

    def _in_result_order(self) -> dict[str, list[TopicPartition]]:
        """``new HashMap<>(Collectors.toMap(...))``: the copy constructor's table size."""
        order = member_order(self.members)
        return {m: self.assignment[m]
                for m in member_order(order, capacity_for_copy(len(order)))}

    def _owned_order(self) -> Callable[[TopicPartition], Any]:
        """The order in which a member keeps its owned partitions: (partition, topic), so an
        over-quota member gives up a spread of topics (KAFKA-16277)."""
        return owned_sorter(list(self.partitions_per_topic))

    def _assign_owned_partitions(self) -> list[TopicPartition]:
        """Step 1: keep up to ``max_quota`` (for the first few) or ``min_quota`` owned."""
        assigned: list[TopicPartition] = []
        sorter = self._owned_order()
        rack = self.rack_info
        for member in self.members:
            claims = self.owned[member]
            if not claims:  # nothing to keep (a first assignment)
                if self.min_quota > 0:
                    self.under_min.append(member)
                else:
                    self._quota_for(0, member)
                continue
            if rack.consumer_racks:
                kept = []
                for tp in claims:
                    if rack.racks_mismatch(member, tp):
                        self.maybe_revoked[tp] = member
                    else:
                        kept.append(tp)
                claims = kept
            owned = sorted_owned(claims, sorter)
            if self.multiple:
                owned = [tp for tp in owned if tp not in self.multiple]
            keep = self._quota_for(len(owned), member)
            mine = self.assignment[member]
            mine.extend(owned[:keep])
            assigned.extend(owned[:keep])
            for tp in owned[keep:]:
                self.maybe_revoked[tp] = member
        return assigned

    def _quota_for(self, owned_count: int, member: str) -> int:
        """How many owned partitions ``member`` keeps; files it as under or exactly min."""
        if owned_count < self.min_quota:
            self.under_min.append(member)
            return owned_count
        if owned_count >= self.max_quota and self.current_over < self.expected_over:
            self.current_over += 1
            if self.current_over == self.expected_over:
                self.exactly_min.clear()
            return self.max_quota
        if self.current_over < self.expected_over:
            self.exactly_min.append(member)
        return self.min_quota

    def _unassigned_partitions(self, assigned: list[TopicPartition]
                               ) -> Sequence[TopicPartition]:
        """All partitions in (topic, partition) order that nobody kept (the pool's tuples).

        A first assignment's are the pool's run of every partition (held: a leader assigning
        the same metadata again makes nothing). Otherwise a new list, settled into the old
        generation while still empty: the collector's passes during the round robin then
        visit only the members' new lists, never its slots."""
        counts = self.partitions_per_topic
        made = None if self.collector is None else self.collector.made
        if not assigned:  # a first assignment: every partition
            return partition_run(tuple((topic, counts[topic])
                                       for topic in sorted(counts, key=member_key)), made)
        out: list[TopicPartition] = []
        if self.collector is not None:
            self.collector.settle()
        taken = {topic: bytearray(count) for topic, count in counts.items()}
        for topic, p in assigned:
            taken[topic][p] = 1
        for topic in sorted(counts, key=member_key):
            add_free(out, topic, taken[topic], made)
        return out

    def _assign_new_partition(self, tp: TopicPartition, member: str) -> int:
        mine = self.assignment[member]
        mine.append(tp)
        previous_owner = self.maybe_revoked.get(tp)
        if (previous_owner is not None and previous_owner != member) or tp in self.multiple:
            self.transferring[tp] = member
        return len(mine)

    def _assign_rack_aware_round_robin(
            self, unassigned: Sequence[TopicPartition]) -> list[TopicPartition]:
        """KIP-881 / KAFKA-15170: rack-matching round robin; returns what is left."""
        rack = self.rack_info
        under, exact = self.under_min, self.exactly_min
        next_index = 0
        left: list[TopicPartition] = []
        for tp in unassigned:
            member: str | None = None
            index = rack.next_rack_consumer(tp, under, next_index)
            if index >= 0:
                member = under[index]
                count = len(self.assignment[member]) + 1
                if count >= self.min_quota:
                    under.remove(member)
                    if count < self.max_quota and self.current_over < self.expected_over:
                        exact.append(member)
                else:
                    index += 1
                next_index = 0 if not under else index % len(under)
            elif exact:
                first = rack.next_rack_consumer(tp, exact, 0)
                if first >= 0:
                    member = exact[first]
                    if len(self.assignment[member]) + 1 == self.max_quota:
                        del exact[first]
                        self.current_over += 1
                        if self.current_over == self.expected_over:
                            exact.clear()
            if member is None:
                left.append(tp)
            else:
                self._assign_new_partition(tp, member)
        return left

    def _assign_round_robin(self, unassigned: Sequence[TopicPartition]) -> None:
        """Round robin over members under ``min_quota``, then one each to ``exactly_min``."""
        position = self._fill_under_min(unassigned)
        exact = self.exactly_min
        head = 0
        for tp in unassigned[position:]:
            if head >= len(exact):
                raise IllegalStateError("No more unfilled consumers to be assigned.")
            member = exact[head]
            head += 1
            if self._assign_new_partition(tp, member) == self.max_quota:
                self.current_over += 1
        del exact[:head]

    def _fill_under_min(self, unassigned: Sequence[TopicPartition]) -> int:
        """Passes over ``under_min`` in id order; a member leaves when it reaches min.

        Computed a block of passes at a time (all members in a block take one partition
        per pass); returns how many of ``unassigned`` were handed out.
        """
        under = self.under_min
        position, done_passes = 0, 0
        total = len(unassigned)
        need = {m: self.min_quota - len(self.assignment[m]) for m in under}
        while under and position < total:
            width = len(under)
            level = min(need[m] for m in under)
            passes = min(level - done_passes, (total - position) // width)
            if passes > 0:
                end = position + passes * width
                collector = self.collector
                for i, member in enumerate(under):
                    self._take(member, unassigned[position + i:end:width])
                    if collector is not None:  # the new slice's slots, for the collector
                        collector.made(passes)
                position, done_passes = end, done_passes + passes
            if done_passes == level:
                reached = [m for m in under if need[m] == level]
                under[:] = [m for m in under if need[m] != level]
                self.exactly_min.extend(reached)
                continue
            # fewer partitions left than one more pass needs: a partial pass ends it all
            for i, tp in enumerate(unassigned[position:]):
                member = under[i]
                if self._assign_new_partition(tp, member) == self.min_quota:
                    self.exactly_min.append(member)
            reached_ids = {under[i] for i in range(total - position)
                           if len(self.assignment[under[i]]) == self.min_quota}
            under[:] = [m for m in under if m not in reached_ids]
            position = total
        return position

    def _take(self, member: str, partitions: Sequence[TopicPartition]) -> None:
        """Hand a slice of partitions to ``member`` (bookkeeping of ``_assign_new_partition``).

        A member with none yet gets a new list: young, so the collector's next pass visits
        it while it is still in the processor's cache (the empty list it had is old by now,
        and a full collection would visit its slots long after)."""
        mine = self.assignment[member]
        if mine:
            mine.extend(partitions)
        else:
            self.assignment[member] = list(partitions)
        if self.maybe_revoked or self.multiple:
            for tp in partitions:
                previous_owner = self.maybe_revoked.get(tp)
                if (previous_owner is not None and previous_owner != member) \
                        or tp in self.multiple:
                    self.transferring[tp] = member

    def _verify_unfilled_members(self) -> None:
        if not self.under_min:
            return
        if self.current_over != self.expected_over:
            raise IllegalStateError(
                "We haven't reached the expected number of members with more than the "
                "minQuota partitions, but no more partitions to be assigned")
        for member in self.under_min:
            if len(self.assignment[member]) != self.min_quota:
                raise IllegalStateError(f"Consumer: [{member}] doesn't reach minQuota "
                                        "partitions, and no more partitions to be assigned")
