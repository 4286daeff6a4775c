"""Plain data shared by the codecs and the assignors (ConsumerPartitionAssignor's types).

Names follow Kafka's Java client in snake_case: ``owned_partitions``, ``generation_id``,
``rack_id``, ``group_instance_id``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Assignment", "Assignor", "Cluster", "RebalanceProtocol", "Subscription",
           "TopicPartition"]

TopicPartition = tuple[str, int]


class RebalanceProtocol(enum.IntEnum):
    """KIP-429: EAGER = 0 < COOPERATIVE = 1; a client runs the highest all its assignors support."""

    EAGER = 0
    COOPERATIVE = 1


@dataclass
class Subscription:
    """What the group leader knows of one member (the API view of a decoded subscription).

    ``generation_id`` is ``None`` where Java has ``Optional.empty()`` (absent or negative);
    ``rack_id`` is ``None`` for a missing or empty rack.
    """

    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: list[TopicPartition] = field(default_factory=list)
    generation_id: int | None = None
    rack_id: str | None = None
    group_instance_id: str | None = None


@dataclass
class Assignment:
    """One member's share: partitions in the assignor's order, and optional user data."""

    partitions: list[TopicPartition]
    user_data: bytes | None = None


@dataclass
class Cluster:
    """The leader's metadata: partition count per topic and, optionally, replica racks.

    ``racks[topic][p]`` lists the racks of partition p's replicas; a missing or empty entry
    means no rack information for that partition.
    """

    partitions: dict[str, int]
    racks: dict[str, list[list[str]]] = field(default_factory=dict)

    def partition_count(self, topic: str) -> int | None:
        return self.partitions.get(topic)

    def replica_racks(self, topic: str, partition: int) -> list[str]:
        per_topic = self.racks.get(topic)
        if per_topic is None or partition >= len(per_topic) or partition < 0:
            return []
        return per_topic[partition]


class Assignor(Protocol):
    """Mirrors ``ConsumerPartitionAssignor``; one instance per consumer (it keeps state)."""

    name: str

    @property
    def supported_protocols(self) -> tuple[RebalanceProtocol, ...]:
        """The protocols it can assign for, preferred first (KIP-429)."""

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]: ...

    def on_assignment(self, assignment: Assignment, generation: int) -> None: ...

    def subscription_user_data(self, topics: set[str]) -> bytes | None: ...
