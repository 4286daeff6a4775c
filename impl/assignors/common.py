"""Helpers shared by the range and roundrobin assignors (Kafka's ``AbstractPartitionAssignor``).

* Java string order: ``String.compareTo`` compares UTF-16 code units, which differs from
  Python's code-point order once astral characters meet U+E000..U+FFFF.
* MemberInfo order (KAFKA-8355 for range, KAFKA-8356 for roundrobin): static members first,
  by ``group.instance.id``; then dynamic members by member id. Two static members with the
  same instance id compare equal, so a stable sort keeps their map order.
* The leader keeps subscriptions in a ``HashMap<String, Subscription>``; the assignors see
  members in that map's iteration order (emulated with :mod:`..javahash`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
from typing import ClassVar

from ..errors import AssignorError
from ..javahash import java_string_key, string_map_order
from ..types import Assignment, Cluster, RebalanceProtocol, Subscription

__all__ = ["StatelessEagerAssignor", "Subscribed", "check_inputs", "leader_map_order",
           "member_info_key", "member_info_order", "partition_count"]

_MAX_PARTITIONS = 2**31 - 1  # partition numbers are Java ints
_STR = {str}


def member_info_key(member_id: str, group_instance_id: str | None) -> tuple[int, str]:
    """Sort key of Kafka's ``MemberInfo.compareTo`` (KAFKA-8355 / KAFKA-8356)."""
    if group_instance_id is not None:
        return (0, java_string_key(group_instance_id))
    return (1, java_string_key(member_id))


def leader_map_order(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Member ids in the iteration order of the leader's ``HashMap<String, Subscription>``."""
    return string_map_order(subscriptions.keys())


def member_info_order(members: Iterable[str],
                      subscriptions: Mapping[str, Subscription]) -> list[str]:
    """``members`` (in map order) stably sorted in MemberInfo order."""
    return sorted(members,
                  key=lambda m: member_info_key(m, subscriptions[m].group_instance_id))


class Subscribed:
    """Each member's checked topics as a set, and every distinct topic list once (without
    repeats, in subscription order); a member whose topics equal the previous member's
    shares that member's set, so equal subscriptions, the common case, are read once. Every
    member's topics are type-checked."""

    __slots__ = ("sets", "distinct")

    def __init__(self, members: Iterable[str],
                 subscriptions: Mapping[str, Subscription]) -> None:
        self.sets: dict[str, frozenset[str]] = {}
        #: the members' lists in member order, a run of equal ones once
        self.distinct: list[list[str]] = []
        previous: list[str] | tuple[str, ...] | None = None
        shared: list[str] = []
        shared_set: frozenset[str] = frozenset()
        for member in members:
            subscription = subscriptions[member]
            _check_member(member, subscription)
            topics = subscription.topics
            if topics is not previous and topics != previous:
                previous, shared = topics, list(dict.fromkeys(topics))
                shared_set = frozenset(shared)
                self.distinct.append(shared)
            self.sets[member] = shared_set

    def all_topics(self) -> Iterator[str]:
        """Every member's topics in member order (a list seen before adds nothing new to a
        set or map built from them in this order)."""
        return chain.from_iterable(self.distinct)


def _check_member(member_id: str, subscription: Subscription) -> None:
    """Types of a member's subscription: topics a list (or tuple) of strings, optional ids."""
    if not isinstance(subscription, Subscription):
        raise AssignorError(f"member {member_id!r}: subscription is not a Subscription")
    topics = subscription.topics
    if not isinstance(topics, list | tuple) or not (
            set(map(type, topics)) <= _STR or all(isinstance(t, str) for t in topics)):
        raise AssignorError(f"member {member_id!r}: topics must be a list of strings")
    gid = subscription.group_instance_id
    if gid is not None and not isinstance(gid, str):
        raise AssignorError(f"member {member_id!r}: group_instance_id must be a string")
    rack = subscription.rack_id
    if rack is not None and not isinstance(rack, str):
        raise AssignorError(f"member {member_id!r}: rack_id must be a string")


def check_inputs(cluster: Cluster, subscriptions: Mapping[str, Subscription]) -> None:
    """Reject malformed metadata or member maps with :class:`AssignorError`."""
    if not isinstance(cluster, Cluster) or not isinstance(cluster.partitions, dict):
        raise AssignorError("cluster metadata must be a Cluster with a partitions dict")
    for topic, count in cluster.partitions.items():
        if not isinstance(topic, str):
            raise AssignorError(f"topic name {topic!r} is not a string")
        if (not isinstance(count, int) or isinstance(count, bool)
                or not 0 <= count <= _MAX_PARTITIONS):
            raise AssignorError(
                f"topic {topic!r}: partition count {count!r} is not an int in 0..2^31-1")
    if not isinstance(cluster.racks, dict):
        raise AssignorError("cluster racks must be a dict")
    for topic, per_partition in cluster.racks.items():
        if not isinstance(per_partition, list) or not all(
                isinstance(racks, list | tuple) and all(isinstance(r, str) for r in racks)
                for racks in per_partition):
            raise AssignorError(f"topic {topic!r}: racks must be a list of rack-name lists")
    if not isinstance(subscriptions, Mapping) or not all(
            isinstance(m, str) for m in subscriptions):
        raise AssignorError("subscriptions must map member ids (strings) to Subscriptions")


def partition_count(cluster: Cluster, topic: str) -> int:
    """Partitions of ``topic``, 0 when it has no metadata (such topics are skipped)."""
    return cluster.partitions.get(topic, 0)


class StatelessEagerAssignor:
    """What range and roundrobin share: eager only, no state kept, no user data sent, and
    the members read as the leader reads them (`members_of`)."""

    name: str
    supported_protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    @staticmethod
    def members_of(cluster: Cluster, subscriptions: dict[str, Subscription]
                   ) -> tuple[list[str], Subscribed]:
        """The inputs checked (`AssignorError`); the member ids in the leader's map order
        and each member's topics."""
        check_inputs(cluster, subscriptions)
        members = leader_map_order(subscriptions)
        return members, Subscribed(members, subscriptions)

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        """No state is kept."""

    def subscription_user_data(self, topics: set[str]) -> None:
        """No user data is sent."""
        return None
