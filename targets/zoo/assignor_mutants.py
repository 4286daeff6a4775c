"""The bug zoo's mutants: our assignors and codec, each with one rule changed back to what
a real client once shipped (a subclass that overrides one method, or one builder swapped in
through a class attribute). ``zoo`` says which historical bug each one stands for and how
it is caught."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...impl.assignors.common import member_info_order
from ...impl.assignors.roundrobin import RoundRobinAssignor
from ...impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from ...impl.assignors.sticky_common import (
    DEFAULT_GENERATION,
    OwnedClaims,
)
from ...impl.assignors.sticky_constrained import ConstrainedAssignmentBuilder
from ...impl.assignors.sticky_general import GeneralAssignmentBuilder
from ...impl.types import (
    Assignment,
    Cluster,
    Subscription,
    TopicPartition,
)
from ...impl.user_data import MemberData
from ...impl.wire import Writer
from ...properties.codec import SubscriptionInput
from ..adapters.codecs import BuiltinCodec

__all__ = ["ConsumerCountBalanceStickyAssignor", "InvertedGenerationCooperativeStickyAssignor",
           "LastWriterCooperativeStickyAssignor", "MaxGenerationOnlyCooperativeStickyAssignor",
           "OwnedAtV0RaisesCodec", "PutBeforeCheckStickyAssignor",
           "RackTransferMissCooperativeStickyAssignor", "TopicCursorRoundRobinAssignor",
           "TopicOrderCooperativeStickyAssignor", "TrustingCooperativeStickyAssignor",
           "UnsortedCodec"]

# ---------------------------------------------------------------------------------------
# Assignor mutants


def _in_metadata(partitions_per_topic: dict[str, int],
                 claims: Iterable[TopicPartition]) -> list[TopicPartition]:
    return [tp for tp in claims if 0 <= tp[1] < partitions_per_topic.get(tp[0], 0)]


class TrustingCooperativeStickyAssignor(CooperativeStickyAssignor):
    """KAFKA-12984 (bug zoo #2a): two members claiming one partition in the same generation
    both keep their claim; nothing is invalidated, nothing withheld."""

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        claims = super().resolve_claims(partitions_per_topic, members, subscriptions,
                                        member_data)
        for tp in claims.partitions_with_multiple_previous_owners:
            for m in members:
                if tp in member_data[m].partitions and tp not in claims.owned[m]:
                    claims.owned[m].append(tp)
        claims.partitions_with_multiple_previous_owners = set()
        return claims


class MaxGenerationOnlyCooperativeStickyAssignor(CooperativeStickyAssignor):
    """KAFKA-14639 (bug zoo #7): only members at the highest generation keep their claims;
    everyone else's owned partitions are ignored (and so handed on without a revoke)."""

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        claims = super().resolve_claims(partitions_per_topic, members, subscriptions,
                                        member_data)
        top = max((member_data[m].generation or DEFAULT_GENERATION for m in members),
                  default=DEFAULT_GENERATION)
        for m in members:
            if (member_data[m].generation or DEFAULT_GENERATION) < top:
                claims.owned[m] = []
        return claims


class InvertedGenerationCooperativeStickyAssignor(CooperativeStickyAssignor):
    """KAFKA-10082 (bug zoo #9): the generation filter inverted — when generations differ,
    the highest-generation members lose their claims and the stale ones keep theirs."""

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        claims = super().resolve_claims(partitions_per_topic, members, subscriptions,
                                        member_data)
        gens = {m: member_data[m].generation or DEFAULT_GENERATION for m in members}
        top = max(gens.values(), default=DEFAULT_GENERATION)
        if len(set(gens.values())) > 1:
            for m in members:
                claims.owned[m] = [] if gens[m] == top else _in_metadata(
                    partitions_per_topic, member_data[m].partitions)
        return claims


def _resolve_put_before_check(partitions_per_topic: dict[str, int], members: list[str],
                              subscriptions: dict[str, Subscription],
                              member_data: dict[str, MemberData],
                              max_generation: int) -> tuple[OwnedClaims, int]:
    """``sticky_common.resolve_owned_partitions`` with KAFKA-15106 (b) put back: the map of
    previous owners is updated before the generation check (``put`` returns the old owner
    and overwrites it, even when the newcomer loses)."""
    all_equal = True
    reference: set[str] = set()
    owned: dict[str, list[TopicPartition]] = {}
    multiple: set[TopicPartition] = set()
    owner_of: dict[TopicPartition, str] = {}
    for member in members:
        subscription = subscriptions[member]
        if not reference:
            reference.update(subscription.topics)
        elif all_equal and set(subscription.topics) != reference:
            all_equal = False
        data = member_data[member]
        generation = DEFAULT_GENERATION if data.generation is None else data.generation
        max_generation = max(max_generation, generation)
        mine: list[TopicPartition] = []
        owned[member] = mine
        for tp in _in_metadata(partitions_per_topic, data.partitions):
            other = owner_of.get(tp)
            owner_of[tp] = member  # the bug: put before the check
            if other is None:
                mine.append(tp)
                continue
            other_generation = subscriptions[other].generation_id
            if other_generation is None:
                other_generation = DEFAULT_GENERATION
            if generation == other_generation:
                multiple.add(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
            elif generation > other_generation:
                mine.append(tp)
                if tp in owned[other]:
                    owned[other].remove(tp)
    return OwnedClaims(all_equal, owned, multiple), max_generation


class PutBeforeCheckStickyAssignor(StickyAssignor):
    """KAFKA-15106 (b) (bug zoo #10b): with three claimants of different generations a
    partition can stay with two of them, so it is assigned twice."""

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        claims, self.max_generation = _resolve_put_before_check(
            partitions_per_topic, members, subscriptions, member_data, self.max_generation)
        return claims


class _RackTransferMissBuilder(ConstrainedAssignmentBuilder):
    """KAFKA-15170 (a): an owned partition dropped for a rack mismatch is not recorded as
    maybe-revoked, so when it goes to another member it is not in the transfer list."""

    def _assign_owned_partitions(self) -> list[TopicPartition]:
        rack = self.rack_info
        if rack.consumer_racks:
            self.owned = {m: [tp for tp in claims if not rack.racks_mismatch(m, tp)]
                          for m, claims in self.owned.items()}
        return super()._assign_owned_partitions()


class _TopicOrderOwnedBuilder(ConstrainedAssignmentBuilder):
    """KAFKA-16277: owned partitions kept in (topic, partition) order, not (partition, topic),
    so a member over its quota keeps whole topics and a joiner receives a whole topic."""

    def _owned_order(self) -> Any:
        return None  # the bug: sorted() alone gives (topic, partition) order


class _ConsumerCountBalanceBuilder(GeneralAssignmentBuilder):
    """librdkafka #3306: ``isBalanced`` skips a member whose partition count equals the
    number of *consumers* (``RD_MAP_CNT(consumer2AllPotentialPartitions)``) instead of the
    number of partitions it could hold."""

    def _is_full(self, member: str, size: int) -> bool:
        return size == len(self.members)  # the bug


class RackTransferMissCooperativeStickyAssignor(CooperativeStickyAssignor):
    """KAFKA-15170 (a) (bug zoo #11)."""

    constrained_builder = _RackTransferMissBuilder


class TopicOrderCooperativeStickyAssignor(CooperativeStickyAssignor):
    """KAFKA-16277 (bug zoo #12)."""

    constrained_builder = _TopicOrderOwnedBuilder


class ConsumerCountBalanceStickyAssignor(StickyAssignor):
    """librdkafka #3306 (bug zoo #22) in the general path of the sticky assignor."""

    general_builder = _ConsumerCountBalanceBuilder


class TopicCursorRoundRobinAssignor(RoundRobinAssignor):
    """librdkafka #3159 / #2121 (bug zoo #24), reconstructed: the cursor over members wraps
    modulo the number of the *topic's* subscribers instead of all members, and the scan for
    the next subscriber runs off the end of the member list (a crash in C, IndexError
    here) when it starts past the last subscriber."""

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        members = member_info_order(list(subscriptions), subscriptions)
        result: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        topics = sorted({t for s in subscriptions.values() for t in s.topics
                         if (cluster.partition_count(t) or 0) > 0})
        cursor = 0
        for topic in topics:
            eligible = [m for m in members if topic in subscriptions[m].topics]
            for p in range(cluster.partition_count(topic) or 0):
                while topic not in subscriptions[members[cursor]].topics:
                    cursor += 1  # no wrap: IndexError past the end
                result[members[cursor]].append((topic, p))
                cursor = (cursor + 1) % len(eligible)  # the bug: the topic's count
        return {m: Assignment(ps) for m, ps in result.items()}


class LastWriterCooperativeStickyAssignor(CooperativeStickyAssignor):
    """kafka-python's CooperativeStickyAssignor (bug zoo A.2-1) as a variant of ours: its
    consumers send subscription v1 (no generation) with empty user data, and the leader
    withholds a partition only from members other than its *last* claimant in member order
    (``currently_owned[tp] = member_id``, last writer wins)."""

    subscription_version = 1

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return b""

    def member_data(self, subscription: Subscription) -> MemberData:
        return MemberData(subscription.owned_partitions, None)

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        self._claims_in_order = [(m, list(subscriptions[m].owned_partitions))
                                 for m in subscriptions]
        claims = super().resolve_claims(partitions_per_topic, members, subscriptions,
                                        member_data)
        # kafka-python's sticky executor keeps the first claimant when generations tie
        for tp in claims.partitions_with_multiple_previous_owners:
            first = next(m for m in members if tp in member_data[m].partitions)
            claims.owned[first].append(tp)
        claims.partitions_with_multiple_previous_owners = set()
        return claims

    def adjust_assignment(self, assignment: dict[str, list[TopicPartition]],
                          subscriptions: dict[str, Subscription]) -> None:
        currently_owned: dict[TopicPartition, str] = {}
        for member, owned in self._claims_in_order:
            for tp in owned:
                currently_owned[tp] = member
        for member, partitions in assignment.items():
            partitions[:] = [tp for tp in partitions
                             if currently_owned.get(tp, member) == member]


# ---------------------------------------------------------------------------------------
# Codec mutants


class OwnedAtV0RaisesCodec(BuiltinCodec):
    """KAFKA-10647 (bug zoo #13): the generated writer refused a subscription with owned
    partitions at version 0 (``OwnedPartitions`` was not ``ignorable``)."""

    name = "codec-v0-owned-raises"

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes:
        if version == 0 and x["owned"]:
            raise RuntimeError("UnsupportedVersionException: Attempted to write a non-default "
                               "ownedPartitions at version 0")
        return super().encode_subscription(x, version)


class UnsortedCodec(BuiltinCodec):
    """KAFKA-12898 (bug zoo #14): topics and owned partitions written in the caller's order,
    so equal subscriptions give different bytes (the broker compares bytes)."""

    name = "codec-unsorted"

    def encode_subscription(self, x: SubscriptionInput, version: int) -> bytes:
        v = min(version, 3)
        if version < 0:
            raise ValueError(f"negative version {version}")
        w = Writer()
        w.int16(version)
        w.int32(len(x["topics"]))
        w.strings(list(x["topics"]), "topicsElement")
        w.bytes_(x["userData"])
        if v >= 1:
            entries: list[tuple[str, list[int]]] = []
            for t, p in x["owned"]:  # grouped as they come: no sort
                if entries and entries[-1][0] == t:
                    entries[-1][1].append(p)
                else:
                    entries.append((t, [p]))
            w.keyed_int32_arrays(entries, "topic")
        if v >= 2:
            w.int32(x["generation"])
        if v >= 3:
            w.string(x["rack"], "rackId")
        return w.getvalue()
