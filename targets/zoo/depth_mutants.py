"""Mutants only depth reveals: an assignor whose cost passes the rebalance timeout at the
group sizes of Kafka's own scale tests (fine on small groups), a claim resolution that only
three generations of claimants show wrong, and a range assignor whose lists are right as
sets but in another order than Kafka's. ``entries`` gives each its row, trigger and
control."""

from __future__ import annotations

from collections.abc import Sequence

from ...impl.assignors.range import RangeAssignor
from ...impl.assignors.sticky import CooperativeStickyAssignor
from ...impl.assignors.sticky_common import (
    DEFAULT_GENERATION,
    IllegalStateError,
    OwnedClaims,
    member_key,
)
from ...impl.assignors.sticky_constrained import ConstrainedAssignmentBuilder
from ...impl.types import Assignment, Cluster, Subscription, TopicPartition
from ...impl.user_data import MemberData

__all__ = ["NameOrderRangeAssignor", "RebuiltUnfilledCooperativeStickyAssignor",
           "StaleBlindCooperativeStickyAssignor"]


class _RebuiltUnfilledBuilder(ConstrainedAssignmentBuilder):
    """Kafka's round robin over the members under their quota, with that list rebuilt (the
    members filtered, then sorted by id) for every partition instead of kept and walked with
    an iterator: the same assignment, at O(members) per partition, O(members x partitions)
    per rebalance."""

    def _unfilled(self) -> list[str]:
        return sorted((m for m in self.members if len(self.assignment[m]) < self.min_quota),
                      key=member_key)

    def _assign_round_robin(self, unassigned: Sequence[TopicPartition]) -> None:
        exact = self.exactly_min
        last: str | None = None
        for tp in unassigned:
            under = self._unfilled()  # the bug: rebuilt for each partition
            if under:
                mark = None if last is None else member_key(last)
                after = [m for m in under if mark is None or member_key(m) > mark]
                member = (after or under)[0]
            elif exact:
                member = exact.pop(0)
            else:
                raise IllegalStateError("No more unfilled consumers to be assigned.")
            count = self._assign_new_partition(tp, member)
            last = member
            if count == self.min_quota and under:
                exact.append(member)
            elif count == self.max_quota:
                self.current_over += 1
                if self.current_over == self.expected_over:
                    exact.clear()
        self.under_min[:] = self._unfilled()


class RebuiltUnfilledCooperativeStickyAssignor(CooperativeStickyAssignor):
    """A port of cooperative-sticky that rebuilds its list of unfilled members for every new
    partition: Kafka's answers, a few milliseconds for tens of members, minutes at Kafka's
    10,000 members x 100,000 partitions (its client-side assignor benchmark), past the
    rebalance timeout."""

    constrained_builder = _RebuiltUnfilledBuilder


def _generation(data: MemberData) -> int:
    return DEFAULT_GENERATION if data.generation is None else data.generation


def _resolve_stale_blind(partitions_per_topic: dict[str, int], members: list[str],
                         subscriptions: dict[str, Subscription],
                         member_data: dict[str, MemberData],
                         max_generation: int) -> tuple[OwnedClaims, int]:
    """``sticky_common.resolve_owned_partitions`` where a later claimant takes a partition
    only at the group's newest generation: "current beats stale", and a stale claim never
    beats another stale one, however much newer."""
    newest = max([max_generation, *(_generation(member_data[m]) for m in members)])
    reference: set[str] = set()
    all_equal = True
    owned: dict[str, list[TopicPartition]] = {}
    multiple: set[TopicPartition] = set()
    owner_of: dict[TopicPartition, str] = {}
    for member in members:
        topics = set(subscriptions[member].topics)
        if not reference:
            reference = topics
        elif topics != reference:
            all_equal = False
        generation = _generation(member_data[member])
        mine = owned[member] = []
        for tp in member_data[member].partitions:
            if not 0 <= tp[1] < partitions_per_topic.get(tp[0], 0):
                continue
            other = owner_of.get(tp)
            if other is None:
                mine.append(tp)
                owner_of[tp] = member
                continue
            theirs = subscriptions[other].generation_id
            theirs = DEFAULT_GENERATION if theirs is None else theirs
            if generation == theirs:
                multiple.add(tp)
            elif generation == newest:  # the bug: Kafka's rule is generation > theirs
                mine.append(tp)
            else:
                continue
            if tp in owned[other]:
                owned[other].remove(tp)
            owner_of[tp] = member
    return OwnedClaims(all_equal, owned, multiple), newest


class StaleBlindCooperativeStickyAssignor(CooperativeStickyAssignor):
    """Claims resolved by "current beats stale" against the group's newest generation: with
    two generations in a group a newer claim is the newest and this is Kafka's rule; with
    three, a partition claimed at the two older ones stays with its first claimant, not the
    newer one."""

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        claims, self.max_generation = _resolve_stale_blind(
            partitions_per_topic, members, subscriptions, member_data, self.max_generation)
        return claims


class NameOrderRangeAssignor(RangeAssignor):
    """A port of the range assignor that walks topics in name order (a sorted map), where
    Java walks a ``HashMap`` of topics: every member gets the right partitions, listed in
    another order, so its Assignment differs from Kafka's on the wire."""

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        result = super().assign(cluster, subscriptions)
        return {m: Assignment(sorted(a.partitions)) for m, a in result.items()}
