"""The domain events of a group's members: one frozen dataclass per kind, each performing
itself on a target (`apply`) and telling itself as a replay's story line (`describe`).

`DomainEvent` is what every kind shares: its ``op`` (the name a replay file gives it) and the
notes an upgrade plan adds (the bounce an event belongs to, and that it is a fault).
`MemberEvent` is an event aimed at one member; it does nothing once that member is gone
(a shrunk list may drop its join). The group's own events (metadata, records, coordinator
answers, time) are in model/group_events.py; model/event_registry.py reads and writes them
all as JSON.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from ..properties.group import GroupTarget, MemberSpec, TopicPartition
from .event_steps import after, drain, rolled, subscribed, unsubscribed
from .spec import ReferenceModel

__all__ = ["Crash", "DomainEvent", "Join", "Leave", "MemberEvent", "Pause", "Rejoin", "Resume",
           "SlowRevoke", "Stall", "Subscribe", "TopicPartitions", "Unsubscribe", "Wake",
           "parts_text"]

TopicPartitions = tuple[TopicPartition, ...]
T = TypeVar("T")


def parts_text(partitions: TopicPartitions) -> str:
    return ", ".join(f"{t}-{p}" for t, p in partitions)


@dataclass(frozen=True, kw_only=True)
class DomainEvent(ABC):
    """One thing that happens to a group. ``bounce`` and ``fault`` are an upgrade plan's
    notes (the bounce the event belongs to, 0 while the group forms; a fault it injects
    between restarts); None: the event does not say."""

    op: ClassVar[str]
    bounce: int | None = None
    fault: bool | None = None

    @property
    def who(self) -> str | None:
        """The member the event is aimed at, if any."""
        return None

    def happens(self, model: ReferenceModel) -> bool:
        """Whether the event takes place in the group the model holds."""
        return True

    @abstractmethod
    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        """Perform the event on the target and the model; what the model objects to."""

    @abstractmethod
    def describe(self) -> str:
        """The event as a line of a replay's story."""

    def label(self) -> str:
        """A column heading of at most 12 characters (an ownership timeline's)."""
        return self.op[:12]


@dataclass(frozen=True)
class MemberEvent(DomainEvent):
    """An event aimed at one member, which must still be in the group."""

    member: str

    @property
    def who(self) -> str | None:
        return self.member

    def happens(self, model: ReferenceModel) -> bool:
        return self.member in model.members

    def label(self) -> str:
        return f"{self.op} {self.member}"[:12]


@dataclass(frozen=True)
class Join(MemberEvent):
    """A consumer starts and joins. Fields left None take the defaults of `MemberSpec`
    (profile ``kip``, subscription v3, user data v1, cooperative user data sent, no static
    id, the target's own client, commit style ``none``); ``rolling``: a rolling upgrade
    restarts the member, which may mix assignor lists the group shares nothing with."""

    op: ClassVar[str] = "join"
    topics: tuple[str, ...]
    assignors: tuple[str, ...]
    profile: str | None = None
    subscription_version: int | None = None
    user_data_version: int | None = None
    cooperative_user_data: bool | None = None
    group_instance_id: str | None = None
    client: str | None = None
    rolling: bool | None = None
    commit_style: str | None = None

    def spec(self) -> MemberSpec:
        """The member's configuration, defaults filled in."""
        default = MemberSpec(self.topics, self.assignors)
        return MemberSpec(
            topics=self.topics, assignors=self.assignors,
            profile=_given(self.profile, default.profile),
            subscription_version=_given(self.subscription_version,
                                        default.subscription_version),
            user_data_version=_given(self.user_data_version, default.user_data_version),
            group_instance_id=self.group_instance_id,
            cooperative_user_data=_given(self.cooperative_user_data,
                                         default.cooperative_user_data),
            client=self.client, commit_style=_given(self.commit_style, default.commit_style))

    def happens(self, model: ReferenceModel) -> bool:
        """A join needs a free name and one assignor in common with every member; the
        harness does not drive groups into INCONSISTENT_GROUP_PROTOCOL (a configuration
        error), except in a rolling upgrade, played as its users would play it."""
        if self.member in model.members:
            return False
        if self.rolling:
            return True
        wanted = set(self.assignors)
        specs = [m.spec for m in model.members.values()] + model.crashed
        return all(wanted & set(spec.assignors) for spec in specs)

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        spec = self.spec()
        target.join(self.member, spec)
        model.joined(self.member, spec)
        if self.rolling:
            return rolled(model, target, self.member) or drain(model, target)
        return after(model, target)

    def describe(self) -> str:
        spec = self.spec()
        no_ud = "" if spec.cooperative_user_data else ", no cooperative user data"
        commits = "" if spec.commit_style == "none" else f", commits {spec.commit_style}"
        runs = f" on {self.client}" if self.client else ""
        return (f"{self.member} joins{runs}, subscribed to {', '.join(self.topics)} with "
                f"[{', '.join(self.assignors)}] ({spec.profile} profile, "
                f"subscription v{spec.subscription_version}, user data "
                f"v{spec.user_data_version}{no_ud}{commits})")


def _given(value: T | None, default: T) -> T:
    return default if value is None else value


@dataclass(frozen=True)
class Leave(MemberEvent):
    """The member leaves the group (LeaveGroup) and stops."""

    op: ClassVar[str] = "leave"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.leave(self.member)
        model.left(self.member)
        return after(model, target)

    def describe(self) -> str:
        return f"{self.member} leaves the group"


@dataclass(frozen=True)
class Crash(MemberEvent):
    """The member's process dies without a word to the coordinator."""

    op: ClassVar[str] = "crash"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.crash(self.member)
        model.crashed_member(self.member)
        return after(model, target)

    def describe(self) -> str:
        return f"{self.member} crashes"


@dataclass(frozen=True)
class Stall(MemberEvent):
    """The member stops polling (a long pause of its application)."""

    op: ClassVar[str] = "stall"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.stall(self.member)
        return after(model, target)

    def describe(self) -> str:
        return f"{self.member} stalls (stops polling)"


@dataclass(frozen=True)
class Wake(MemberEvent):
    """A stalled member polls again, with the state it had."""

    op: ClassVar[str] = "wake"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.wake(self.member)
        return after(model, target)

    def describe(self) -> str:
        return f"{self.member} wakes up with its stale state"


@dataclass(frozen=True)
class Subscribe(MemberEvent):
    """The member changes its subscription to ``topics``."""

    op: ClassVar[str] = "subscribe"
    topics: tuple[str, ...]

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        return (subscribed(model, target, self.member, self.topics)
                or drain(model, target))

    def describe(self) -> str:
        return f"{self.member} subscribes to {', '.join(self.topics)}"


@dataclass(frozen=True)
class Unsubscribe(MemberEvent):
    """The member unsubscribes from everything (KIP-70)."""

    op: ClassVar[str] = "unsubscribe"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        return unsubscribed(model, target, self.member)

    def describe(self) -> str:
        return f"{self.member} unsubscribes"


@dataclass(frozen=True)
class Pause(MemberEvent):
    """The member pauses fetching from some of its partitions. A target that shows its
    pause calls in order tells the model itself, when they happen."""

    op: ClassVar[str] = "pause"
    partitions: TopicPartitions

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.pause(self.member, self.partitions)
        if not getattr(target, "shows_pause_calls", False):
            model.paused(self.member, self.partitions)
        return after(model, target)

    def describe(self) -> str:
        return f"{self.member} pauses {parts_text(self.partitions)}"


@dataclass(frozen=True)
class Resume(MemberEvent):
    """The member resumes fetching from paused partitions."""

    op: ClassVar[str] = "resume"
    partitions: TopicPartitions

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.resume(self.member, self.partitions)
        if not getattr(target, "shows_pause_calls", False):
            model.resumed(self.member, self.partitions)
        return after(model, target)

    def describe(self) -> str:
        return f"{self.member} resumes {parts_text(self.partitions)}"


@dataclass(frozen=True)
class Rejoin(MemberEvent):
    """The member asks for a rebalance (``enforceRebalance``, KIP-568)."""

    op: ClassVar[str] = "rejoin"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        rejoin = getattr(target, "enforce_rebalance", None)
        if rejoin is None:
            raise ValueError(f"{target.name} cannot make a member rejoin")
        rejoin(self.member)
        return after(model, target)

    def describe(self) -> str:
        return f"{self.member} asks to rejoin the group (enforceRebalance, KIP-568)"


@dataclass(frozen=True)
class SlowRevoke(MemberEvent):
    """The member's next revoke callback outlasts the rebalance (wire targets)."""

    op: ClassVar[str] = "slow_revoke"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        slow = getattr(target, "slow_revoke", None)
        if slow is None:
            raise ValueError(f"{target.name} cannot slow down a revoke callback")
        slow(self.member)
        return after(model, target)

    def describe(self) -> str:
        return (f"{self.member}'s next revoke callback lasts until another member has its "
                "partitions")
