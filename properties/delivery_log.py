"""The data the delivery invariant (I17) judges: what each poll handed the application
(`Handed`), each OffsetCommit the coordinator answered (`Commit`), each member's ownership
intervals (`Tenure`), gathered in a cumulative `DeliveryLog`; and what the judgment returns
(`DeliveryViolation`, `DuplicateWindow`, `DeliveryVerdict`).

Times (``ts``) are one monotonic clock of the harness; a tenure is half-open,
``[start, end)``, ``end`` None while the member still owns the partition. Offsets a commit
names are the next offset to read, as Kafka commits them (last handed + 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["RULES", "Commit", "DeliveryLog", "DeliveryVerdict", "DeliveryViolation",
           "DuplicateWindow", "Handed", "Tenure", "TopicPartition"]

TopicPartition = tuple[str, int]

#: the rules of I17, in report order
RULES: tuple[str, ...] = ("lost", "skipped", "start-later", "start-earlier", "duplicate",
                          "commit-unowned", "commit-backwards", "auto-commit-revoke")


@dataclass(frozen=True)
class Handed:
    """One record a poll handed the application, with the generation the client reported
    then (None where the client does not expose it)."""

    ts: int
    member: str
    topic: str
    partition: int
    offset: int
    generation: int | None


@dataclass(frozen=True)
class Commit:
    """One OffsetCommit as the coordinator answered it: ``offsets`` are (topic, partition,
    next offset); ``error`` None when accepted, else the error's name; ``style`` the
    member's commit style when known."""

    ts: int
    member: str
    generation: int
    offsets: tuple[tuple[str, int, int], ...]
    error: str | None
    style: str | None = None

    @property
    def accepted(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Tenure:
    """One ownership interval ``[start, end)`` of one partition by one member; ``revoked``
    is False when it ended without the member giving the partition up (its client reported
    it lost, or the member crashed): no commit could be made then. ``generation`` is the one
    its assignment came with; ``last_generation`` the one its revoke came in (None: not
    known, or the same)."""

    member: str
    topic: str
    partition: int
    start: int
    end: int | None
    generation: int | None = None
    revoked: bool = True
    last_generation: int | None = None

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)

    def covers(self, ts: int) -> bool:
        """``ts`` falls within the tenure."""
        return self.start <= ts and (self.end is None or ts < self.end)


@dataclass(frozen=True)
class DeliveryLog:
    """Everything from the start of the run up to now. ``styles``: member -> commit style;
    ``caught_up``: the group is stable and every member had the time to read to the high
    watermark (the "lost" rule is judged only then); ``log_start``: each partition's first
    offset (0 when absent: ``auto.offset.reset=earliest``)."""

    handed: tuple[Handed, ...]
    commits: tuple[Commit, ...]
    tenures: tuple[Tenure, ...]
    high_watermarks: Mapping[TopicPartition, int]
    styles: Mapping[str, str]
    caught_up: bool
    log_start: Mapping[TopicPartition, int] = field(default_factory=dict)

    def start_of(self, tp: TopicPartition) -> int:
        """The partition's first offset."""
        return self.log_start.get(tp, 0)


@dataclass(frozen=True)
class DeliveryViolation:
    """One breach of a rule of `RULES`: the member it is charged to, the partition and the
    offsets concerned, and a sentence saying what happened."""

    rule: str
    member: str
    topic: str
    partition: int
    offsets: tuple[int, ...]
    message: str

    @property
    def key(self) -> tuple[str, str, str, int, int]:
        """What stays the same while a cumulative log grows: the rule, member, partition
        and first offset (to report a breach once)."""
        return (self.rule, self.member, self.topic, self.partition,
                self.offsets[0] if self.offsets else -1)

    @property
    def sentence(self) -> str:
        """The violation as the reference model reports it."""
        return f"I17: {self.message} ({self.rule})"


@dataclass(frozen=True)
class DuplicateWindow:
    """Records ``first``..``last`` handed again to ``member`` after the partition changed
    owner (``previous`` owned it before); ``style`` is the previous owner's commit style;
    ``allowed`` when every offset is at or above what the previous owner had committed;
    ``own_commit`` when that bound is the previous owner's own commit (else the partition's
    committed offset then, another member's, or the log start)."""

    previous: str
    member: str
    topic: str
    partition: int
    first: int
    last: int
    style: str | None
    allowed: bool
    own_commit: bool = True

    @property
    def length(self) -> int:
        """How many records the window re-delivered."""
        return self.last - self.first + 1


@dataclass(frozen=True)
class DeliveryVerdict:
    """The judgment of one log: its violations (in `RULES` order) and every duplicate
    window, allowed or not."""

    violations: tuple[DeliveryViolation, ...]
    duplicates: tuple[DuplicateWindow, ...]

    @property
    def held(self) -> bool:
        return not self.violations

    @property
    def widest(self) -> int:
        """The longest duplicate window, in records (0 when none)."""
        return max((w.length for w in self.duplicates), default=0)
