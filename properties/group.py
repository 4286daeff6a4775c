"""The contract between engines and group targets: plain-data views and `GroupTarget`.

A group target runs real members and a real coordinator (ours, or anything an adapter
wraps); the engines drive it with domain events and judge the views it returns against
the reference model. It lives on the lowest floor so that both the engines (model/) and the
adapters (targets/) can use it; everything here is plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from .delivery import DeliveryLog
from .member_id_rules import ErrorResponse, NextJoin

__all__ = ["CallbackRecord", "Claim", "GroupTarget", "GroupView", "MemberSpec", "MemberView",
           "RaisedError", "RebalanceRecord", "SubscribeCall", "TopicPartition"]

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class MemberSpec:
    """How a member is configured when it joins.

    ``assignors``: strategy names in preference order (``partition.assignment.strategy``);
    ``profile``: the client profile it follows (``kip`` or ``java``);
    ``subscription_version``: the ConsumerProtocolSubscription version it writes;
    ``user_data_version``: sticky user data version it writes (1 = KIP-341, 0 = older);
    ``cooperative_user_data``: a cooperative-sticky member sends its generation in user data
    (Kafka's client does; without it only a v2+ subscription carries one, KIP-792);
    ``client``: on a target of several clients (a rolling upgrade's), the one this member runs;
    ``commit_style``: how its application commits (``none``, ``auto``, ``sync``, ``async``,
    ``revoke``: the member-driver contract's commit styles).
    """

    topics: tuple[str, ...]
    assignors: tuple[str, ...]
    profile: str = "kip"
    subscription_version: int = 3
    user_data_version: int = 1
    group_instance_id: str | None = None
    cooperative_user_data: bool = True
    client: str | None = None
    commit_style: str = "none"


@dataclass(frozen=True)
class CallbackRecord:
    """One rebalance-listener call, as the member saw it (``owned_before`` is its owned set
    just before the call; ``generation``/``member_id``/``rebalancing`` its membership then)."""

    seq: int
    member: str
    kind: str  # "revoked" | "assigned" | "lost"
    partitions: tuple[TopicPartition, ...]
    owned_before: tuple[TopicPartition, ...]
    generation: int
    member_id: str
    rebalancing: bool = False  # a rebalance was in progress for the member
    started: int = -1  # seq when the call began, for targets that log both ends (else -1)


@dataclass(frozen=True)
class Claim:
    """What one member told the leader in its JoinGroup subscription: its topics, the owned
    partitions and generation the leader reads, the raw ``user_data`` of the selected
    assignor, and ``given`` — the (partitions, generation) that member's assignor was last
    handed by ``on_assignment`` before it wrote that user data (None when never, or when
    the target cannot tell)."""

    topics: tuple[str, ...]
    owned: tuple[TopicPartition, ...]
    generation: int
    user_data: bytes | None = None
    given: tuple[tuple[TopicPartition, ...], int] | None = None


@dataclass(frozen=True)
class RebalanceRecord:
    """One run of the leader's assignor: the claims it read, the members' real ownership
    at that moment, and its result (names are the harness's member names)."""

    generation: int
    protocol: str  # "EAGER" | "COOPERATIVE"
    assignor: str
    claims: dict[str, Claim]
    owned: dict[str, tuple[TopicPartition, ...]]
    assignment: dict[str, tuple[TopicPartition, ...]]
    #: read from the coordinator's side of a real wire (the bytes it held): then every
    #: protocol's claims are judged (I6), against ``given`` — what each claimant was
    #: assigned in its last completed generation — and ``unreadable`` lists the bytes a
    #: reader version failed on (I10)
    observed: bool = False
    given: dict[str, tuple[TopicPartition, ...]] = field(default_factory=dict)
    unreadable: tuple[str, ...] = ()
    #: members whose client release sends no generation (no KIP-792, none in its user
    #: data): a claim without one is what that release sends, not an I6 breach
    generationless: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SubscribeCall:
    """One ``subscribe`` call and the client's own assignment just before and after it."""

    member: str
    before: frozenset[TopicPartition]
    after: frozenset[TopicPartition]


@dataclass(frozen=True)
class MemberView:
    """One member's own state."""

    name: str
    member_id: str
    generation: int
    owned: frozenset[TopicPartition]
    paused: frozenset[TopicPartition]
    subscription: frozenset[str]
    protocol: str
    profile: str
    in_group: bool  # the coordinator lists this member id
    active: bool  # polling (not stalled, not crashed, not closed)
    commits: int = 0
    completed_joins: int = 0  # assignments it has adopted (onJoinComplete runs)
    joined_owned: frozenset[TopicPartition] = frozenset()  # owned when the last one ended


@dataclass(frozen=True)
class RaisedError:
    """An exception a member's client raised to the application from ``poll()``: the
    Kafka error it names ('' for none), whether Kafka's client retries that error itself,
    the exception's text, and whether it is of the client's own making (a language-level
    error that names no Kafka error, such as IllegalStateException or AssertionError)."""

    member: str
    error: str
    retriable: bool
    text: str
    internal: bool = False


@dataclass(frozen=True)
class GroupView:
    """Everything observable after a step; the tuples hold what happened since the last view."""

    generation: int
    state: str
    leader: str | None
    partitions: dict[str, int]
    members: dict[str, MemberView]
    settled: bool
    callbacks: tuple[CallbackRecord, ...] = ()
    rebalances: tuple[RebalanceRecord, ...] = ()
    records: tuple[tuple[str, TopicPartition], ...] = ()
    errors: tuple[tuple[str, str], ...] = field(default=())
    subscribe_calls: tuple[SubscribeCall, ...] = ()
    #: (member, "pause" | "resume", partitions) calls, for targets that show them in order
    pause_calls: tuple[tuple[str, str, tuple[TopicPartition, ...]], ...] = ()
    #: (member, error, generation) for targets that show when an injected error lands
    #: (``tells_errors``): the coordinator answered that member's request of that generation
    #: (-1: a request without one) with that error; such a target shows the coordinator's
    #: own fencing answers too
    told: tuple[tuple[str, str, int], ...] = ()
    #: exceptions a member's poll() raised to the application, for targets that tell
    raised: tuple[RaisedError, ...] = ()
    #: coordinator error answers and the member's next JoinGroup, for targets whose broker
    #: keeps an exchange log (I16)
    rejoins: tuple[tuple[ErrorResponse, NextJoin], ...] = ()
    #: what polls handed the application, the commits answered and ownership tenures,
    #: cumulative from the start of the run, for targets that collect them (I17)
    delivery: DeliveryLog | None = None


class GroupTarget(Protocol):
    """A group of real members the engines can drive, one domain event at a time."""

    name: str

    def join(self, member: str, spec: MemberSpec) -> None: ...

    def leave(self, member: str) -> None: ...

    def crash(self, member: str) -> None: ...

    def stall(self, member: str) -> None: ...

    def wake(self, member: str) -> None: ...

    def subscribe(self, member: str, topics: tuple[str, ...]) -> None: ...

    def unsubscribe(self, member: str) -> None: ...

    def set_partitions(self, topic: str, count: int) -> None: ...

    def delete_topic(self, topic: str) -> None: ...

    def pause(self, member: str, partitions: tuple[TopicPartition, ...]) -> None: ...

    def resume(self, member: str, partitions: tuple[TopicPartition, ...]) -> None: ...

    def inject_error(self, member: str, api: str, error: str) -> set[str] | None:
        """The coordinator answers the member's next ``api`` with ``error``; returns the
        members it may reach when that is not the member alone (None: the member)."""
        ...

    def produce(self, topic: str, partition: int) -> None: ...

    def step(self, within_ms: int | None = None) -> bool:
        """One protocol step; False when the group has nothing more to do. A target of real
        clients waits at most ``within_ms`` for one (its own ceiling when None); a target on
        a logical clock never waits."""
        ...

    def view(self) -> GroupView: ...

    def close(self) -> None: ...
