"""The consumer's partition state and fetch buffer (Kafka's SubscriptionState and Fetcher).

What lives here: the subscription (topics), the current assignment with per-partition state
(the pause flag and the position), and the records the harness delivered that ``poll`` has
not yet returned. No group protocol: `consumer` decides what is assigned, this module only
keeps it.

Theory of operation: `SubscriptionState.assign_from_subscribed` replaces the assignment and
*reuses* the state of partitions that stay, exactly as Kafka does; that single rule is why
EAGER (which first assigns the empty set) loses every pause while COOPERATIVE keeps the
pauses of retained partitions (KAFKA-13425). Records are returned only for partitions that
are assigned and not paused; buffered records of a partition are dropped when it leaves the
assignment, and a paused partition keeps its buffered records (KAFKA-7548).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .types import TopicPartition

__all__ = ["Record", "SubscriptionState"]


@dataclass(frozen=True)
class Record:
    """A fetched record; the harness delivers these with `Consumer.deliver`."""

    topic: str
    partition: int
    offset: int
    value: bytes | None = None

    @property
    def topic_partition(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass
class _PartitionState:
    """Per-partition state that survives a rebalance only if the partition is retained."""

    paused: bool = False
    position: int | None = None


class SubscriptionState:
    """Topics subscribed, partitions assigned (with their state), records buffered."""

    def __init__(self) -> None:
        self.subscription: frozenset[str] = frozenset()
        self._assignment: dict[TopicPartition, _PartitionState] = {}
        self._buffer: list[Record] = []

    # -- subscription and assignment -------------------------------------------------------

    def subscribe(self, topics: frozenset[str]) -> None:
        """Replace the topics; drop buffered records of topics no longer subscribed (KIP-70)."""
        self.subscription = topics
        self._buffer = [r for r in self._buffer if r.topic in topics]

    def unsubscribe(self) -> None:
        self.subscription = frozenset()
        self._assignment = {}
        self._buffer = []

    @property
    def assigned(self) -> frozenset[TopicPartition]:
        return frozenset(self._assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._assignment

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """The new assignment; retained partitions keep their state, new ones start fresh."""
        old = self._assignment
        self._assignment = {tp: old.get(tp) or _PartitionState() for tp in partitions}
        self._buffer = [r for r in self._buffer if r.topic_partition in self._assignment]

    # -- pause / resume -----------------------------------------------------------------

    @property
    def paused(self) -> frozenset[TopicPartition]:
        return frozenset(tp for tp, s in self._assignment.items() if s.paused)

    def set_paused(self, partitions: Iterable[TopicPartition], paused: bool) -> None:
        """Raises `KeyError` with the first partition that is not assigned (nothing changes)."""
        parts = list(partitions)
        for tp in parts:
            if tp not in self._assignment:
                raise KeyError(tp)
        for tp in parts:
            self._assignment[tp].paused = paused

    # -- positions and records ----------------------------------------------------------

    def positions(self) -> dict[TopicPartition, int]:
        """Next offset to consume, for assigned partitions that have returned records."""
        return {tp: s.position for tp, s in self._assignment.items() if s.position is not None}

    def deliver(self, records: Iterable[Record]) -> None:
        self._buffer.extend(records)

    def clear_buffer(self) -> None:
        self._buffer = []

    @property
    def buffered(self) -> tuple[Record, ...]:
        return tuple(self._buffer)

    def drain(self) -> list[Record]:
        """Records of assigned, unpaused partitions, in delivery order; positions advance.

        Records of partitions not assigned are discarded (the fetcher drops completed fetches
        of unassigned partitions); records of paused partitions stay buffered.
        """
        out: list[Record] = []
        kept: list[Record] = []
        for record in self._buffer:
            state = self._assignment.get(record.topic_partition)
            if state is None:
                continue
            if state.paused:
                kept.append(record)
                continue
            out.append(record)
            state.position = record.offset + 1
        self._buffer = kept
        return out
