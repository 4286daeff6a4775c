"""The changes of an audit story between two rebalances, as types: a consumer joins, leaves,
stalls (it misses the next rebalances and keeps its state), returns (with its stale claims
and generation: KAFKA-7026), changes its subscription; a topic grows or is deleted; or
nothing changes (every member rejoins).

Each kind is a frozen dataclass that changes a `StoryGroup` (`apply`), tells itself in a
story line (`text`) and says how it changes the group's size (`joins`); `read_change` reads
one from a story's JSON (`model.story_shapes.ChangeRecord`) by its ``op``, and `record`
writes it back. The story generator (audit/scenarios.py) makes changes and keeps their
records: a story stays JSON, the shrinker edits it in place.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from ..model.story_shapes import ChangeRecord, SpecMember
from .story_group import StoryGroup

__all__ = ["CHANGE_TYPES", "Change", "DeleteChange", "GrowChange", "JoinChange", "LeaveChange",
           "NoChange", "ReturnChange", "StallChange", "SubscribeChange", "member_line",
           "read_change"]


def member_line(m: SpecMember) -> str:
    """``c1: topics t0,t1; owns t0-0 (generation 3), rack r0``."""
    owned = " ".join(f"{t}-{p}" for t, p in m.get("owned") or []) or "-"
    gen = m.get("generation")
    extra = "".join(f", {k} {v}" for k, v in (("rack", m.get("rack")),
                                              ("groupInstanceId", m.get("groupInstanceId")))
                    if v)
    return (f"{m['id']}: topics {','.join(m['topics']) or '-'}; owns {owned} "
            f"({'no generation' if gen is None else f'generation {gen}'}){extra}")


@dataclass(frozen=True)
class Change(ABC):
    """One change of a story's group before its next rebalance."""

    op: ClassVar[str]
    #: how the change moves the number of members in the group
    joins: ClassVar[int] = 0

    @abstractmethod
    def apply(self, group: StoryGroup) -> None:
        """Make the change to the group."""

    @abstractmethod
    def text(self) -> str:
        """The change in a story line."""

    @abstractmethod
    def record(self) -> ChangeRecord:
        """The change as a story's JSON holds it."""

    @classmethod
    @abstractmethod
    def read(cls, record: ChangeRecord) -> Change:
        """The change a story's JSON holds (its ``op`` is this kind's)."""


@dataclass(frozen=True)
class JoinChange(Change):
    """A new consumer joins, with no generation."""

    op: ClassVar[str] = "join"
    joins: ClassVar[int] = 1
    member: SpecMember

    def apply(self, group: StoryGroup) -> None:
        group.join(self.member)

    def text(self) -> str:
        return "joins: " + member_line(self.member)

    def record(self) -> ChangeRecord:
        return {"op": self.op, "member": self.member}

    @classmethod
    def read(cls, record: ChangeRecord) -> Change:
        member = record["member"]
        if isinstance(member, str):
            raise ValueError(f"a join names its whole member, not {member!r}")
        return cls(member)


@dataclass(frozen=True)
class _Named(Change):
    """A change of the member named ``member``."""

    member: str

    def text(self) -> str:
        return f"{self.member} {self.op}s"

    def record(self) -> ChangeRecord:
        return {"op": self.op, "member": self.member}

    @classmethod
    def read(cls, record: ChangeRecord) -> Change:
        return cls(_name(record))


def _name(record: ChangeRecord) -> str:
    member = record["member"]
    return member if isinstance(member, str) else member["id"]


@dataclass(frozen=True)
class LeaveChange(_Named):
    """The member leaves the group."""

    op: ClassVar[str] = "leave"
    joins: ClassVar[int] = -1

    def apply(self, group: StoryGroup) -> None:
        group.members.pop(self.member, None)


@dataclass(frozen=True)
class StallChange(_Named):
    """The member misses the next rebalances and keeps its state."""

    op: ClassVar[str] = "stall"
    joins: ClassVar[int] = -1

    def apply(self, group: StoryGroup) -> None:
        if self.member in group.members:
            group.stalled[self.member] = group.members.pop(self.member)


@dataclass(frozen=True)
class ReturnChange(_Named):
    """A stalled member rejoins with its stale claims and generation (KAFKA-7026)."""

    op: ClassVar[str] = "return"
    joins: ClassVar[int] = 1

    def apply(self, group: StoryGroup) -> None:
        if self.member in group.stalled:
            group.members[self.member] = group.stalled.pop(self.member)


@dataclass(frozen=True)
class SubscribeChange(Change):
    """The member subscribes to ``topics`` instead."""

    op: ClassVar[str] = "subscribe"
    member: str
    topics: tuple[str, ...]

    def apply(self, group: StoryGroup) -> None:
        if self.member in group.members:
            group.members[self.member].topics = list(self.topics)

    def text(self) -> str:
        return f"{self.member} subscribes to {','.join(self.topics) or '-'}"

    def record(self) -> ChangeRecord:
        return {"op": self.op, "member": self.member, "topics": list(self.topics)}

    @classmethod
    def read(cls, record: ChangeRecord) -> Change:
        return cls(_name(record), tuple(record["topics"]))


@dataclass(frozen=True)
class GrowChange(Change):
    """The topic has ``count`` partitions from now on (a new one's racks: the last one's)."""

    op: ClassVar[str] = "grow"
    topic: str
    count: int

    def apply(self, group: StoryGroup) -> None:
        group.partitions[self.topic] = self.count
        if group.racks is not None and self.topic in group.racks:
            racks = group.racks[self.topic]
            racks += [racks[-1] if racks else []] * (self.count - len(racks))

    def text(self) -> str:
        return f"{self.topic} grows to {self.count}"

    def record(self) -> ChangeRecord:
        return {"op": self.op, "topic": self.topic, "count": self.count}

    @classmethod
    def read(cls, record: ChangeRecord) -> Change:
        return cls(record["topic"], int(record["count"]))


@dataclass(frozen=True)
class DeleteChange(Change):
    """The topic loses its metadata."""

    op: ClassVar[str] = "delete"
    topic: str

    def apply(self, group: StoryGroup) -> None:
        group.partitions.pop(self.topic, None)
        if group.racks is not None:
            group.racks.pop(self.topic, None)

    def text(self) -> str:
        return f"{self.topic} is deleted"

    def record(self) -> ChangeRecord:
        return {"op": self.op, "topic": self.topic}

    @classmethod
    def read(cls, record: ChangeRecord) -> Change:
        return cls(record["topic"])


@dataclass(frozen=True)
class NoChange(Change):
    """Nothing changes: every member rejoins."""

    op: ClassVar[str] = "none"

    def apply(self, group: StoryGroup) -> None:
        pass

    def text(self) -> str:
        return "no change"

    def record(self) -> ChangeRecord:
        return {"op": self.op}

    @classmethod
    def read(cls, record: ChangeRecord) -> Change:
        return cls()


#: every kind of change, by the ``op`` a story names it with
CHANGE_TYPES: dict[str, type[Change]] = {kind.op: kind for kind in (
    JoinChange, LeaveChange, StallChange, ReturnChange, SubscribeChange, GrowChange,
    DeleteChange, NoChange)}


def read_change(record: ChangeRecord) -> Change:
    """The change a story's JSON holds (`ValueError` for an op no story has)."""
    kind = CHANGE_TYPES.get(record["op"])
    if kind is None:
        raise ValueError(f"unknown story change {record['op']!r}; expected one of "
                         f"{', '.join(CHANGE_TYPES)}")
    return kind.read(record)
