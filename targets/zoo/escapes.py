"""Mutants of what the harness once let through: what a member tells the leader
(user data, I12), stickiness in groups larger than the prover's scopes (I4a), and a user's
assignor with no declared balance contract (I3). Each is our implementation with one rule
undone, or a small user assignor; `zoo` says how each is caught and what its control is."""

from __future__ import annotations

from ...impl.assignors.sticky import StickyAssignor
from ...impl.assignors.sticky_common import DEFAULT_GENERATION
from ...impl.types import (
    Assignment,
    Cluster,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)
from ...impl.user_data import encode_sticky_user_data

__all__ = ["GenerationDroppingStickyAssignor", "GenerationUnsetStickyAssignor",
           "LargeGroupShuffleStickyAssignor", "LeastLoadedAssignor", "SharedStateStickyAssignor",
           "WholeTopicAssignor"]


class GenerationDroppingStickyAssignor(StickyAssignor):
    """A current sticky client whose user data drops the generation (the v0 layout) while
    its leader logic is today's: KIP-341 undone on the writing side only. The leader reads
    every claim at generation -1, so it can no longer tell a stale claim from a fresh one."""

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        if self.member_assignment is None:
            return None
        return encode_sticky_user_data(self.member_assignment, None)


class GenerationUnsetStickyAssignor(StickyAssignor):
    """aiokafka #1176 (bug zoo #29): the consumer never passes the generation on, so every
    member advertises generation -1 in its v1 user data."""

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        super().on_assignment(assignment, DEFAULT_GENERATION)


class SharedStateStickyAssignor(StickyAssignor):
    """kafka-python #2775 / aiokafka #1175 (bug zoo #30): the previous assignment lives on
    the class, so every consumer in one process advertises the last writer's partitions."""

    #: the last writer's (partitions, generation), one for the whole class
    shared: list[tuple[list[TopicPartition], int]] = []

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        type(self).shared[:] = [(list(assignment.partitions), generation)]

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        if not type(self).shared:
            return None
        partitions, generation = type(self).shared[0]
        return encode_sticky_user_data(partitions, generation)


class LargeGroupShuffleStickyAssignor(StickyAssignor):
    """Stickiness lost in groups of four or more (the class of franz-go dcfcacb5, bug zoo
    A.3): with at least four members subscribing to the same topics, each member's share
    goes to the next member. Still complete and balanced; only I4a sees it, and only beyond
    the prover's small scopes."""

    def assign_partitions(self, cluster: Cluster, subscriptions: dict[str, Subscription]
                          ) -> dict[str, list[TopicPartition]]:
        result = super().assign_partitions(cluster, subscriptions)
        members = sorted(result)
        if len(members) < 4 or len({frozenset(s.topics) for s in subscriptions.values()}) > 1:
            return result
        shares = [result[m] for m in members]
        return {m: shares[(i + 1) % len(members)] for i, m in enumerate(members)}


class _CustomAssignor:
    """A user's eager assignor with a name of its own and no declared balance contract."""

    name = "custom"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        return None

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return None


class WholeTopicAssignor(_CustomAssignor):
    """The escape of the ``user`` row: a user's assignor that gives every partition of a topic to
    one member (its first subscriber), reported as "every invariant held" while balance was
    judged only for Kafka's assignor names."""

    name = "whole-topic"

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        result: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            first = min(m for m, s in subscriptions.items() if topic in s.topics)
            result[first] += [(topic, p) for p in range(cluster.partition_count(topic) or 0)]
        return {m: Assignment(ps) for m, ps in result.items()}


class LeastLoadedAssignor(_CustomAssignor):
    """The whole-topic mutant's control: a correct user assignor (no declared contract, so
    Kafka's isBalanced applies). Every partition goes, in order, to the least-loaded member
    subscribing to its topic; then a member holding at least two more than one that could
    take a partition of it gives one away, until none can (the isBalanced rule)."""

    name = "least-loaded"

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        held: dict[str, list[TopicPartition]] = {m: [] for m in sorted(subscriptions)}
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            takers = [m for m in held if topic in subscriptions[m].topics]
            for p in range(cluster.partition_count(topic) or 0):
                held[min(takers, key=lambda m: len(held[m]))].append((topic, p))
        moved = True
        while moved:
            moved = False
            for m in held:
                for donor in held:
                    give = [tp for tp in held[donor] if tp[0] in subscriptions[m].topics]
                    if give and len(held[m]) + 1 < len(held[donor]):
                        held[donor].remove(give[0])
                        held[m].append(give[0])
                        moved = True
        return {m: Assignment(ps) for m, ps in held.items()}
