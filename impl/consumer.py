"""One consumer's group membership (Kafka's ConsumerCoordinator), as a sans-I/O state machine.

What lives here: the `Consumer` — KafkaConsumer's API (subscribe, unsubscribe, pause, resume,
poll, commit, close) and the client semantics of a rebalance as Kafka's ConsumerCoordinator
runs them: onJoinPrepare, onJoinComplete, onLeavePrepare, KIP-70 subscription changes. What
does not: the member states and their table (`consumer_state`), the wire
(`consumer_requests`, `consumer_membership`), calling the listener (`consumer_listener`),
partition state and records (`consumer_fetch`), JoinGroup metadata and the leader's work
(`consumer_leader`).

Theory of operation. The caller owns the network and the clock; time is ``now_ms``, given to
every entry point. Three entry points stand for Kafka's two threads and its network:

- ``poll(now_ms)`` is the user's thread. It applies an assignment received since the last
  poll (onJoinComplete), starts a rebalance when one is needed (onJoinPrepare, then
  JoinGroup), runs the callbacks, raises the first error, and returns records.
- ``receive(envelope, now_ms)`` is a response arriving. It moves the state machine, and as
  leader runs the assignor and sends SyncGroup; it never calls the listener.
- ``advance(now_ms)`` is the heartbeat thread: heartbeats, the poll timeout, request timeouts.

Requests wait in ``outbox()``. Callbacks follow the consumer's client profile ("kip" or "java",
`consumer_listener.ConsumerBehaviour`); a callback's exception never stops the rebalance, and the
first one is raised by ``poll`` (KIP-429). Every callback is logged in ``callback_log`` (I7).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .consumer_fetch import Record
from .consumer_listener import (
    ON_PARTITIONS_ASSIGNED,
    ON_PARTITIONS_LOST,
    ON_PARTITIONS_REVOKED,
    CallbackCall,
    CallbackRunner,
    ConsumerBehaviour,
    ConsumerError,
    ConsumerRebalanceListener,
    ConsumerStateError,
    RebalanceListener,
    profile_named,
)
from .consumer_membership import Membership
from .consumer_state import Event, MemberState
from .group_messages import NO_GENERATION, UNKNOWN_MEMBER_ID
from .types import Assignor, Cluster, RebalanceProtocol, TopicPartition

__all__ = ["CommitRecord", "Consumer", "PollResult"]


@dataclass(frozen=True)
class CommitRecord:
    """An offset commit the consumer made (there is no broker to send it to)."""

    reason: str
    generation: int
    member_id: str
    offsets: tuple[tuple[TopicPartition, int], ...]


@dataclass
class PollResult:
    """What one ``poll`` returned, and the callbacks it ran."""

    records: list[Record]
    callbacks: list[CallbackCall] = field(default_factory=list)


class Consumer(Membership):
    """A KafkaConsumer using group management, without I/O (Kafka's ConsumerCoordinator;
    invariants I6–I9, docs/reference/invariants.md)."""

    def __init__(self, client_id: str, assignors: Sequence[Assignor], *,
                 profile: str = "kip", group_instance_id: str | None = None,
                 rack: str | None = None, session_timeout_ms: int = 45_000,
                 rebalance_timeout_ms: int = 300_000, heartbeat_interval_ms: int = 3_000,
                 max_poll_interval_ms: int = 300_000, request_timeout_ms: int = 30_000,
                 subscription_version: int = 3, auto_commit: bool = True,
                 cluster: Cluster | None = None,
                 listener: ConsumerRebalanceListener | None = None) -> None:
        super().__init__(client_id, assignors, group_instance_id=group_instance_id, rack=rack,
                         session_timeout_ms=session_timeout_ms,
                         rebalance_timeout_ms=rebalance_timeout_ms,
                         heartbeat_interval_ms=heartbeat_interval_ms,
                         max_poll_interval_ms=max_poll_interval_ms,
                         request_timeout_ms=request_timeout_ms,
                         subscription_version=subscription_version, cluster=cluster)
        self.profile: ConsumerBehaviour = profile_named(profile)
        self.auto_commit = auto_commit
        self._runner = CallbackRunner(listener if listener is not None else RebalanceListener())
        self._saved_paused: set[TopicPartition] = set()   # KIP-822, "kip" profile only
        self.commit_log: list[CommitRecord] = []
        self.completed_joins = 0  # assignments adopted by onJoinComplete (for the harness)
        self.joined_assignment: frozenset[TopicPartition] = frozenset()  # the last adopted

    # -- guards ---------------------------------------------------------------------

    def _require_open(self, api: str) -> None:
        if self._state is MemberState.CLOSED:
            raise ConsumerStateError(f"can't handle {api}() in state CLOSED")

    def _require_outside_callback(self, api: str) -> None:
        if self._runner.in_callback:
            raise ConsumerStateError(f"can't handle {api}() from a rebalance callback")

    # -- read-only view -----------------------------------------------------------------

    @property
    def owned_partitions(self) -> frozenset[TopicPartition]:
        return self._subs.assigned

    @property
    def paused(self) -> frozenset[TopicPartition]:
        return self._subs.paused

    @property
    def subscription(self) -> frozenset[str]:
        return self._subs.subscription

    @property
    def callback_log(self) -> tuple[CallbackCall, ...]:
        return tuple(self._runner.log)

    @property
    def buffered(self) -> tuple[Record, ...]:
        return self._subs.buffered

    # -- the KafkaConsumer API ----------------------------------------------------------

    def subscribe(self, topics: Iterable[str]) -> None:
        """KIP-70: the assignment stays until the next rebalance, which the changed
        subscription triggers; buffered records of dropped topics go now."""
        self._require_open("subscribe")
        wanted = frozenset(topics)
        if not wanted:
            self.unsubscribe()
            return
        self._subs.subscribe(wanted)

    def unsubscribe(self) -> None:
        """Commit, onLeavePrepare (KAFKA-8972), LeaveGroup (dynamic members), reset, clear."""
        self._require_open("unsubscribe")
        self._require_outside_callback("unsubscribe")
        self._leave("unsubscribe", Event.LEAVE)

    def close(self) -> None:
        """As `unsubscribe`, then nothing but introspection works. Closing twice is fine."""
        if self._state is MemberState.CLOSED:
            return
        self._require_outside_callback("close")
        self._leave("close", Event.CLOSE)

    def enforce_rebalance(self) -> None:
        """KIP-568 ``enforceRebalance``: rejoin at the next poll. A follower whose
        subscription is unchanged gets its assignment back without a rebalance; the
        leader's join makes the whole group rebalance (the coordinator's rule)."""
        self._require_open("enforce_rebalance")
        if self._subs.subscription:
            self._rejoin_needed = True

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        self._require_open("pause")
        self._set_paused(partitions, True)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        self._require_open("resume")
        parts = list(partitions)
        self._set_paused(parts, False)
        self._saved_paused.difference_update(parts)

    def _set_paused(self, partitions: Iterable[TopicPartition], paused: bool) -> None:
        try:
            self._subs.set_paused(partitions, paused)
        except KeyError as exc:
            raise ConsumerStateError(
                f"No current assignment for partition {exc.args[0]}") from None

    def deliver(self, records: Iterable[Record]) -> None:
        """The harness's fetch: records become available to the next ``poll``."""
        self._require_open("deliver")
        self._subs.deliver(records)

    def update_metadata(self, cluster: Cluster) -> None:
        """New cluster metadata; a leader that sees its snapshot change rejoins."""
        self._require_open("update_metadata")
        self.cluster = cluster

    def commit(self, offsets: dict[TopicPartition, int] | None = None,
               reason: str = "commit") -> None:
        """commitSync: only a STABLE member may commit (Kafka's ``generationIfStable``)."""
        self._require_open("commit")
        if self._state is not MemberState.STABLE:
            kind = ("RebalanceInProgressException" if self.rebalance_in_progress
                    else "CommitFailedException")
            raise ConsumerError(f"cannot commit in state {self._state.name}", kafka_class=kind)
        chosen = self._subs.positions() if offsets is None else offsets
        self.commit_log.append(CommitRecord(reason, self._generation, self._member_id,
                                            tuple(sorted(chosen.items()))))

    def poll(self, now_ms: int) -> PollResult:
        """Complete a received assignment, start a needed rebalance, return records."""
        self._require_open("poll")
        self._require_outside_callback("poll")
        self._tick(now_ms)
        self._last_poll_ms = self._now
        self.advance(now_ms)  # Kafka's pollHeartbeat: timers first
        if self._fatal is not None:
            raise self._fatal
        first_call = len(self._runner.log)
        if self._pending_assignment is not None:
            data, self._pending_assignment = self._pending_assignment, None
            try:
                self._on_join_complete(data)
            except Exception as exc:  # noqa: BLE001 - the assignor's on_assignment: raise it
                self._pending_error = exc  # from this poll and rebalance again
                self._rejoin_needed = True
            self._needs_join_prepare = True
        if self._should_join():
            if self._needs_join_prepare:
                self._on_join_prepare()
                self._needs_join_prepare = False
            self._send_join()
        error: Exception | None = self._pending_error or self._runner.take_error()
        self._pending_error = None
        self._runner.take_error()
        if error is not None:
            raise error
        return PollResult(self._subs.drain(), list(self._runner.log[first_call:]))

    # -- onJoinPrepare / onJoinComplete / onLeavePrepare ---------------------------------

    def _invoke(self, name: str, partitions: Iterable[TopicPartition], reason: str) -> None:
        self._runner.invoke(name, partitions, generation=self._generation,
                            member_id=self._member_id, reason=reason)

    def _auto_commit(self, reason: str) -> None:
        if self.auto_commit and self._state is MemberState.STABLE and self._subs.positions():
            self.commit(reason=reason)

    def _on_join_prepare(self) -> None:
        """Once per rebalance (KAFKA-12983): auto-commit while still STABLE (KAFKA-14024; here
        a commit is a record and never blocks), then lost, eager revoke-all, or cooperative
        revoke of topics no longer subscribed; the assignment changes after the callback."""
        owned = self._subs.assigned
        if self.profile.restore_pauses:
            self._saved_paused |= self._subs.paused
        self._auto_commit("on_join_prepare")
        self._is_leader = False
        if self._generation == NO_GENERATION or self._member_id == UNKNOWN_MEMBER_ID:
            if owned:
                self._invoke(ON_PARTITIONS_LOST, owned, "on_join_prepare: generation reset")
            self._subs.assign_from_subscribed(())
        elif self._protocol is RebalanceProtocol.EAGER:
            if owned or self.profile.eager_revoked_when_empty:
                self._invoke(ON_PARTITIONS_REVOKED, owned, "on_join_prepare: eager")
            self._subs.assign_from_subscribed(())
        else:
            gone = {tp for tp in owned if tp[0] not in self._subs.subscription}
            if gone:
                self._invoke(ON_PARTITIONS_REVOKED, gone, "on_join_prepare: unsubscribed topics")
                self._subs.assign_from_subscribed(owned - gone)

    def _on_join_complete(self, data: bytes) -> None:
        """Kafka's ``onJoinComplete``, in the order of the consumer's profile."""
        assignment = self._decode_assignment(data)
        if assignment is None:
            return
        if not self._is_leader:
            self._assignment_snapshot = None
        assigned = set(assignment.partitions)
        outside = sorted({t for t, _ in assigned} - self._subs.subscription)
        if outside:  # KAFKA-7961: nothing changes, no callback, rejoin
            self._rejoin_needed = True
            return
        owned = set(self._subs.assigned)
        added = assigned - owned
        revoked = owned - assigned if self._protocol is RebalanceProtocol.COOPERATIVE else set()
        assignor = self._assignors[self._protocol_name or ""]
        reason = f"on_join_complete: generation {self._generation}"
        if self.profile.revoke_before_assign:
            if revoked:
                self._invoke(ON_PARTITIONS_REVOKED, revoked, reason)
            assignor.on_assignment(assignment, self._generation)
            self._subs.assign_from_subscribed(assignment.partitions)
            self._restore_pauses()
            if added or self.profile.assigned_when_empty:
                self._invoke(ON_PARTITIONS_ASSIGNED, added, reason)
        else:  # KIP-429's example: assigned(added), then revoked(revoked)
            assignor.on_assignment(assignment, self._generation)
            self._subs.assign_from_subscribed([*owned, *added])
            self._restore_pauses()
            if added or self.profile.assigned_when_empty:
                self._invoke(ON_PARTITIONS_ASSIGNED, added, reason)
            if revoked:
                self._invoke(ON_PARTITIONS_REVOKED, revoked, reason)
            self._subs.assign_from_subscribed(assignment.partitions)
        if revoked:
            self._rejoin_needed = True
        self.completed_joins += 1
        self.joined_assignment = frozenset(self._subs.assigned)

    def _restore_pauses(self) -> None:
        """KIP-822: pauses of partitions paused before the rebalance and still assigned."""
        if not self.profile.restore_pauses:
            return
        keep = [tp for tp in self._saved_paused if self._subs.is_assigned(tp)]
        self._subs.set_paused(keep, True)
        self._saved_paused.clear()

    def _leave(self, reason: str, event: Event) -> None:
        """Commit, onLeavePrepare, LeaveGroup, reset the generation, clear (KAFKA-8972)."""
        self._subs.clear_buffer()
        owned = self._subs.assigned
        lost = (self._generation == NO_GENERATION or self._member_id == UNKNOWN_MEMBER_ID
                or self.rebalance_in_progress or self._state is MemberState.FATAL)
        if owned and not lost:
            self._auto_commit(reason)
        if owned:
            name = ON_PARTITIONS_LOST if lost else ON_PARTITIONS_REVOKED
            self._invoke(name, owned, f"on_leave_prepare: {reason}")
        self._subs.assign_from_subscribed(())
        self._cancel_inflight()
        self._send_leave_group(f"the consumer {reason}")
        self._reset_generation(keep_member_id=False)
        self._fire(event)
        self._subs.unsubscribe()
        self._saved_paused.clear()
        self._joined_subscription = None
        error = self._runner.take_error()
        if error is not None:
            raise error
