"""The cluster the wire members talk to, behind one small interface (`Backend`).

A backend gives a bootstrap address, creates, grows and deletes topics, injects errors and
delays for an API, closes a member's connection before an answer, moves the coordinator and
orders SyncGroup answers — aimed at one member where it can (`Backend.aims_errors_at_members`;
the mock cannot, and cannot order, close or move) — and describes the group as its
coordinator ran it: for every generation, the leader, the protocol, each member's
subscription bytes and the assignment bytes the leader sent, and whether every member got its
SyncGroup answer (`GroupRound`); where it can, also every OffsetCommit its coordinator answered
(`commits`) and each partition's log start and high watermark (`log_ends`). The wire layer
(`group.WireGroup`) judges those bytes and uses them to tell when the group has settled; it
never knows which backend it runs on. A backend's own threads (steering, a proxy's pumps) and
its cluster may fail: `failure` says so, and the wire layer then ends the run as a harness
error. Backends: ``groupcheck`` (groupcheck's own broker, `groupcheck_broker`, the default:
it also answers a real DescribeGroups, `describe`) and ``mock`` (librdkafka's mock cluster, `mock`).
Everything a backend needs to work around stays inside it. This module is the interface
only; `factory` makes a backend by its name.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ....properties.harness import ThreadFailure
from ....properties.member_id_rules import ErrorResponse, NextJoin
from ..refusals import LastJoin

if TYPE_CHECKING:  # the broker imports kio: loaded only when a backend is made
    from ....broker.commit_log import CommitAnswer

__all__ = ["Backend", "BackendUnavailable", "GroupRound", "ensure_partitions"]


@dataclass(frozen=True)
class GroupRound:
    """One generation as the coordinator ran it (member ids as the coordinator gave them;
    ``names`` maps them to the harness's member names, from each consumer's client id)."""

    generation: int
    protocol: str
    leader: str
    subscriptions: dict[str, bytes]
    assignments: dict[str, bytes]
    names: dict[str, str]
    complete: bool  # every member of the generation got its SyncGroup answer
    at_ns: int = 0  # CLOCK_MONOTONIC when the leader's assignment reached the coordinator
    synced: frozenset[str] = field(default_factory=frozenset)  # the members that got it
    #: synced members whose answer steering held back: how long each waited for it (ms)
    waited_ms: dict[str, int] = field(default_factory=dict)


class BackendUnavailable(RuntimeError):
    """The backend cannot run here (its library is missing)."""


class Backend(Protocol):
    name: str
    bootstrap: str
    aims_errors_at_members: bool  # an injected error can hit one member only
    #: the coordinator fences a static member whose group instance id another consumer
    #: joined with (KIP-345): only then does a group play static membership
    fences_static_members: bool
    #: `commits` is the coordinator's log of OffsetCommits (else it is empty: the members'
    #: reported commits stand in, `settle.accepted_commits`)
    keeps_commits: bool

    @property
    def topics(self) -> dict[str, int]: ...  # topic → partition count; read-only here

    def create_topic(self, topic: str, partitions: int) -> None: ...

    def grow_topic(self, topic: str, partitions: int) -> None: ...

    def delete_topic(self, topic: str) -> None: ...

    def inject_error(self, api: str, error: str, member: str | None = None) -> None: ...

    def delay_answer(self, api: str, seconds: float, member: str | None = None) -> None: ...

    #: the member's connection is closed instead of its next ``api`` answer (not on the mock)
    def close_before_answer(self, api: str, member: str) -> None: ...

    #: the coordinator moves to another node on the member's next ``api`` request (not on
    #: the mock, nor on a broker of one node)
    def move_coordinator(self, api: str, member: str) -> None: ...

    def order_sync_answers(self, member: str, leader_first: bool,
                           members: list[str]) -> None: ...

    def rounds(self) -> list[GroupRound]: ...

    def joining(self) -> int: ...

    def problems(self) -> list[str]: ...

    def silent(self, quiet_ms: int) -> dict[str, int]: ...  # `silence.silent_after_sync`

    def last_joins(self) -> dict[str, LastJoin]: ...  # `refusals.last_joins`

    def told(self) -> list[tuple[str, str, int]]: ...  # injected errors landed since

    #: error answers whose member's next JoinGroup was answered since (I16); none on the mock
    def rejoins(self) -> list[tuple[ErrorResponse, NextJoin]]: ...

    #: every OffsetCommit of its group the coordinator answered so far, in arrival order
    #: (none on the mock, which keeps no such log)
    def commits(self) -> list[CommitAnswer]: ...

    #: each partition of ``topics`` (None: of every topic): its (log start offset, high
    #: watermark); empty where it cannot tell (mock)
    def log_ends(self, topics: Collection[str] | None = None
                 ) -> dict[tuple[str, int], tuple[int, int]]: ...

    def forget(self, member: str) -> None: ...  # it left or crashed: disarm what aims at it

    def failure(self) -> ThreadFailure | None: ...  # the first of its own threads' failures

    def close(self) -> None: ...


def ensure_partitions(backend: Backend, topic: str, count: int) -> None:
    """Create or grow the topic; one that already has ``count`` partitions (a client's
    Metadata request made it) stays as it is. A topic never shrinks (Kafka's rule)."""
    has = backend.topics.get(topic)
    if has is not None and count < has:
        raise ValueError(f"topic {topic} has {has} partitions; it cannot shrink to {count}")
    if has is None:
        backend.create_topic(topic, count)
    elif count > has:
        backend.grow_topic(topic, count)
