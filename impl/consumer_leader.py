"""What a consumer puts in JoinGroup, and what it does as the group's leader.

What lives here: the pure functions behind ConsumerCoordinator's ``metadata()`` (one
protocol entry per assignor), ``onLeaderElected`` (decode every member's subscription, run
the selected assignor, validate a custom COOPERATIVE assignor, encode the result), the
KIP-429 protocol choice, and the leader's metadata snapshot. No state: `consumer` calls
these with what it knows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .consumer_listener import ConsumerConfigError
from .consumer_protocol import decode_subscription, encode_assignment, encode_subscription
from .errors import AssignorError
from .group_messages import JoinGroupMember
from .types import Assignment, Assignor, Cluster, RebalanceProtocol, Subscription, TopicPartition

__all__ = ["LeaderAssignment", "MetadataSnapshot", "choose_protocol", "join_protocols",
           "metadata_snapshot", "perform_assignment"]

_COOPERATIVE_STICKY = "cooperative-sticky"

# What the leader compares to notice that partitions or racks changed (partition counts per
# topic, and each partition's replica racks when the consumer has a rack).
MetadataSnapshot = tuple[tuple[str, int | None, tuple[tuple[str, ...], ...]], ...]


def choose_protocol(assignors: Sequence[Assignor]) -> RebalanceProtocol:
    """The highest protocol every assignor supports (KIP-429); none is a config error."""
    if not assignors:
        raise ConsumerConfigError("at least one partition assignor is required")
    names = [a.name for a in assignors]
    if len(set(names)) != len(names):
        raise ConsumerConfigError(f"duplicate partition assignor names: {names}")
    common = set(RebalanceProtocol)
    for assignor in assignors:
        common &= set(assignor.supported_protocols)
    if not common:
        raise ConsumerConfigError(
            f"the assignors {names} have no rebalance protocol in common")
    return max(common)


def join_protocols(assignors: Sequence[Assignor], *, topics: frozenset[str],
                   owned: Iterable[TopicPartition], generation: int, rack: str | None,
                   version: int) -> tuple[tuple[str, bytes], ...]:
    """JoinGroup ``protocols``: per assignor, in configured order, the subscription with its
    user data, the owned partitions, the generation (KIP-792) and the rack (KIP-881)."""
    owned_list = list(owned)
    entries = []
    for assignor in assignors:
        sub = Subscription(topics=sorted(topics),
                           user_data=assignor.subscription_user_data(set(topics)),
                           owned_partitions=owned_list,
                           generation_id=generation if generation >= 0 else None,
                           rack_id=rack or None)
        entries.append((assignor.name, encode_subscription(sub, version)))
    return tuple(entries)


def metadata_snapshot(cluster: Cluster, topics: Iterable[str],
                      with_racks: bool) -> MetadataSnapshot:
    out = []
    for topic in sorted(topics):
        count = cluster.partition_count(topic)
        racks: tuple[tuple[str, ...], ...] = ()
        if with_racks and count:
            racks = tuple(tuple(sorted(cluster.replica_racks(topic, p))) for p in range(count))
        out.append((topic, count, racks))
    return tuple(out)


@dataclass(frozen=True)
class LeaderAssignment:
    """The SyncGroup ``assignments`` and the topics the whole group subscribes to."""

    assignments: tuple[tuple[str, bytes], ...]
    group_topics: frozenset[str]


def _validate_cooperative_assignment(owned: dict[str, list[TopicPartition]],
                                    assignment: dict[str, Assignment]) -> None:
    """A COOPERATIVE assignor must not give a partition to a new owner in the same round it
    is revoked from the old one (KIP-429); Kafka skips this for its own cooperative-sticky
    (KAFKA-13406), so does `perform_assignment`."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member, result in assignment.items():
        mine = set(owned.get(member, ()))
        now = set(result.partitions)
        added |= now - mine
        revoked |= mine - now
    clash = added & revoked
    if clash:
        raise AssignorError(
            "Assignor supporting the COOPERATIVE protocol violates its requirements: "
            f"{sorted(clash)} assigned to a new consumer while being revoked")


def perform_assignment(assignor: Assignor, protocol: RebalanceProtocol,
                       members: Sequence[JoinGroupMember], cluster: Cluster,
                       version: int) -> LeaderAssignment:
    """Kafka's ``onLeaderElected``: members in the order of the JoinGroup response.

    Raises `CodecError` for a member's malformed metadata and whatever the assignor raises.
    """
    subscriptions: dict[str, Subscription] = {}
    for member in members:
        data = decode_subscription(member.metadata)
        subscriptions[member.member_id] = data.to_api(member.group_instance_id)
    result = assignor.assign(cluster, subscriptions)
    if protocol is RebalanceProtocol.COOPERATIVE and assignor.name != _COOPERATIVE_STICKY:
        _validate_cooperative_assignment(
            {m: s.owned_partitions for m, s in subscriptions.items()}, result)
    encoded = tuple((member, encode_assignment(a, version)) for member, a in result.items())
    topics = frozenset(t for s in subscriptions.values() for t in s.topics)
    return LeaderAssignment(encoded, topics)
