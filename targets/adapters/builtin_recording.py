"""What a `BuiltinGroup` records while its members run: each callback with the owned set
it saw, each leader run (the claims it read, the ownership, the result), and, for I12, what
each member's assignor had been handed by ``on_assignment`` when it wrote each user data.
Instrumentation only observes; it never changes what the wrapped objects do."""

from __future__ import annotations

from typing import Protocol

from ...impl.assignors import make_assignor
from ...impl.consumer_listener import RebalanceListener
from ...impl.types import Assignment, Assignor, Cluster, Subscription, TopicPartition
from ...impl.user_data import decode_cooperative_user_data
from ...properties.group import MemberSpec
from .legacy import NoUserDataCooperativeStickyAssignor, PreKip341StickyAssignor

__all__ = ["Given", "Recorder", "RecordingAssignor", "RecordingGroup", "builtin_assignor",
           "claim_generation"]

Given = tuple[tuple[TopicPartition, ...], int]


class RecordingGroup(Protocol):
    """Where the records go (`builtin.BuiltinGroup`)."""

    #: (member, assignor) -> user data written -> what on_assignment had handed over
    written: dict[tuple[str, str], dict[bytes | None, Given]]

    def log_callback(self, name: str, kind: str, partitions: list[TopicPartition]) -> None: ...

    def log_rebalance(self, leader: str, assignor: str, subscriptions: dict[str, Subscription],
                      result: dict[str, Assignment]) -> None: ...


def builtin_assignor(name: str, spec: MemberSpec) -> Assignor:
    """The assignor a member configured by ``spec`` runs: an older client's when the spec
    asks for sticky user data v0 or for no cooperative user data (`legacy`)."""
    if name == "sticky" and spec.user_data_version == 0:
        return PreKip341StickyAssignor()
    if name == "cooperative-sticky" and not spec.cooperative_user_data:
        return NoUserDataCooperativeStickyAssignor()
    return make_assignor(name)


def claim_generation(assignor: str, subscription: Subscription) -> int:
    """The generation the leader reads with a claim: the subscription's (v2+), else, for
    cooperative-sticky, the one in its user data (KAFKA-12984); -1 when none travels."""
    if subscription.generation_id is not None:
        return subscription.generation_id
    if assignor == "cooperative-sticky":
        found = decode_cooperative_user_data(subscription.user_data)
        return -1 if found is None else found
    return -1


class Recorder(RebalanceListener):
    """Logs every callback with the member's owned set just before it."""

    def __init__(self, group: RecordingGroup, name: str) -> None:
        self.group, self.name = group, name

    def _log(self, kind: str, partitions: list[TopicPartition]) -> None:
        self.group.log_callback(self.name, kind, partitions)

    def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
        self._log("revoked", partitions)

    def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
        self._log("assigned", partitions)

    def on_partitions_lost(self, partitions: list[TopicPartition]) -> None:
        self._log("lost", partitions)


class RecordingAssignor:
    """Passes everything to the real assignor; reports each leader run to the group, and
    remembers what ``on_assignment`` handed it when it wrote each user data (I12)."""

    def __init__(self, inner: Assignor, group: RecordingGroup, member: str) -> None:
        self.inner, self.group, self.member = inner, group, member
        self.name = inner.name
        self.supported_protocols = inner.supported_protocols
        self.given: Given | None = None

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        result = self.inner.assign(cluster, subscriptions)
        self.group.log_rebalance(self.member, self.inner.name, subscriptions, result)
        return result

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.given = (tuple(assignment.partitions), generation)
        self.inner.on_assignment(assignment, generation)

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        data = self.inner.subscription_user_data(topics)
        if self.given is not None:
            self.group.written.setdefault((self.member, self.name), {})[data] = self.given
        return data
