"""A group member's state and the requests it sends, under `consumer_membership.Membership`
(which moves the state on responses and on time).

What lives here: the member's generation, member id and protocol, the requests in flight
(each remembers the generation and member id it was sent with, and its deadline), the
read-only view `consumer.Consumer` offers, JoinGroup (KIP-70: rejoin while the subscription
differs; the leader rejoins when the metadata it assigned changed), SyncGroup, LeaveGroup
(KIP-345: only dynamic members send it), and the resets and failures that responses cause.
The state only changes through `consumer_state.transition`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .consumer_fetch import SubscriptionState
from .consumer_leader import MetadataSnapshot, choose_protocol, join_protocols, metadata_snapshot
from .consumer_listener import ConsumerConfigError, ConsumerError
from .consumer_state import Event, MemberState, transition
from .group_messages import (
    NO_GENERATION,
    UNKNOWN_MEMBER_ID,
    Envelope,
    Errors,
    JoinGroupRequest,
    LeaveGroupRequest,
    Request,
    SyncGroupRequest,
)
from .types import Assignor, Cluster, RebalanceProtocol

__all__ = ["JOIN_GROUP_TIMEOUT_LAPSE_MS", "MemberRequests", "SentRequest"]

JOIN_GROUP_TIMEOUT_LAPSE_MS = 5_000   # JoinGroup may wait the rebalance timeout, plus this


@dataclass(frozen=True)
class SentRequest:
    """A request in flight: what it was, with which generation, and until when."""

    request: Request
    generation: int
    member_id: str
    deadline_ms: int


class MemberRequests:
    """A member's state, its read-only view and the requests it sends (see the module
    docstring); `consumer_membership.Membership` adds the responses."""

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
        self._inflight: dict[int, SentRequest] = {}
        self._cancelled: set[int] = set()
        self._next_request_id = 0
        self._now = 0
        self._last_poll_ms: int | None = None
        self._last_heartbeat_ms = 0
        self._join_not_before_ms = 0  # a refused join is sent again no sooner (`RETRY_BACKOFF_MS`)

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

    # -- requests -----------------------------------------------------------------------

    def _send(self, request: Request) -> None:
        self._next_request_id += 1
        timeout = self.request_timeout_ms
        if isinstance(request, JoinGroupRequest):
            timeout = max(timeout, self.rebalance_timeout_ms + JOIN_GROUP_TIMEOUT_LAPSE_MS)
        self._inflight[self._next_request_id] = SentRequest(request, self._generation,
                                                      self._member_id, self._now + timeout)
        self._outbox.append(Envelope(self.client_id, self._next_request_id, request))

    def _rebalance_in_flight(self) -> bool:
        return any(isinstance(s.request, (JoinGroupRequest, SyncGroupRequest))
                   for s in self._inflight.values())

    def _should_join(self) -> bool:
        """Kafka's ``rejoinNeededOrPending``, for a member free to send JoinGroup now."""
        if not self._subs.subscription or self._rebalance_in_flight() or \
                self._now < self._join_not_before_ms:
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

    def _unchanged(self, sent: SentRequest) -> bool:
        return (sent.generation, sent.member_id) == (self._generation, self._member_id)
