"""The domain events of a group as a whole and of its coordinator: topic metadata, records,
error and late answers, a connection closed before its answer, the coordinator moved to
another node, the order of SyncGroup answers, and time passing (idle wall-clock
time, protocol steps, a settle judged by I11). The members' own events, and the `DomainEvent`
they all share, are in model/event_types.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..properties.group import GroupTarget
from .event_steps import after, settle, steps
from .event_types import DomainEvent, MemberEvent
from .spec import ReferenceModel

__all__ = ["ConnectionClosed", "CoordinatorError", "CoordinatorMoved", "DeleteTopic", "Delay",
           "Idle", "Partitions", "Poll", "Produce", "Settle", "SyncAnswerOrder"]


@dataclass(frozen=True)
class Partitions(DomainEvent):
    """The topic has ``count`` partitions from now on (it is created, or it grows)."""

    op: ClassVar[str] = "partitions"
    topic: str
    count: int

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.set_partitions(self.topic, self.count)
        model.metadata(self.topic, self.count)
        return after(model, target)

    def describe(self) -> str:
        return f"topic {self.topic} has {self.count} partitions"

    def label(self) -> str:
        return f"{self.topic}: {self.count}"


@dataclass(frozen=True)
class DeleteTopic(DomainEvent):
    """The topic is deleted: it leaves the metadata."""

    op: ClassVar[str] = "delete_topic"
    topic: str

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.delete_topic(self.topic)
        model.metadata(self.topic, None)
        return after(model, target)

    def describe(self) -> str:
        return f"topic {self.topic} is deleted"

    def label(self) -> str:
        return f"{self.topic} gone"


@dataclass(frozen=True)
class Produce(DomainEvent):
    """A record arrives on one partition."""

    op: ClassVar[str] = "produce"
    topic: str
    partition: int

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        target.produce(self.topic, self.partition)
        return after(model, target)

    def describe(self) -> str:
        return f"a record arrives on {self.topic}-{self.partition}"


@dataclass(frozen=True)
class CoordinatorError(MemberEvent):
    """The coordinator answers the member's next ``api`` request with ``error``. The target
    says whom the answer may reach (the mock cluster: anyone's next), and a target that
    ``tells_errors`` says later when it landed (`GroupView.told`)."""

    op: ClassVar[str] = "error"
    api: str
    error: str

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        reached = target.inject_error(self.member, self.api, self.error)
        model.error_answered(set(reached) if reached else {self.member}, self.error,
                             bool(getattr(target, "tells_errors", False)))
        return after(model, target)

    def describe(self) -> str:
        return f"the coordinator answers {self.member}'s next {self.api} with {self.error}"


@dataclass(frozen=True)
class Delay(MemberEvent):
    """The coordinator answers the member's next ``api`` request ``ms`` late (only a wire
    target's backend can)."""

    op: ClassVar[str] = "delay"
    api: str
    ms: int

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        late = getattr(target, "delay_answer", None)
        if late is None:
            raise ValueError(f"{target.name} cannot answer late")
        late(self.member, self.api, self.ms)
        model.delayed.append((self.api, self.ms))
        return after(model, target)

    def describe(self) -> str:
        return f"the coordinator answers {self.member}'s next {self.api} {self.ms} ms late"


@dataclass(frozen=True)
class ConnectionClosed(MemberEvent):
    """The coordinator takes the member's next ``api`` request and closes the connection
    instead of answering it (only a wire target's backend can). The client reconnects and
    asks again, which may cost the group a rebalance; a lost JoinGroup answer may leave a
    member id behind, which the coordinator waits out."""

    op: ClassVar[str] = "close"
    api: str

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        close = getattr(target, "close_before_answer", None)
        if close is None:
            raise ValueError(f"{target.name} cannot close a member's connection")
        close(self.member, self.api)
        model.injected_errors += 1
        model.abandoned += self.api == "JoinGroup"
        return after(model, target)

    def describe(self) -> str:
        return (f"the coordinator closes {self.member}'s connection instead of answering its "
                f"next {self.api}")


@dataclass(frozen=True)
class CoordinatorMoved(MemberEvent):
    """The group's coordinator moves to another broker when the member's next ``api``
    request arrives: the old one answers it NOT_COORDINATOR and every member finds the new
    one with FindCoordinator (only a wire target's backend of two nodes or more can)."""

    op: ClassVar[str] = "move"
    api: str

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        move = getattr(target, "move_coordinator", None)
        if move is None:
            raise ValueError(f"{target.name} cannot move the group's coordinator")
        move(self.member, self.api)
        model.error_answered({self.member}, "NOT_COORDINATOR")
        return after(model, target)

    def describe(self) -> str:
        return (f"the group's coordinator moves to another broker on {self.member}'s next "
                f"{self.api}, which the old one answers NOT_COORDINATOR")


@dataclass(frozen=True)
class SyncAnswerOrder(MemberEvent):
    """In the next rebalance the leader's SyncGroup answer goes out before (or after) the
    member's (only a wire target's backend can)."""

    op: ClassVar[str] = "sync_order"
    leader_first: bool

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        order = getattr(target, "order_sync_answers", None)
        if order is None:
            raise ValueError(f"{target.name} cannot order SyncGroup answers")
        order(self.member, self.leader_first)
        return after(model, target)

    def describe(self) -> str:
        when = "before" if self.leader_first else "after"
        return (f"in the next rebalance the leader's SyncGroup answer goes out {when} "
                f"{self.member}'s")


@dataclass(frozen=True)
class Idle(DomainEvent):
    """Nothing happens for ``ms`` of wall-clock time: no record arrives, the members poll
    on (a target on the wall clock only)."""

    op: ClassVar[str] = "idle"
    ms: int

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        idle = getattr(target, "idle", None)
        if idle is None:
            raise ValueError(f"{target.name} cannot sit idle on a wall clock")
        idle(self.ms)
        return after(model, target)

    def describe(self) -> str:
        return f"nothing happens for {self.ms} ms (no record arrives; the members poll on)"


@dataclass(frozen=True)
class Poll(DomainEvent):
    """The group takes up to ``steps`` protocol steps (None: the file says none, one)."""

    op: ClassVar[str] = "poll"
    steps: int | None = None

    @property
    def count(self) -> int:
        return 1 if self.steps is None else self.steps

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        return steps(model, target, self.count)

    def describe(self) -> str:
        return f"{self.count} protocol step(s)"


@dataclass(frozen=True)
class Settle(DomainEvent):
    """The group runs until it settles, within I11's bound."""

    op: ClassVar[str] = "settle"

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        return settle(model, target)

    def describe(self) -> str:
        return "the group runs until it settles"
