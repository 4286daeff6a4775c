"""What a target string resolves to: a `Target`, the parts of one checkable thing.

A `Target` holds whichever of these its target has: an assign function (``assign(request)
-> response``, for the scope prover, the vectors and ``diff``), a group factory (for the
state machine), a codec (for the I10 battery) and a user-data writer (for I12), and what its
assignor promises: a balance contract (`properties.balance`) and, for the sticky family or
a declared ``balance = "sticky"``, stickiness. `MachineHints` tells the state machine how to
drive its members. `registry.resolve` makes targets; this module only describes them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..impl.jsonl_shapes import Answer, CodecRequest
from ..impl.types import Assignor
from ..properties.balance import STICKY_FAMILY, contract_of
from ..properties.group import GroupTarget, TopicPartition
from ..properties.jsonl_shapes import AssignAnswer, AssignFn, AssignRequest
from ..properties.scope.batch import AssignManyFn
from .profile import ReleaseProfile

__all__ = ["BUILTIN_ASSIGNORS", "AssignFn", "AssignManyFn", "JsonlRequest", "MachineHints",
           "STICKY_FAMILY", "Target", "TargetError", "UserDataFn", "UserDataInput"]

BUILTIN_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
#: (owned partitions handed to ``on_assignment``, its generation, subscribed topics)
UserDataInput = tuple[list[TopicPartition], int, list[str]]
UserDataFn = Callable[[Sequence[UserDataInput]], list[bytes | None]]
#: any request of the JSON-lines contract
JsonlRequest = AssignRequest | CodecRequest


class TargetError(ValueError):
    """A target string that names nothing we can run."""


class MachineHints:
    """What the engines need to know of a target to drive it sensibly."""

    def __init__(self, assignor: str, profiles: tuple[str, ...] = ("kip", "java"),
                 user_data_versions: tuple[int, ...] = (1,),
                 subscription_versions: tuple[int, ...] = (3,), upgrades: bool = True,
                 wire: bool = False, adversarial: bool = False, steering: bool = False) -> None:
        self.assignor = assignor
        self.wire = wire  # real clients on a real wire: slow, fixed topics (wire_config)
        self.adversarial = adversarial
        #: the wire backend aims errors and delays at one member and orders SyncGroup answers
        self.steering = steering
        self.upgrades = upgrades  # members may bounce along the KIP-429 upgrade path
        self.profiles = profiles
        self.user_data_versions = user_data_versions
        self.subscription_versions = subscription_versions
        #: the members send a generation (KIP-792, or in cooperative user data): their
        #: claims can be told fresh from stale (I6)
        self.generations = True
        #: the commit styles every client of the target offers (the member-driver contract's;
        #: ``none`` alone where no client commits)
        self.commit_styles: tuple[str, ...] = ("none",)


@dataclass
class Target:
    """One resolved target. ``assignor``: the strategy name its members use (None for a
    codec-only target); ``balance``: the balance contract its assignor is held to and
    ``balance_why`` where it comes from; ``sticky``: it promises stickiness (I4);
    ``fork_safe``: the prover may fork worker processes; ``user_data``: writes the user
    data of fresh members after ``on_assignment`` (I12); ``open_assignor``: the target
    string leaves the assignor open (set by the resolver; `resolve` then fills ``choices``
    and ``pick``)."""

    name: str
    assignor: str | None
    assign: AssignFn | None = None
    group: Callable[[], GroupTarget] | None = None
    codec: Any = None
    hints: MachineHints | None = None
    balance: str = "none"
    balance_why: str = ""
    sticky: bool = False
    protocol: str = "EAGER"  # the highest its assignor supports (KIP-429)
    fork_safe: bool = True
    #: any JSON-lines op and its answer (``{"error"}`` included)
    call: Callable[[JsonlRequest], Answer] | None = None
    #: a fresh assign function that caches what repeats across requests and leaves out
    #: user data (``impl.assign_session.AssignSession``): deterministic in-tree assignors only
    assign_session: Callable[[], AssignFn] | None = None
    user_data: UserDataFn | None = None
    #: a fresh consumer's assignor object (impl's assignor protocol), what the target's
    #: consumers run: ``groupcheck jsonl --target`` answers ``user_data`` with it
    make: Callable[[], Assignor] | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)
    open_assignor: bool = False
    choices: Callable[[], list[str]] | None = None
    pick: Callable[[str], Target] | None = None
    #: the assign function's batch form, where many requests in flight pay (a process's
    #: window); `assign_many` loops over ``assign`` without one
    batch: AssignManyFn | None = None
    #: seconds a request may take before it fails as TIMEOUT (None: no limit)
    timeout: float | None = None
    #: what the client release behind the target implements (None: everything judged)
    profile: ReleaseProfile | None = None
    #: whether the target's process is up now (a process target; None: it has none)
    running: Callable[[], bool] | None = None

    @property
    def balanced(self) -> bool:
        """Kafka's isBalanced is the contract (the scope prover judges I3 and I4a then)."""
        return self.balance == "sticky"

    def promise(self, declared: str | None = None, cooperative: bool | None = None) -> Target:
        """Set the balance contract and stickiness from the assignor's name (Kafka's rules)
        or its declaration, and the protocol (by Kafka's name unless ``cooperative``)."""
        if self.assignor is not None:
            self.balance, self.balance_why = contract_of(self.assignor, declared)
            self.sticky = self.assignor in STICKY_FAMILY or declared == "sticky"
            if cooperative is None:
                cooperative = self.assignor == "cooperative-sticky"
            self.protocol = "COOPERATIVE" if cooperative else "EAGER"
        return self

    def assign_many(self, requests: Iterable[AssignRequest]
                    ) -> Iterator[AssignAnswer | Exception]:
        """Each request's answer, or the exception its call raised, in request order (the
        requests are taken as the target has room for them)."""
        if self.batch is not None:
            yield from self.batch(requests)
            return
        if self.assign is None:
            raise TargetError(f"{self.name}: no assign function")
        for request in requests:
            try:
                answer = self.assign(request)
            except Exception as exc:  # noqa: BLE001 - the caller reads each call's failure
                yield exc
            else:
                yield answer

    def close(self) -> None:
        for close in self.closers:
            close()

    def engines(self) -> list[str]:
        out = []
        if self.group is not None:
            out.append("fuzz")
        if self.assign is not None:
            out.append("prove")
        if self.codec is not None:
            out.append("codec")
        return out
