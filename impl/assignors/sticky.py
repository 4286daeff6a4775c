"""``sticky`` (KIP-54, eager) and ``cooperative-sticky`` (KIP-429) assignors.

Both run Kafka's ``AbstractStickyAssignor``: conflict resolution, then the constrained builder
when all subscriptions are equal, else the general one. They differ in where a member's
previous partitions come from (``member_data``) and in what the member sends as user data;
the cooperative assignor also withholds partitions that another member must revoke first.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

from ..types import Assignment, Cluster, RebalanceProtocol, Subscription, TopicPartition
from ..user_data import (
    DEFAULT_GENERATION,
    MemberData,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    encode_sticky_user_data,
)
from .sticky_common import (
    CollectorPause,
    Misplaced,
    OwnedClaims,
    RackInfo,
    keep_to_subscribers,
    member_order,
    misplaced_partitions,
    resolve_owned_partitions,
    subscribed_topics,
)
from .sticky_constrained import ConstrainedAssignmentBuilder
from .sticky_general import GeneralAssignmentBuilder
from .sticky_movements import ReassignmentStats, older_claims

__all__ = ["CooperativeStickyAssignor", "StickyAssignor"]


class _AbstractStickyAssignor:
    """What both sticky assignors share; ``max_generation`` lives as long as the instance."""

    name = "abstract-sticky"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)
    #: the builders (the bug zoo's mutants swap in altered ones)
    constrained_builder: ClassVar[type[ConstrainedAssignmentBuilder]] = ConstrainedAssignmentBuilder
    general_builder: ClassVar[type[GeneralAssignmentBuilder]] = GeneralAssignmentBuilder

    def __init__(self) -> None:
        self.max_generation = DEFAULT_GENERATION
        self.partitions_transferring_ownership: dict[TopicPartition, str] | None = {}
        #: the general builder's loop figures of the last assignment (None: constrained)
        self.reassignment_stats: ReassignmentStats | None = None
        #: the collector held by the running ``assign`` call, if any
        self.collector: CollectorPause | None = None

    def member_data(self, subscription: Subscription) -> MemberData:
        raise NotImplementedError

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        """Kafka's ``AbstractPartitionAssignor.assign``: every member gets an entry, in the
        order of Java's result ``HashMap``.

        The cyclic collector runs in step with the builder (`CollectorPause`): its passes
        over the new partitions of a large group are paid inside the call, while they are
        still in the processor's cache.
        """
        with CollectorPause() as pause:
            self.collector = pause
            try:
                raw = self.assign_partitions(cluster, subscriptions)
                return {m: Assignment(raw[m]) for m in member_order(raw)}
            finally:
                self.collector = None

    def assign_partitions(self, cluster: Cluster, subscriptions: dict[str, Subscription]
                          ) -> dict[str, list[TopicPartition]]:
        """``AbstractStickyAssignor.assignPartitions``: the raw map, in its own key order."""
        if not subscriptions:
            return {}
        members = member_order(subscriptions)
        partitions_per_topic = _partitions_per_topic(cluster, subscriptions)
        rack_info = RackInfo(cluster, partitions_per_topic, members, subscriptions)
        member_data = {m: self.member_data(subscriptions[m]) for m in members}
        claims = self.resolve_claims(partitions_per_topic, members, subscriptions, member_data)
        transferring: dict[TopicPartition, str] | None = None
        owners = claims.owned
        if claims.all_equal:
            constrained = self.constrained_builder(
                partitions_per_topic, rack_info, members, claims.owned,
                claims.partitions_with_multiple_previous_owners)
            constrained.collector = self.collector
            assignment = constrained.build()
            transferring = constrained.transferring
            self.reassignment_stats = None
        else:
            self.partitions_transferring_ownership = None  # computed from the result
            assignment = self._general(partitions_per_topic, rack_info, members, owners,
                                       subscriptions, member_data, True)
            if self._misplaced_kept(assignment, subscriptions, partitions_per_topic):
                # D3: Kafka's answer keeps a partition with a previous owner that left its
                # topic (I2); build again without handing partitions back to such owners
                owners = self.resolve_claims(partitions_per_topic, members, subscriptions,
                                             member_data).owned
                assignment = self._general(partitions_per_topic, rack_info, members, owners,
                                           subscriptions, member_data, False)
        self.partitions_transferring_ownership = transferring
        misplaced = self._misplaced_kept(assignment, subscriptions, partitions_per_topic)
        if misplaced:
            keep_to_subscribers(assignment, subscriptions, misplaced, owners, transferring,
                                self.withheld_moves(assignment, subscriptions))
        self.adjust_assignment(assignment, subscriptions)
        return assignment

    def _general(self, partitions_per_topic: dict[str, int], rack_info: RackInfo,
                 members: list[str], owned: dict[str, list[TopicPartition]],
                 subscriptions: dict[str, Subscription], member_data: dict[str, MemberData],
                 departed_owners: bool) -> dict[str, list[TopicPartition]]:
        """The general builder's answer (``departed_owners``: see D3 in the builder)."""
        general = self.general_builder(
            partitions_per_topic, rack_info, members, owned, subscriptions, member_data,
            self.max_generation, departed_owners=departed_owners)
        assignment = general.build()
        self.reassignment_stats = general.stats()
        return assignment

    def _misplaced_kept(self, assignment: dict[str, list[TopicPartition]],
                        subscriptions: dict[str, Subscription],
                        partitions_per_topic: dict[str, int]) -> Misplaced:
        """Partitions on a member not subscribed to their topic (deviation D2) where Kafka's
        answer would keep one there (breaks I2); empty when every one of them is withheld
        anyway (then Kafka's answer is valid and stays as it is)."""
        misplaced = misplaced_partitions(assignment, subscriptions, partitions_per_topic)
        if not misplaced:
            return misplaced
        withheld = self.withheld_moves(assignment, subscriptions)
        if all(withheld.get(tp) == member for tp, member in misplaced):
            return []
        return misplaced

    def withheld_moves(self, assignment: dict[str, list[TopicPartition]],
                       subscriptions: dict[str, Subscription]) -> dict[TopicPartition, str]:
        """What ``adjust_assignment`` would withhold: partition → member (eager: nothing)."""
        return {}

    def resolve_claims(self, partitions_per_topic: dict[str, int], members: list[str],
                       subscriptions: dict[str, Subscription],
                       member_data: dict[str, MemberData]) -> OwnedClaims:
        """Which previous claims survive conflicts (KIP-341, KAFKA-12984, KAFKA-14639);
        raises ``max_generation`` to the highest generation seen."""
        claims, self.max_generation = resolve_owned_partitions(
            partitions_per_topic, members, subscriptions, member_data, self.max_generation)
        return claims

    def adjust_assignment(self, assignment: dict[str, list[TopicPartition]],
                          subscriptions: dict[str, Subscription]) -> None:
        """Hook run on the builder's result (the cooperative assignor withholds moves)."""


class StickyAssignor(_AbstractStickyAssignor):
    """The eager sticky assignor: previous partitions travel in user data (KIP-341)."""

    name = "sticky"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    def __init__(self) -> None:
        super().__init__()
        self.member_assignment: list[TopicPartition] | None = None
        self.generation = DEFAULT_GENERATION
        self._decoded: dict[bytes, MemberData] = {}
        self._names: dict[bytes, str] = {}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.member_assignment = list(assignment.partitions)
        self.generation = generation

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        """Nothing before the first assignment; then (partitions, generation) as v1."""
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(self.member_assignment, self.generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        """Always from user data: an eager member revoked everything before joining."""
        data = subscription.user_data
        if not data:
            return MemberData([], None)
        cached = self._decoded.get(data)
        if cached is None:
            cached = self._decoded[data] = decode_sticky_user_data(data, self._names)
            if self.collector is not None:
                self.collector.made(len(cached.partitions))
        return cached

    def resolved_input(self, cluster: Cluster, subscriptions: dict[str, Subscription]
                       ) -> Hashable | None:
        """What `assign_partitions` reads of its input once the claims are resolved, as a
        key: equal keys, equal assignments (the cluster's racks aside, which the caller
        keys). None for a subclass, which may read more (the bug zoo's mutants do).

        The rest of the run reads the members in order, their topics and racks, the
        partition counts of their topics and the claims that survive conflict resolution
        (KIP-341). When every member subscribes to the same topics it also reads the
        partitions claimed twice at one generation (KAFKA-12984); otherwise, instead, each
        partition's claimant of an older generation (KAFKA-14639), and only who it is and
        whether it reported a generation, only for partitions of a topic two members can
        take (no other is ever reassigned). Stale and losing claims, user data bytes and
        generations reach it through nothing else. This instance, its ``max_generation``
        included, is left as it was.
        """
        if type(self) is not StickyAssignor or not subscriptions:
            return None
        members = member_order(subscriptions)
        partitions_per_topic = _partitions_per_topic(cluster, subscriptions)
        member_data = {m: self.member_data(subscriptions[m]) for m in members}
        claims, max_generation = resolve_owned_partitions(
            partitions_per_topic, members, subscriptions, member_data, self.max_generation)
        if len(self._decoded) > 4096:
            self._decoded.clear()
        return (tuple(subscriptions), tuple(partitions_per_topic.items()),
                tuple((m, tuple(subscriptions[m].topics), subscriptions[m].rack_id,
                       tuple(claims.owned[m])) for m in members),
                frozenset(claims.partitions_with_multiple_previous_owners) if claims.all_equal
                else _older_key(members, subscriptions, partitions_per_topic, member_data,
                                max_generation))

    def assign_partitions(self, cluster: Cluster, subscriptions: dict[str, Subscription]
                          ) -> dict[str, list[TopicPartition]]:
        """Each member's user data is decoded once per rebalance (Kafka decodes it twice)."""
        try:
            return super().assign_partitions(cluster, subscriptions)
        finally:
            self._decoded.clear()
            self._names.clear()


class CooperativeStickyAssignor(_AbstractStickyAssignor):
    """The cooperative sticky assignor (KIP-429): owned partitions come in the subscription,
    the generation too from v2 on (KIP-792), else from user data (KAFKA-12984)."""

    name = "cooperative-sticky"
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (
        RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def __init__(self) -> None:
        super().__init__()
        self.generation = DEFAULT_GENERATION

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.generation = generation

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return encode_cooperative_user_data(self.generation)

    def member_data(self, subscription: Subscription) -> MemberData:
        if subscription.generation_id is not None:
            return MemberData(subscription.owned_partitions, subscription.generation_id)
        return MemberData(subscription.owned_partitions,
                          decode_cooperative_user_data(subscription.user_data))

    def withheld_moves(self, assignment: dict[str, list[TopicPartition]],
                       subscriptions: dict[str, Subscription]) -> dict[TopicPartition, str]:
        transferring = self.partitions_transferring_ownership
        if transferring is None:
            transferring = _compute_transferring(subscriptions, assignment)
        return transferring

    def adjust_assignment(self, assignment: dict[str, list[TopicPartition]],
                          subscriptions: dict[str, Subscription]) -> None:
        """Withhold every partition that changes owner until its owner has revoked it."""
        for tp, member in self.withheld_moves(assignment, subscriptions).items():
            partitions = assignment[member]
            if tp in partitions:
                partitions.remove(tp)


def _older_key(members: list[str], subscriptions: dict[str, Subscription],
               partitions_per_topic: dict[str, int], member_data: dict[str, MemberData],
               max_generation: int) -> tuple[tuple[TopicPartition, str, bool], ...]:
    """What the general builder reads of ``older_claims``: (partition, claimant, generation
    reported) for partitions of the metadata whose topic has two or more takers (the
    builder's ``topic_consumers``, counted as it counts them)."""
    takers: dict[str, int] = {}
    for member in members:
        for topic in subscriptions[member].topics:
            if topic in partitions_per_topic:
                takers[topic] = takers.get(topic, 0) + 1
    return tuple(sorted(
        (tp, owner[0], owner[2])
        for tp, owner in older_claims(members, member_data, max_generation).items()
        if takers.get(tp[0], 0) >= 2 and 0 <= tp[1] < partitions_per_topic[tp[0]]))


def _partitions_per_topic(cluster: Cluster, subscriptions: dict[str, Subscription]
                          ) -> dict[str, int]:
    """The partition count of every subscribed topic the metadata knows with partitions."""
    counts: dict[str, int] = {}
    for topic in subscribed_topics(subscriptions.values()):
        count = cluster.partition_count(topic)
        if count is not None and count > 0:
            counts[topic] = count
    return counts


def _compute_transferring(subscriptions: dict[str, Subscription],
                          assignment: dict[str, list[TopicPartition]]
                          ) -> dict[TopicPartition, str]:
    """General builder: partitions newly given to a member that some member still owns."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member, partitions in assignment.items():
        owned = subscriptions[member].owned_partitions
        if partitions[:len(owned)] == owned:  # kept everything, in order: only additions
            for tp in partitions[len(owned):]:
                added[tp] = member
            continue
        owned_set = set(owned)
        for tp in partitions:
            if tp not in owned_set:
                added[tp] = member
        assigned_set = set(partitions)
        revoked.update(tp for tp in owned if tp not in assigned_set)
    return {tp: m for tp, m in added.items() if tp in revoked}
