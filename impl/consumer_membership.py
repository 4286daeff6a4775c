"""The membership protocol under `consumer.Consumer`: how responses, errors and time move a
member's state.

What lives here: Kafka's AbstractCoordinator without threads or sockets — how each response
and error moves the state, the leader's SyncGroup, the heartbeat and poll timers, and
request timeouts. The member's state and the requests it sends (JoinGroup, SyncGroup,
Heartbeat, LeaveGroup) are in `consumer_requests`, the table of state transitions in
`consumer_state`. What does not: anything that calls the user (`consumer`).

Errors, as Kafka's ConsumerCoordinator handles them: a heartbeat's REBALANCE_IN_PROGRESS
while Stable rejoins, keeping the generation and partitions; ILLEGAL_GENERATION (heartbeat
or SyncGroup) resets the generation to -1 and keeps the member id (KAFKA-13419);
UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID reset both; JoinGroup's MEMBER_ID_REQUIRED adopts
the given id and rejoins; REBALANCE_IN_PROGRESS on JoinGroup or SyncGroup, and
UNKNOWN_MEMBER_ID on JoinGroup, retry; INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT and
GROUP_MAX_SIZE_REACHED on JoinGroup or SyncGroup are raised from the poll and the next poll
joins again (AbstractCoordinator's joinGroupIfNeeded rethrows them with the rejoin still
needed: a refused member gets in once the group can take it); FENCED_INSTANCE_ID is fatal
(KIP-345: another consumer holds the instance id).

Theory of operation. The state only changes through `consumer_state.transition`. Each
request in flight remembers the (generation, member id) it was sent with: an error that
would reset them is ignored once they have changed (``generationUnchanged``). A JoinGroup or
SyncGroup response that finds the member no longer in the state that sent it is stale and
dropped, as are responses to requests cancelled by a leave or timed out. A request gets no
answer after its timeout (a dropped message): it then fails as a disconnect would, and is
retried.
"""

from __future__ import annotations

from .consumer_leader import metadata_snapshot, perform_assignment
from .consumer_listener import ConsumerError, ConsumerStateError
from .consumer_protocol import decode_assignment
from .consumer_requests import MemberRequests, SentRequest
from .consumer_state import Event, MemberState
from .errors import CodecError
from .group_messages import (
    NO_GENERATION,
    Envelope,
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from .types import Assignment

__all__ = ["RETRY_BACKOFF_MS", "Membership"]

#: Kafka's ``retry.backoff.ms`` default (ms)
RETRY_BACKOFF_MS = 100
#: the exception Kafka's consumer raises for each refusal of a join (FENCED_INSTANCE_ID: fatal)
_KAFKA_CLASS = {
    Errors.INCONSISTENT_GROUP_PROTOCOL: "InconsistentGroupProtocolException",
    Errors.INVALID_SESSION_TIMEOUT: "InvalidSessionTimeoutException",
    Errors.GROUP_MAX_SIZE_REACHED: "GroupMaxSizeReachedException",
    Errors.FENCED_INSTANCE_ID: "FencedInstanceIdException",
}
_RETRIABLE = (Errors.REBALANCE_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE)
_RESETTING = (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID)
_RESPONSE_TO = {JoinGroupRequest: JoinGroupResponse, SyncGroupRequest: SyncGroupResponse,
                HeartbeatRequest: HeartbeatResponse, LeaveGroupRequest: LeaveGroupResponse}


class Membership(MemberRequests):
    """Group membership: a member's state and requests (`MemberRequests`) moved by responses,
    timeouts and heartbeats; `consumer.Consumer` adds the client."""

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

    def _fail_on(self, error: Errors, api: str) -> None:
        self._fail(f"{api} failed: {error.name}", error, _KAFKA_CLASS[error])

    def _refused(self, error: Errors, api: str) -> None:
        """A refusal raised from the next poll; the member joins again after it, no sooner
        than ``retry.backoff.ms`` on (a real client's next JoinGroup is a round trip away at
        least; the logical clock has none, and a group that keeps refusing would hold it)."""
        self._pending_error = ConsumerError(f"{api} failed: {error.name}", error=error,
                                            kafka_class=_KAFKA_CLASS[error])
        self._join_not_before_ms = self._now + RETRY_BACKOFF_MS
        self._fire(Event.JOIN_RETRY if api == "JoinGroup" else Event.SYNC_RETRY)

    # -- responses ----------------------------------------------------------------------

    def _on_join_response(self, r: JoinGroupResponse, sent: SentRequest) -> None:
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
        elif e is Errors.FENCED_INSTANCE_ID:
            self._fail_on(e, "JoinGroup")
        elif e in _KAFKA_CLASS:
            self._refused(e, "JoinGroup")
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

    def _on_sync_response(self, r: SyncGroupResponse, sent: SentRequest) -> None:
        if self._state is not MemberState.COMPLETING_REBALANCE:
            return
        e = r.error
        if e is Errors.NONE:
            if r.protocol_name is not None and r.protocol_name != self._protocol_name:
                self._refused(Errors.INCONSISTENT_GROUP_PROTOCOL, "SyncGroup")
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

    def _on_heartbeat_response(self, r: HeartbeatResponse, sent: SentRequest) -> None:
        e = r.error
        if e is Errors.REBALANCE_IN_PROGRESS:
            if self._state is MemberState.STABLE:
                self._rejoin_needed = True  # generation and partitions kept
        elif e in _RESETTING and self._unchanged(sent):
            self._reset_generation(keep_member_id=e is Errors.ILLEGAL_GENERATION)
            if e is Errors.FENCED_INSTANCE_ID:
                self._fail_on(e, "Heartbeat")

    def _on_request_timeout(self, sent: SentRequest) -> None:
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
