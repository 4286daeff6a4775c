"""The general builder: members subscribe to different topics (KIP-54, KAFKA-12675).

Keep valid owned partitions, give each unassigned one to the least loaded subscriber (the
builder's state and that first placement: `sticky_general_placement`), then move partitions
while the assignment is not balanced (KAFKA-15106's ``isBalanced``), preferring a
partition's previous owner of a lower generation (KIP-341) and undoing earlier moves
(stickiness). If that did not improve the balance score, the moves are reverted.

Termination (deviation D4). A plain move takes a partition from a member holding at least
two more than its new holder, so the sum of squared sizes falls by at least 2 each time.
Kafka's swap rule breaks that: when the chosen partition already moved from ``o`` this
round and some partition once moved from the new holder to ``o``, that other partition goes
back instead, and it is taken from ``o``, not from the overloaded holder. Two such moves can
undo each other forever (Kafka's ``performReassignments`` then never returns). Every pass
starts from a state Kafka's loop is a function of, so when a pass would start from an
assignment seen at the start of an earlier pass, Kafka would loop; from then on the swap rule
is off and only plain moves are made, which ends within the bound above. ``passes``,
``moves`` and ``swap_rule_dropped`` tell what a build did; exceeding a bound raises
`ReassignmentLimitError` (it would be a bug here, never a hang).
"""

from __future__ import annotations

from ..javahash import HashMapOrder, table_size_for
from ..types import Subscription, TopicPartition
from ..user_data import MemberData
from .sticky_common import RackInfo, member_map, null_pointer
from .sticky_general_placement import GeneralPlacement
from .sticky_movements import (
    MAX_SWAP_PASSES,
    PartitionMovements,
    PrevOwner,
    ReassignmentLimitError,
    ReassignmentStats,
    older_claims,
    state_key,
)

__all__ = ["MAX_SWAP_PASSES", "GeneralAssignmentBuilder"]


class GeneralAssignmentBuilder(GeneralPlacement):
    """Kafka's ``GeneralAssignmentBuilder`` (``AbstractStickyAssignor``)."""

    def __init__(self, partitions_per_topic: dict[str, int], rack_info: RackInfo,
                 members: list[str], owned: dict[str, list[TopicPartition]],
                 subscriptions: dict[str, Subscription],
                 member_data: dict[str, MemberData], max_generation: int,
                 departed_owners: bool = True) -> None:
        super().__init__(partitions_per_topic, rack_info, members, owned, subscriptions,
                         member_data, max_generation, departed_owners)
        self.movements = PartitionMovements()
        self.passes = 0
        self.moves = 0
        self.swap_rule_dropped = False
        self._fingerprint = 0  # XOR of the state keys moved so far (relative to the start)
        self._plain_budget = 0  # plain moves left once the swap rule is off

    def stats(self) -> ReassignmentStats:
        return ReassignmentStats(self.passes, self.moves, self.swap_rule_dropped)

    def build(self) -> dict[str, list[TopicPartition]]:
        """The assignment, keyed in the order of Kafka's result map."""
        prev_assignment = self._prev_assignment()
        assigned = self._assign_owned_partitions()
        unassigned = self._unassigned_partitions(assigned)
        for member in self.members:
            self.sizes[member] = len(self.current[member])
            self.sorted_members.add(member)
        self._balance(prev_assignment, unassigned)
        return {m: self.current[m] for m in self.order.order()}

    def _prev_assignment(self) -> dict[TopicPartition, PrevOwner]:
        """KIP-341 / KAFKA-14639: claims of older generations, the highest one per partition."""
        return older_claims(self.members, self.member_data, self.max_generation)

    # -- sizes and moves -------------------------------------------------------------------

    def _size(self, member: str | None) -> int:
        """``currentAssignment.get(member).size()``: a member set aside is Java's NPE."""
        if member is None or member not in self.sorted_members:
            raise null_pointer()
        return self.sizes[member]

    def _holder_of(self, tp: TopicPartition) -> str | None:
        return self.holder[tp[0]][tp[1]]

    def _process_partition_movement(self, tp: TopicPartition, new: str) -> None:
        old = self._holder_of(tp)
        assert old is not None
        self.moves += 1
        self._fingerprint ^= state_key(tp, old) ^ state_key(tp, new)
        self.sorted_members.discard(old)
        self.sorted_members.discard(new)
        self.movements.move_partition(tp, old, new)
        self.current[old].remove(tp)
        self.sizes[old] -= 1
        self.current[new].append(tp)
        self.sizes[new] += 1
        self.holder[tp[0]][tp[1]] = new
        self.sorted_members.add(new)
        self.sorted_members.add(old)

    def _reassign_partition(self, tp: TopicPartition, new: str | None = None) -> None:
        if new is None:
            new = self.sorted_members.first_subscribed(tp[0], self.topics_of)
            assert new is not None
        old = self._holder_of(tp)
        assert old is not None
        if self.swap_rule_dropped:
            if self._plain_budget <= 0:
                raise ReassignmentLimitError(
                    f"plain moves exceed their bound (half the sum of squared sizes) at {tp}")
            self._plain_budget -= 1
            self._process_partition_movement(tp, new)
            return
        self._process_partition_movement(self.movements.partition_to_move(tp, old, new), new)

    # -- balance ---------------------------------------------------------------------------

    def _max_assignment_size(self, member: str) -> int:
        topics = self.potential_topics[member]
        if len(topics) == len(self.partitions_per_topic):
            return self.total
        return sum(self.partitions_per_topic[t] for t in topics)

    def _can_participate(self, member: str) -> bool:
        size, most = self.sizes[member], self._max_assignment_size(member)
        if size < most:
            return True
        return any(len(self.topic_consumers[t]) >= 2 for t, _ in self.current[member])

    def _balance(self, prev: dict[TopicPartition, PrevOwner],
                 unassigned: list[TopicPartition]) -> None:
        initializing = self.sizes[self.sorted_members.last()] == 0
        to_assign = unassigned
        if self.rack_info.consumer_racks:
            to_assign = self._maybe_assign(unassigned, rack_aware=True)
        self._maybe_assign(to_assign, rack_aware=False)
        shared = {t for t, cs in self.topic_consumers.items() if len(cs) >= 2}
        self.sorted_all_partitions = [tp for tp in self.sorted_all_partitions if tp[0] in shared]
        unassigned = [tp for tp in unassigned if tp[0] in shared]
        fixed = self._set_aside_fixed_members()
        before = {m: list(self.current[m]) for m in self.order.order()}
        before_order = member_map()
        for member in self.order.order():
            before_order.put(member)
        before_holders = {t: list(h) for t, h in self.holder.items()}
        if not self.revocation_required:
            self._perform_reassignments(unassigned, prev)
        performed = self._perform_reassignments(self.sorted_all_partitions, prev)
        if not initializing and performed and self._score(self.sizes_of(self.order.order())) \
                >= self._score([len(ps) for ps in before.values()]):
            self.order.clear()
            for member in before_order.order():
                self.order.put(member)
                self.current[member] = before[member]
            self.holder = before_holders
        for member in fixed.order():
            self.order.put(member)

    def sizes_of(self, members: list[str]) -> list[int]:
        return [len(self.current[m]) for m in members]

    def _set_aside_fixed_members(self) -> HashMapOrder:
        """Members that hold all they can and nothing shared leave the set (and the map)."""
        potential = member_map(table_size_for(len(self.members)))
        for member in self.members:
            potential.put(member)
        fixed = member_map()
        for member in potential.order():
            if not self._can_participate(member):
                self.sorted_members.discard(member)
                self.order.remove(member)
                fixed.put(member)
        return fixed

    @staticmethod
    def _score(sizes: list[int]) -> int:
        """Sum over member pairs of the difference of their sizes."""
        ordered = sorted(sizes)
        n = len(ordered)
        return sum(s * (2 * i - n + 1) for i, s in enumerate(ordered))

    def _is_balanced(self) -> bool:
        """KAFKA-15106: no member short of its potential can take a partition from a member
        holding at least two more."""
        members = self.sorted_members
        if members.min_size() >= members.max_size() - 1:
            return True
        topic_max: dict[str, int] = {}
        for member in list(members):
            size = self.sizes[member]
            if self._is_full(member, size):
                continue
            for topic in self.potential_topics[member]:
                most = topic_max.get(topic)
                if most is None:
                    most = topic_max[topic] = self._largest_holder(topic)
                if size + 1 < most:
                    return False
        return True

    def _is_full(self, member: str, size: int) -> bool:
        """``member`` holds every partition it could hold (``isBalanced`` skips it)."""
        return size == self._max_assignment_size(member)

    def _largest_holder(self, topic: str) -> int:
        """The most partitions held by a member (still in the set) holding one of ``topic``."""
        members = self.sorted_members
        holders = set(self.holder[topic])
        return max((self.sizes[h] for h in holders if h is not None and h in members),
                   default=0)

    def _perform_reassignments(self, partitions: list[TopicPartition],
                               prev: dict[TopicPartition, PrevOwner]) -> bool:
        """Passes over ``partitions`` until one moves nothing; see D4 for termination.
        ``isBalanced`` is asked before each partition, as in Kafka, but computed again only
        after a move (nothing else changes what it answers)."""
        performed = False
        modified = True
        seen: set[int] = set()
        while modified:
            self.passes += 1
            if not self.swap_rule_dropped:
                if self._fingerprint in seen:
                    self._drop_swap_rule()
                elif len(seen) >= MAX_SWAP_PASSES:
                    raise ReassignmentLimitError(
                        f"{MAX_SWAP_PASSES} reassignment passes without a repeated state")
                seen.add(self._fingerprint)
            modified = False
            balanced: bool | None = None  # None: to be computed (nothing moved since)
            for tp in partitions:
                if balanced is None:
                    balanced = self._is_balanced()
                if balanced:
                    break
                if self._reassign_one(tp, prev):
                    performed = modified = True
                    balanced = None
        return performed

    def _drop_swap_rule(self) -> None:
        """D4: Kafka would repeat its passes forever; plain moves only from now on, each
        lowering the sum of squared sizes by at least 2."""
        self.swap_rule_dropped = True
        self._plain_budget = sum(self.sizes[m] ** 2 for m in self.sorted_members) // 2

    def _reassign_one(self, tp: TopicPartition, prev: dict[TopicPartition, PrevOwner]) -> bool:
        """One step of ``performReassignments``; True when something moved."""
        consumer = self._holder_of(tp)
        previous = prev.get(tp)
        if previous is not None and previous[2] and (
                previous[0] not in self.sorted_members  # Kafka's NullPointerException
                or not (self.departed_owners or tp[0] in self.topics_of[previous[0]])):
            previous = None  # deviation D3
        if previous is not None and self._size(consumer) > self._size(previous[0]) + 1:
            self._reassign_partition(tp, previous[0])
            return True
        consumer_rack = self.rack_info.consumer_racks.get(consumer) if consumer else None
        partition_racks = self.rack_info.partition_racks.get(tp)
        candidates = self.topic_consumers[tp[0]]
        if consumer_rack is not None and partition_racks and consumer_rack in partition_racks:
            for other in candidates:
                other_rack = self.rack_info.consumer_racks.get(other)
                if other_rack is None or other_rack not in partition_racks:
                    continue
                if self._size(consumer) > self._size(other) + 1:
                    self._reassign_partition(tp)
                    return True
        for other in candidates:
            if self._size(consumer) > self._size(other) + 1:
                self._reassign_partition(tp)
                return True
        return False
