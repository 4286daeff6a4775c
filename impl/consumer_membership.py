"""The membership protocol under `consumer.Consumer`: states, their table, the wire.

What lives here: Kafka's AbstractCoordinator without threads or sockets — the member states
and the table of their transitions, the requests a member sends (JoinGroup, SyncGroup,
Heartbeat, LeaveGroup), how each response and error moves the state (spec §4 "Errors"),
the leader's SyncGroup, the heartbeat and poll timers, and request timeouts. What does not:
anything that calls the user (`consumer`).

Theory of operation. The state only changes through `consumer_state.transition`. Each
request in flight
remembers the (generation, member id) it was sent with: an error that would reset them is
ignored once they have changed (``generationUnchanged``). A JoinGroup or SyncGroup response
that finds the member no longer in the state that sent it is stale and dropped, as are
responses to requests cancelled by a leave or timed out. A request gets no answer after its
timeout (a dropped message): it then fails as a disconnect would, and is retried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .consumer_fetch import SubscriptionState
from .consumer_leader import (
    MetadataSnapshot,
    choose_protocol,
    join_protocols,
    metadata_snapshot,
    perform_assignment,
)
from .consumer_listener import ConsumerConfigError, ConsumerError, ConsumerStateError
from .consumer_protocol import decode_assignment
from .consumer_state import Event, MemberState, transition
from .errors import CodecError
from .group_messages import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    Envelope,
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    Request,
    SyncGroupRequest,
    SyncGroupResponse,
)
from .types import Assignment, Assignor, Cluster, RebalanceProtocol

JOIN_GROUP_TIMEOUT_LAPSE_MS = 5_000   # JoinGroup may wait the rebalance timeout, plus this

_FATAL_KAFKA_CLASS = {
    Errors.INCONSISTENT_GROUP_PROTOCOL: "InconsistentGroupProtocolException",
    Errors.INVALID_SESSION_TIMEOUT: "InvalidSessionTimeoutException",
    Errors.GROUP_MAX_SIZE_REACHED: "GroupMaxSizeReachedException",
    Errors.FENCED_INSTANCE_ID: "FencedInstanceIdException",
}
_RETRIABLE = (Errors.REBALANCE_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE)
_RESETTING = (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID)
_RESPONSE_TO = {JoinGroupRequest: JoinGroupResponse, SyncGroupRequest: SyncGroupResponse,
                HeartbeatRequest: HeartbeatResponse, LeaveGroupRequest: LeaveGroupResponse}


@dataclass(frozen=True)
class _Sent:
    """A request in flight: what it was, with which generation, and until when."""

    request: Request
    generation: int
    member_id: str
    deadline_ms: int


class Membership:
    """Group membership state and wire protocol; `consumer.Consumer` adds the client."""

    def __init__(self, client_id: str, assignors: Sequence[Assignor], *,
                 group_instance_id: str | None, rack: str | None, session_timeout_ms: int,
                 rebalance_timeout_ms: int, heartbeat_interval_ms: int,
                 max_poll_interval_ms: int, request_timeout_ms: int,
                 subscription_version: int, cluster: Cluster | None) -> None:
        if heartbeat_interval_ms >= session_timeout_ms:
            raise ConsumerConfigError("heartbeat_interval_ms must be below session_timeout_ms")
        if subscription_version < 0:
            raise ConsumerConfigError(f"invalid subscription version {subscription_version}")
        self.client_id = client_id
        self._protocol = choose_protocol(assignors)
        self._assignors: dict[str, Assignor] = {a.name: a for a in assignors}
        self.group_instance_id = group_instance_id
        self.rack = rack
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.max_poll_interval_ms = max_poll_interval_ms
        self.request_timeout_ms = request_timeout_ms
        self.subscription_version = subscription_version
        self.cluster = cluster if cluster is not None else Cluster({})
        self._subs = SubscriptionState()
        self._state = MemberState.UNJOINED
        self._generation = NO_GENERATION
        self._member_id = UNKNOWN_MEMBER_ID
        self._protocol_name: str | None = None
        self._is_leader = False
        self._rejoin_needed = True
        self._needs_join_prepare = True
        self._joined_subscription: frozenset[str] | None = None
        self._assignment_snapshot: MetadataSnapshot | None = None
        self._group_topics: frozenset[str] = frozenset()
        self._pending_assignment: bytes | None = None
        self._pending_error: Exception | None = None
        self._fatal: ConsumerError | None = None
        self._outbox: list[Envelope] = []
        self._inflight: dict[int, _Sent] = {}
        self._cancelled: set[int] = set()
        self._next_request_id = 0
        self._now = 0
        self._last_poll_ms: int | None = None
        self._last_heartbeat_ms = 0

    # -- the state table ----------------------------------------------------------------

    def _fire(self, event: Event) -> None:
        self._state = transition(self._state, event)

    def _tick(self, now_ms: int) -> None:
        """The logical clock never goes back; an earlier ``now_ms`` counts as the latest."""
        self._now = max(self._now, now_ms)

    # -- read-only view -----------------------------------------------------------------

    @property
    def state(self) -> MemberState:
        return self._state

    @property
    def member_id(self) -> str:
        return self._member_id

    @property
    def generation(self) -> int:
        return self._generation

    @property
    def protocol(self) -> RebalanceProtocol:
        """The protocol this member runs (KIP-429: the highest all its assignors support)."""
        return self._protocol

    @property
    def protocol_name(self) -> str | None:
        """The assignor the coordinator selected in the current generation."""
        return self._protocol_name

    @property
    def is_leader(self) -> bool:
        return self._is_leader

    @property
    def joined_subscription(self) -> frozenset[str] | None:
        """The topics of the last JoinGroup (KIP-70: rejoin while it differs)."""
        return self._joined_subscription

    @property
    def rebalance_in_progress(self) -> bool:
        return self._state in (MemberState.PREPARING_REBALANCE,
                               MemberState.COMPLETING_REBALANCE)

    @property
    def fatal_error(self) -> ConsumerError | None:
        return self._fatal

    # -- sans-I/O plumbing --------------------------------------------------------------

    def outbox(self) -> list[Envelope]:
        """Requests to send, oldest first; each is returned once."""
        out, self._outbox = self._outbox, []
        return out

    @property
    def in_flight(self) -> tuple[Request, ...]:
        return tuple(sent.request for sent in self._inflight.values())

    def receive(self, envelope: Envelope, now_ms: int) -> None:
        """A response from the coordinator. Never calls the listener."""
        self._tick(now_ms)
        if envelope.client != self.client_id:
            raise ConsumerStateError(
                f"can't handle a response for client {envelope.client!r} in {self.client_id!r}")
        sent = self._inflight.pop(envelope.request_id, None)
        if sent is None:
            if envelope.request_id in self._cancelled:
                self._cancelled.discard(envelope.request_id)
                return
            raise ConsumerStateError(
                f"can't handle {type(envelope.message).__name__} to unknown request "
                f"{envelope.request_id} in state {self._state.name}")
        expected = _RESPONSE_TO[type(sent.request)]
        message = envelope.message
        if not isinstance(message, expected):
            raise ConsumerStateError(
                f"can't handle {type(message).__name__} answering "
                f"{type(sent.request).__name__} in state {self._state.name}")
        if self._state in (MemberState.CLOSED, MemberState.FATAL):
            return
        if isinstance(message, JoinGroupResponse):
            self._on_join_response(message, sent)
        elif isinstance(message, SyncGroupResponse):
            self._on_sync_response(message, sent)
        elif isinstance(message, HeartbeatResponse):
            self._on_heartbeat_response(message, sent)
        # a LeaveGroup response changes nothing: the member has already reset

    def advance(self, now_ms: int) -> None:
        """The heartbeat thread: request timeouts, the poll timeout, heartbeats."""
        if self._state is MemberState.CLOSED:
            return
        self._tick(now_ms)
        for request_id, sent in list(self._inflight.items()):
            if self._now >= sent.deadline_ms:
                del self._inflight[request_id]
                self._cancelled.add(request_id)
                self._on_request_timeout(sent)
        if self._state not in (MemberState.COMPLETING_REBALANCE, MemberState.STABLE):
            return
        if (self._last_poll_ms is not None
                and self._now - self._last_poll_ms > self.max_poll_interval_ms):
            self._send_leave_group("consumer poll timeout has expired.")
            self._reset_generation(keep_member_id=False)
            return
        heartbeating = any(isinstance(s.request, HeartbeatRequest)
                           for s in self._inflight.values())
        if not heartbeating and self._now - self._last_heartbeat_ms >= self.heartbeat_interval_ms:
            self._last_heartbeat_ms = self._now
            self._send(HeartbeatRequest(self._member_id, self._generation,
                                        self.group_instance_id))

    # -- requests -----------------------------------------------------------------------

    def _send(self, request: Request) -> None:
        self._next_request_id += 1
        timeout = self.request_timeout_ms
        if isinstance(request, JoinGroupRequest):
            timeout = max(timeout, self.rebalance_timeout_ms + JOIN_GROUP_TIMEOUT_LAPSE_MS)
        self._inflight[self._next_request_id] = _Sent(request, self._generation,
                                                      self._member_id, self._now + timeout)
        self._outbox.append(Envelope(self.client_id, self._next_request_id, request))

    def _rebalance_in_flight(self) -> bool:
        return any(isinstance(s.request, (JoinGroupRequest, SyncGroupRequest))
                   for s in self._inflight.values())

    def _should_join(self) -> bool:
        """Kafka's ``rejoinNeededOrPending``, for a member free to send JoinGroup now."""
        if not self._subs.subscription or self._rebalance_in_flight():
            return False
        if self._state is MemberState.PREPARING_REBALANCE:
            return True
        if self._state not in (MemberState.UNJOINED, MemberState.STABLE):
            return False
        if self._is_leader and self._assignment_snapshot is not None:
            now = metadata_snapshot(self.cluster, self._group_topics, self.rack is not None)
            if now != self._assignment_snapshot:
                self._rejoin_needed = True
        if self._joined_subscription != self._subs.subscription:
            self._rejoin_needed = True
        return self._rejoin_needed

    def _send_join(self) -> None:
        self._joined_subscription = self._subs.subscription
        protocols = join_protocols(
            list(self._assignors.values()), topics=self._subs.subscription,
            owned=self._subs.assigned, generation=self._generation, rack=self.rack,
            version=self.subscription_version)
        self._fire(Event.SEND_JOIN)
        self._send(JoinGroupRequest(self._member_id, protocols, self.group_instance_id,
                                    self.session_timeout_ms, self.rebalance_timeout_ms,
                                    client_id=self.client_id))

    def _send_sync(self, assignments: tuple[tuple[str, bytes], ...]) -> None:
        self._send(SyncGroupRequest(self._member_id, self._generation, self.group_instance_id,
                                    self._protocol_name, assignments))

    def _send_leave_group(self, reason: str) -> None:
        """Only dynamic members that are in a group send LeaveGroup (KIP-345)."""
        if (self.group_instance_id is None and self._state is not MemberState.UNJOINED
                and self._member_id != UNKNOWN_MEMBER_ID):
            self._send(LeaveGroupRequest(((self._member_id, None),), reason))

    def _cancel_inflight(self) -> None:
        self._cancelled.update(self._inflight)
        self._inflight.clear()

    # -- state changes ------------------------------------------------------------------

    def _reset_generation(self, *, keep_member_id: bool) -> None:
        """Generation := -1 (member id kept on ILLEGAL_GENERATION, KAFKA-13419); rejoin, and
        run onJoinPrepare again so the next join reports the partitions lost (KAFKA-12983)."""
        self._generation = NO_GENERATION
        if not keep_member_id:
            self._member_id = UNKNOWN_MEMBER_ID
        self._protocol_name = None
        self._rejoin_needed = True
        self._needs_join_prepare = True
        self._pending_assignment = None
        if self._state not in (MemberState.FATAL, MemberState.CLOSED):
            self._fire(Event.RESET)

    def _fail(self, message: str, error: Errors | None = None,
              kafka_class: str = "KafkaException") -> None:
        self._fatal = ConsumerError(message, kafka_class=kafka_class, error=error)
        self._pending_assignment = None
        self._fire(Event.FAIL)

    def _fail_on(self, error: Errors, api: str) -> None:
        self._fail(f"{api} failed: {error.name}", error, _FATAL_KAFKA_CLASS[error])

    def _unchanged(self, sent: _Sent) -> bool:
        return (sent.generation, sent.member_id) == (self._generation, self._member_id)

    # -- responses ----------------------------------------------------------------------

    def _on_join_response(self, r: JoinGroupResponse, sent: _Sent) -> None:
        if self._state is not MemberState.PREPARING_REBALANCE:
            return  # Kafka: UnjoinedGroupException, the member left or was reset meanwhile
        e = r.error
        if e is Errors.NONE:
            if r.protocol_name not in self._assignors:
                self._fail(f"Coordinator selected invalid assignment protocol: "
                           f"{r.protocol_name}", kafka_class="IllegalStateException")
                return
            self._generation, self._member_id = r.generation_id, r.member_id
            self._protocol_name = r.protocol_name
            self._fire(Event.JOIN_OK)
            self._last_heartbeat_ms = self._now
            self._is_leader = r.leader == r.member_id
            if self._is_leader:
                self._on_leader_elected(r)
            else:
                self._send_sync(())
        elif e is Errors.MEMBER_ID_REQUIRED:
            self._generation, self._member_id = NO_GENERATION, r.member_id
            self._protocol_name = None
            self._fire(Event.JOIN_RETRY)
        elif e is Errors.UNKNOWN_MEMBER_ID and self._unchanged(sent):
            self._reset_generation(keep_member_id=False)
        elif e in _FATAL_KAFKA_CLASS:
            self._fail_on(e, "JoinGroup")
        else:
            if e not in _RETRIABLE and e is not Errors.UNKNOWN_MEMBER_ID:
                self._pending_error = ConsumerError(
                    f"Unexpected error in join group response: {e.name}", error=e)
            self._fire(Event.JOIN_RETRY)

    def _on_leader_elected(self, r: JoinGroupResponse) -> None:
        if r.skip_assignment:  # KIP-814: a static leader rejoining with nothing to change
            self._send_sync(())
            return
        assignor = self._assignors[r.protocol_name or ""]
        try:
            result = perform_assignment(assignor, self._protocol, r.members, self.cluster,
                                        self.subscription_version)
        except Exception as exc:  # noqa: BLE001 - Kafka throws it from poll, then rejoins
            self._pending_error = exc
            self._rejoin_needed = True
            self._fire(Event.SYNC_RETRY)
            return
        self._group_topics = result.group_topics
        self._assignment_snapshot = metadata_snapshot(self.cluster, result.group_topics,
                                                      self.rack is not None)
        self._send_sync(result.assignments)

    def _on_sync_response(self, r: SyncGroupResponse, sent: _Sent) -> None:
        if self._state is not MemberState.COMPLETING_REBALANCE:
            return
        e = r.error
        if e is Errors.NONE:
            if r.protocol_name is not None and r.protocol_name != self._protocol_name:
                self._fail_on(Errors.INCONSISTENT_GROUP_PROTOCOL, "SyncGroup")
                return
            self._fire(Event.SYNC_OK)
            self._rejoin_needed = False
            self._last_heartbeat_ms = self._now
            self._pending_assignment = r.assignment
        elif e is Errors.FENCED_INSTANCE_ID:
            self._fail_on(e, "SyncGroup")
        elif e in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID) and self._unchanged(sent):
            self._reset_generation(keep_member_id=e is Errors.ILLEGAL_GENERATION)
        else:
            if e not in _RETRIABLE and e not in _RESETTING:
                self._pending_error = ConsumerError(
                    f"Unexpected error from SyncGroup: {e.name}", error=e)
            self._fire(Event.SYNC_RETRY)

    def _on_heartbeat_response(self, r: HeartbeatResponse, sent: _Sent) -> None:
        e = r.error
        if e is Errors.REBALANCE_IN_PROGRESS:
            if self._state is MemberState.STABLE:
                self._rejoin_needed = True  # generation and partitions kept
        elif e in _RESETTING and self._unchanged(sent):
            self._reset_generation(keep_member_id=e is Errors.ILLEGAL_GENERATION)
            if e is Errors.FENCED_INSTANCE_ID:
                self._fail_on(e, "Heartbeat")

    def _on_request_timeout(self, sent: _Sent) -> None:
        """No answer in time: a disconnect; the rebalance is retried, a heartbeat resent."""
        if isinstance(sent.request, JoinGroupRequest):
            if self._state is MemberState.PREPARING_REBALANCE:
                self._fire(Event.JOIN_RETRY)
        elif isinstance(sent.request, SyncGroupRequest):
            if self._state is MemberState.COMPLETING_REBALANCE:
                self._fire(Event.SYNC_RETRY)

    def _decode_assignment(self, data: bytes) -> Assignment | None:
        """The member's assignment, or ``None`` (error kept for poll, rejoin requested)."""
        try:
            if len(data) < 2:
                raise ConsumerStateError(
                    f"assignment of {len(data)} bytes: the leader gave this member nothing")
            return decode_assignment(data).to_api()
        except (CodecError, ConsumerStateError) as exc:
            self._pending_error = exc
            self._rejoin_needed = True
            return None
