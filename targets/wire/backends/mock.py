"""``--broker mock``: librdkafka's mock cluster behind the recording proxy, and the one place
where the mock's own defects are handled.

Theory of operation: a fresh `MockCluster` per group; a `mock_proxy.Proxy` listens in front
of its broker, and the mock advertises the proxy's address in its metadata, so every
connection of every client passes the proxy, which records the group as the coordinator ran
it (the mock has no DescribeGroups, so the proxy's record stands in for it). Errors and
delays are pushed into the mock's request error stack: the group's next request of that API
gets it, whoever sends it — the mock cannot aim at one member (`aims_errors_at_members` is
False: the member an event names is ignored, and the documentation says so). It cannot order
SyncGroup answers either: its own sync-order defect is handled by holding the leader's
SyncGroup until the followers have sent theirs. The mock cannot grow a topic; it can
delete one. It does not fence a static member (KIP-345): a second consumer with its group
instance id joins beside it, and neither is told FENCED_INSTANCE_ID, so a group on the mock
plays no static membership (`fences_static_members`).

`MOCK_DEFECTS` lists what the mock gets wrong and `DEFECTS_BY_CLIENT` which clients run into
each; a group gets the handling for the defects its clients need and no other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection
from typing import TYPE_CHECKING

from ....properties.harness import ThreadFailure
from ....properties.member_id_rules import ErrorResponse, NextJoin
from ..refusals import LastJoin
from .backend import BackendUnavailable, GroupRound
from .mock_binding import MockCluster, MockUnavailable
from .mock_proxy import JOIN_GROUP, SYNC_GROUP, Proxy, Request

if TYPE_CHECKING:  # the broker imports kio
    from ....broker.commit_log import CommitAnswer

__all__ = ["ALWAYS", "API_VERSIONS", "DEFECTS_BY_CLIENT", "INCONSISTENT_GROUP_PROTOCOL",
           "MOCK_API_VERSIONS_MAX", "MOCK_DEFECTS", "MOCK_PARSES", "SYNC_ORDER_GAP",
           "UNSUPPORTED_VERSION", "MockBackend", "empty_assignment"]

#: the mock's defects that a wire run must work around, each with what the mock does wrong
MOCK_DEFECTS = {
    "sync-order": (
        "a follower's SyncGroup that reaches the mock after the leader's is refused: once "
        "the leader's assignment is in, the mock answers the members waiting and moves the "
        "group to Up, where it answers a late SyncGroup with INVALID_REQUEST (a real "
        "coordinator answers it with the member's assignment). Handled by holding the "
        "leader's SyncGroup in the proxy until every other member of the generation has sent "
        "its own (bounded by twice the session timeout)."),
    "api-versions": (
        "an ApiVersions request of a version the mock lacks (above v2) is answered in a "
        "layout no client reads (kafka-python 3: 'Unable to decode response', and it never "
        "bootstraps); a real broker answers UNSUPPORTED_VERSION in the v0 layout with the "
        "versions it has, and the client retries. Handled by the proxy giving that answer."),
    "flexible-versions": (
        "the mock advertises flexible versions of the group APIs that it misparses (a "
        "JoinGroup v6 is dropped with a parse error, so the client reconnects and rejoins "
        "forever) or answers without a field (LeaveGroup v3). Handled by the proxy capping "
        "the ranges the mock's ApiVersions answer advertises to the versions it parses: "
        "JoinGroup 5, SyncGroup 3, Heartbeat 3, LeaveGroup 2; the client then uses those."),
    "sync-error-null": (
        "every SyncGroup the mock refuses (REBALANCE_IN_PROGRESS while a new round joins, "
        "ILLEGAL_GENERATION, the INVALID_REQUEST of sync-order) is answered with a null "
        "assignment, a field no version allows to be null; Kafka's Java client rejects the "
        "whole answer ('non-nullable field assignment was serialized as null') and never "
        "sees the error code. A broker writes an empty assignment. Handled by the proxy "
        "writing the empty assignment in place of the null, the one thing it changes."),
    "protocol-vote": (
        "the mock takes the leader's first protocol for the group and never checks that the "
        "others share it; when a member that does not is in the leader's member list, an "
        "assertion in the mock aborts the process that hosts it (groupcheck's own). Kafka's "
        "coordinator refuses such a JoinGroup with INCONSISTENT_GROUP_PROTOCOL. Handled for "
        "every group, whatever its clients: the proxy gives that answer to a JoinGroup whose "
        "protocols share no name with the group's members' (KafkaJS's round robin joins as "
        "RoundRobinAssigner, Kafka's clients as roundrobin)."),
}
#: handled in every group on the mock (a guard for the process, not a client's need)
ALWAYS = ("protocol-vote",)
#: which clients run into which defect on the mock (found by running them)
DEFECTS_BY_CLIENT: dict[str, tuple[str, ...]] = {
    "aiokafka": ("sync-order",),
    "kafka-python": ("api-versions", "flexible-versions", "sync-order"),
    "java": ("api-versions", "flexible-versions", "sync-order", "sync-error-null"),
}
#: the highest version of each group API that the mock parses and answers correctly
MOCK_PARSES = {11: 5, 14: 3, 12: 3, 13: 2}
#: the highest ApiVersions version librdkafka's mock (2.16) answers
MOCK_API_VERSIONS_MAX = 2
API_VERSIONS = 18
UNSUPPORTED_VERSION = 35
INCONSISTENT_GROUP_PROTOCOL = 23
#: after the last follower's SyncGroup went up, the leader's waits this long, so that the
#: mock's single thread reads the follower's first
SYNC_ORDER_GAP = 0.02


class MockBackend:
    """A fresh mock cluster and its proxy for one group."""

    name = "mock"
    aims_errors_at_members = False
    fences_static_members = False  # the mock keeps both consumers of one instance id
    keeps_commits = False  # its proxy logs no OffsetCommit

    def __init__(self, clients: frozenset[str], session_timeout_ms: int,
                 trace: bool = False) -> None:
        try:
            self.cluster = MockCluster()
        except MockUnavailable as exc:
            raise BackendUnavailable(str(exc)) from None
        host, _, port = self.cluster.bootstraps.split(",")[0].rpartition(":")
        self.defects = sorted({d for c in clients for d in DEFECTS_BY_CLIENT.get(c, ())}
                              | set(ALWAYS))
        self._protocols: dict[str, set[str]] = {}  # client id → protocols it joined with
        self._unplaced: set[str] = set()  # client ids that joined but are in no round yet
        self.refused: list[str] = []  # JoinGroups answered INCONSISTENT_GROUP_PROTOCOL
        self.hold_limit = 2 * session_timeout_ms / 1000.0  # a loaded machine is slow to sync
        self.proxy = Proxy((host, int(port)),
                           hold=self._hold if "sync-order" in self.defects else None,
                           answer=self._answer,
                           rewrite=self._rewrite if {"flexible-versions", "sync-error-null"}
                           & set(self.defects) else None, trace=trace)
        self.cluster.advertise("127.0.0.1", self.proxy.port)
        self.bootstrap = f"127.0.0.1:{self.proxy.port}"
        self.topics = self.cluster.topics
        self._held: list[str] = []
        self._lock = threading.Lock()

    # --- topics and errors --------------------------------------------------------------

    def create_topic(self, topic: str, partitions: int) -> None:
        self.cluster.create_topic(topic, partitions)

    def grow_topic(self, topic: str, partitions: int) -> None:
        raise ValueError(f"mock: the mock cluster cannot grow topic {topic}")

    def delete_topic(self, topic: str) -> None:
        self.cluster.delete_topic(topic)

    def inject_error(self, api: str, error: str, member: str | None = None) -> None:
        """The group's next ``api`` request fails with ``error``, whoever sends it."""
        self.cluster.push_errors(api, [error])

    def delay_answer(self, api: str, seconds: float, member: str | None = None) -> None:
        """The group's next ``api`` answer goes out ``seconds`` late, whoever asked."""
        self.cluster.push_delay(api, int(seconds * 1000))

    def close_before_answer(self, api: str, member: str) -> None:
        raise ValueError("mock: the mock cannot close a member's connection before its "
                         "answer; run on --broker groupcheck")

    def move_coordinator(self, api: str, member: str) -> None:
        raise ValueError("mock: the mock cannot move the group's coordinator; run on "
                         "--broker groupcheck")

    def order_sync_answers(self, member: str, leader_first: bool, members: list[str]) -> None:
        raise ValueError("mock: the mock cannot order SyncGroup answers (the leader's "
                         "SyncGroup is held until the followers sent theirs: its sync-order "
                         "defect); run on --broker groupcheck")

    # --- the group as the coordinator ran it ----------------------------------------------

    def rounds(self) -> list[GroupRound]:
        ledger = self.proxy.ledger
        with ledger.cond:
            return [GroupRound(r.generation, r.protocol, r.leader, dict(r.members),
                               dict(r.assignments),
                               {m: ledger.names.get(m, "") for m in r.members}, r.complete,
                               r.leader_sync_ns, frozenset(r.synced))
                    for _, r in sorted(ledger.rounds.items())]

    def joining(self) -> int:
        return self.proxy.ledger.joins_in_flight()

    def problems(self) -> list[str]:
        with self.proxy.ledger.cond:
            return list(self.proxy.ledger.errors)

    def silent(self, quiet_ms: int) -> dict[str, int]:
        """Members silent since their SyncGroup answer, as the proxy saw them."""
        return self.proxy.ledger.silent(quiet_ms)

    def last_joins(self) -> dict[str, LastJoin]:
        """The mock keeps no log of answers: a refused member is waited for."""
        return {}

    def told(self) -> list[tuple[str, str, int]]:
        """The mock does not say whom its pushed errors reached."""
        return []

    def rejoins(self) -> list[tuple[ErrorResponse, NextJoin]]:
        """The mock keeps no exchange log to judge I16 on."""
        return []

    def commits(self) -> list[CommitAnswer]:
        """None: the proxy keeps no OffsetCommit log (the members' own events still tell)."""
        return []

    def log_ends(self, topics: Collection[str] | None = None
                 ) -> dict[tuple[str, int], tuple[int, int]]:
        """None known: the mock does not say (the wire group counts what it produced)."""
        return {}

    def forget(self, member: str) -> None:
        """Nothing here aims at a member: what was pushed is the group's next request's."""

    def failure(self) -> ThreadFailure | None:
        """The first failure of the proxy's threads, or None."""
        return self.proxy.failures.first

    # --- the mock's defects ---------------------------------------------------------------

    def _hold(self, request: Request) -> None:
        """``sync-order``: the leader's SyncGroup waits until every other member of its
        generation has sent its own."""
        body = request.body
        if request.api_key != SYNC_GROUP or body is None or not body.assignments:
            return
        ledger, generation = self.proxy.ledger, int(body.generation_id)

        def followers_sent() -> bool:
            round_ = ledger.rounds.get(generation)
            return round_ is None or set(round_.members) - {round_.leader} <= round_.sync_sent

        with ledger.cond:
            waited = not followers_sent()
            ledger.cond.wait_for(followers_sent, self.hold_limit)
        if waited:
            time.sleep(SYNC_ORDER_GAP)
            with self._lock:
                self._held.append(f"generation {generation}")

    def _answer(self, request: Request, correlation_id: int) -> bytes | None:
        """``protocol-vote`` and ``api-versions``: answer a JoinGroup the mock cannot take,
        or an ApiVersions it lacks, as a broker does."""
        if request.api_key == JOIN_GROUP and request.body is not None:
            return self._vote(request, correlation_id)
        if request.api_key != API_VERSIONS or request.version <= MOCK_API_VERSIONS_MAX \
                or "api-versions" not in self.defects:
            return None
        from kafka.protocol.metadata import ApiVersionsResponse

        response = ApiVersionsResponse(
            error_code=UNSUPPORTED_VERSION, version=0, api_keys=[ApiVersionsResponse.ApiVersion(
                api_key=API_VERSIONS, min_version=0, max_version=MOCK_API_VERSIONS_MAX)])
        response.with_header(correlation_id=correlation_id)
        return bytes(response.encode(header=True))

    def _vote(self, request: Request, correlation_id: int) -> bytes | None:
        """``protocol-vote``: refuse a join that shares no protocol with the group."""
        offered = {str(p.name) for p in request.body.protocols or ()}
        ledger = self.proxy.ledger
        with ledger.cond:
            rounds = [r for _, r in sorted(ledger.rounds.items())]
            placed = {ledger.names.get(m, "") for r in rounds for m in r.members}
            self._unplaced -= placed
            latest = {ledger.names.get(m, "") for m in rounds[-1].members} if rounds else set()
            others = [self._protocols[c] for c in (latest | self._unplaced) - {request.client_id}
                      if c in self._protocols]
            if not others or offered.intersection(*others):
                self._protocols[request.client_id] = offered
                self._unplaced.add(request.client_id)
                return None
            ledger.joining[request.client_id] = max(
                0, ledger.joining.get(request.client_id, 1) - 1)
            ledger.cond.notify_all()
        self.refused.append(f"{request.client_id}: {sorted(offered)}")
        from kafka.protocol.consumer.group import JoinGroupResponse

        answer = JoinGroupResponse(
            version=request.version, throttle_time_ms=0, error_code=INCONSISTENT_GROUP_PROTOCOL,
            generation_id=-1, protocol_name="", leader="",
            member_id=str(request.body.member_id or ""), members=[])
        answer.with_header(correlation_id=correlation_id)
        return bytes(answer.encode(header=True))

    def _rewrite(self, request: Request, frame: bytes) -> bytes:
        if request.api_key == API_VERSIONS and "flexible-versions" in self.defects:
            return self._cap(request, frame)
        if request.api_key == SYNC_GROUP and "sync-error-null" in self.defects:
            return empty_assignment(request.version, frame)
        return frame

    def _cap(self, request: Request, frame: bytes) -> bytes:
        """``flexible-versions``: advertise only the group API versions the mock parses."""
        if request.api_key != API_VERSIONS:
            return frame
        from kafka.protocol.metadata import ApiVersionsResponse

        response = ApiVersionsResponse.decode(frame, version=request.version, header=True)
        for api in response.api_keys or ():
            if int(api.api_key) in MOCK_PARSES:
                api.max_version = min(int(api.max_version), MOCK_PARSES[int(api.api_key)])
        return bytes(response.encode(header=True))

    @property
    def held(self) -> list[str]:
        """Generations whose leader SyncGroup the sync-order handling held back."""
        with self._lock:
            return list(self._held)

    def close(self) -> None:
        self.proxy.close()
        self.cluster.close()


def empty_assignment(version: int, frame: bytes) -> bytes:
    """``sync-error-null``: a SyncGroup answer (header included) with an error and the
    mock's null assignment, with an empty assignment instead; any other frame as it is."""
    from kafka.protocol.consumer.group import SyncGroupResponse

    null = b"\xff\xff\xff\xff"
    if version > MOCK_PARSES[SYNC_GROUP] or not frame.endswith(null):
        return frame
    answer = SyncGroupResponse.decode(frame, version=version, header=True)
    if int(answer.error_code) == 0 or answer.assignment is not None:
        return frame
    answer.assignment = b""
    return bytes(answer.encode(header=True))
