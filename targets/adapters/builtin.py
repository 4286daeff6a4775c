"""``builtin:<assignor>``: our coordinator and consumers on the deterministic network.

A `BuiltinGroup` is a `GroupTarget`: real `Consumer`s (impl/consumer.py) and one
`GroupCoordinator` (impl/coordinator.py) talk through an in-memory `Network`, on a logical
clock. `step()` does one thing — deliver the oldest message, let one consumer poll, or move
the clock to the next deadline — so a run is a deterministic function of its events.
Instrumentation only observes: a listener logs callbacks with the owned set they saw, and a
wrapper around each assignor records every leader run (claims read, ownership, result).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...impl.consumer import Consumer
from ...impl.consumer_fetch import Record
from ...impl.consumer_listener import ConsumerError, ConsumerStateError
from ...impl.consumer_state import MemberState
from ...impl.coordinator import GroupCoordinator
from ...impl.coordinator_state import GroupState
from ...impl.group_messages import (
    Envelope,
    Errors,
    HeartbeatResponse,
    SyncGroupResponse,
)
from ...impl.network import COORDINATOR, Network
from ...impl.types import Assignment, Assignor, Cluster, Subscription, TopicPartition
from ...properties.group import (
    CallbackRecord,
    Claim,
    GroupView,
    MemberSpec,
    MemberView,
    RebalanceRecord,
)
from ...properties.settle_bound import GroupTimeouts
from .builtin_recording import (
    Given,
    Recorder,
    RecordingAssignor,
    builtin_assignor,
    claim_generation,
)

__all__ = ["BuiltinGroup", "builtin_assignor", "claim_generation"]

AssignorFactory = Callable[[str, MemberSpec], Assignor]
ConsumerFactory = Callable[..., Consumer]

SESSION_TIMEOUT_MS = 10_000
HEARTBEAT_INTERVAL_MS = 3_000
REBALANCE_TIMEOUT_MS = 30_000
CLOCK_TICK_MS = 1_000
ERROR_RESPONSES = {"sync": SyncGroupResponse, "heartbeat": HeartbeatResponse}


@dataclass
class _Member:
    name: str
    spec: MemberSpec
    consumer: Consumer
    client: str
    active: bool = True
    crashed: bool = False
    closed: bool = False
    last_owned: frozenset[TopicPartition] = frozenset()
    errors: dict[str, str] = field(default_factory=dict)  # api -> injected error name


class BuiltinGroup:
    """A group of our own consumers around our own coordinator (a `GroupTarget`)."""

    def __init__(self, name: str, assignor_factory: AssignorFactory = builtin_assignor,
                 consumer_factory: ConsumerFactory = Consumer) -> None:
        self.name = name
        self.assignor_factory = assignor_factory
        self.consumer_factory = consumer_factory
        self.coordinator = GroupCoordinator("groupcheck")
        self.network = Network()
        self.now = 0
        #: what the model's settle bound derives from (I11); the clock moves in ticks
        self.timeouts = GroupTimeouts(SESSION_TIMEOUT_MS, REBALANCE_TIMEOUT_MS,
                                      HEARTBEAT_INTERVAL_MS, margin_ms=CLOCK_TICK_MS)
        self.partitions: dict[str, int] = {}
        self.members: dict[str, _Member] = {}
        self._incarnations: dict[str, int] = {}
        self._idle: set[str] = set()
        self._callbacks: list[CallbackRecord] = []
        self._rebalances: list[RebalanceRecord] = []
        self._records: list[tuple[str, TopicPartition]] = []
        self._errors: list[tuple[str, str]] = []
        self._seq = 0
        self._offset = 0
        self._listed_ids: set[str] | None = None  # the coordinator's members, until it moves
        #: (member, assignor) -> user data written -> what on_assignment had handed over
        self.written: dict[tuple[str, str], dict[bytes | None, Given]] = {}

    # --- instrumentation ----------------------------------------------------------------

    def log_callback(self, name: str, kind: str, partitions: list[TopicPartition]) -> None:
        m = self.members[name]
        before = m.last_owned if kind == "assigned" else m.consumer.owned_partitions
        self._seq += 1
        self._callbacks.append(CallbackRecord(
            self._seq, name, kind, tuple(sorted(partitions)), tuple(sorted(before)),
            m.consumer.generation, m.consumer.member_id, m.consumer.rebalance_in_progress))

    def log_rebalance(self, leader: str, assignor: str, subscriptions: dict[str, Subscription],
                      result: dict[str, Assignment]) -> None:
        """Record one leader run under the generation it was computed for. A leader that
        wakes up with a JoinGroup answer of a generation the coordinator has left behind
        still runs its assignor, but its SyncGroup is refused (ILLEGAL_GENERATION): that
        assignment is never given to anyone, so it is no rebalance of the group and is not
        recorded."""
        generation = self.members[leader].consumer.generation
        if generation != self.coordinator.generation_id:
            return
        names = {m.consumer.member_id: n for n, m in self.members.items() if not m.closed}
        in_group = self._listed()
        claims = {}
        for mid, s in subscriptions.items():
            name = names.get(mid, mid)
            given = self.written.get((name, assignor), {}).get(s.user_data)
            claims[name] = Claim(tuple(s.topics), tuple(s.owned_partitions),
                                 claim_generation(assignor, s), s.user_data, given)
        owned = {n: tuple(sorted(m.consumer.owned_partitions)) for n, m in self.members.items()
                 if not m.closed and m.consumer.member_id in in_group}
        assignment = {names.get(mid, mid): tuple(a.partitions) for mid, a in result.items()}
        protocol = self.members[leader].consumer.protocol.name
        self._rebalances.append(RebalanceRecord(generation, protocol, assignor, claims, owned,
                                                assignment))

    # --- membership events --------------------------------------------------------------

    def join(self, member: str, spec: MemberSpec) -> None:
        self._incarnations[member] = self._incarnations.get(member, 0) + 1
        client = f"{member}#{self._incarnations[member]}"
        self.written = {k: v for k, v in self.written.items() if k[0] != member}
        assignors: list[Assignor] = [
            RecordingAssignor(self.assignor_factory(a, spec), self, member)
            for a in spec.assignors]
        consumer = self.consumer_factory(
            client, assignors, profile=spec.profile, group_instance_id=spec.group_instance_id,
            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
            subscription_version=spec.subscription_version, cluster=self._cluster(),
            listener=Recorder(self, member))
        self.members[member] = _Member(member, spec, consumer, client)
        consumer.subscribe(spec.topics)
        self._idle.clear()

    def _call(self, member: str, action: Callable[[Consumer], object]) -> None:
        m = self.members[member]
        try:
            action(m.consumer)
        except (ConsumerError, ConsumerStateError) as exc:
            self._errors.append((member, f"{type(exc).__name__}: {exc}"))
        self._flush(m)
        self._idle.clear()

    def leave(self, member: str) -> None:
        """``close()``; a stalled member wakes up to close (its LeaveGroup must get out)."""
        self.wake(member)
        self._call(member, lambda c: c.close())
        self.members[member].closed = True
        self.members[member].active = False

    def crash(self, member: str) -> None:
        m = self.members[member]
        m.active, m.crashed = False, True
        self.network.drop_link(m.client, COORDINATOR)
        self.network.drop_link(COORDINATOR, m.client)

    def stall(self, member: str) -> None:
        m = self.members[member]
        m.active = False
        self.network.hold(m.client, COORDINATOR)
        self.network.hold(COORDINATOR, m.client)

    def wake(self, member: str) -> None:
        m = self.members[member]
        if m.crashed or m.closed:
            return
        m.active = True
        self.network.release(m.client, COORDINATOR)
        self.network.release(COORDINATOR, m.client)
        self._idle.clear()

    def subscribe(self, member: str, topics: tuple[str, ...]) -> None:
        self._call(member, lambda c: c.subscribe(topics))

    def unsubscribe(self, member: str) -> None:
        self._call(member, lambda c: c.unsubscribe())

    def pause(self, member: str, partitions: tuple[TopicPartition, ...]) -> None:
        self._call(member, lambda c: c.pause(partitions))

    def resume(self, member: str, partitions: tuple[TopicPartition, ...]) -> None:
        self._call(member, lambda c: c.resume(partitions))

    def enforce_rebalance(self, member: str) -> None:
        """KIP-568: the member asks to rejoin (the leader's join rebalances the group)."""
        self._call(member, lambda c: c.enforce_rebalance())

    def inject_error(self, member: str, api: str, error: str) -> None:
        self.members[member].errors[api] = error

    # --- metadata and records -----------------------------------------------------------

    def _cluster(self) -> Cluster:
        return Cluster(dict(self.partitions))

    def _metadata_changed(self) -> None:
        for m in self.members.values():
            if not m.closed:
                m.consumer.update_metadata(self._cluster())
        self._idle.clear()

    def set_partitions(self, topic: str, count: int) -> None:
        self.partitions[topic] = count
        self._metadata_changed()

    def delete_topic(self, topic: str) -> None:
        self.partitions.pop(topic, None)
        self._metadata_changed()

    def produce(self, topic: str, partition: int) -> None:
        """A fetch response brings one record to whichever live consumer owns the partition."""
        self._offset += 1
        for m in self.members.values():
            if m.active and (topic, partition) in m.consumer.owned_partitions:
                m.consumer.deliver([Record(topic, partition, self._offset)])
        self._idle.clear()

    # --- the protocol, one step at a time -----------------------------------------------

    def _flush(self, m: _Member) -> None:
        for envelope in m.consumer.outbox():
            self.network.send(m.client, COORDINATOR, envelope)

    def _route(self, responses: list[Envelope]) -> None:
        for envelope in responses:
            self.network.send(COORDINATOR, envelope.client, envelope)

    def _by_client(self, client: str) -> _Member | None:
        for m in self.members.values():
            if m.client == client:
                return m
        return None

    def _deliver_to_member(self, m: _Member, envelope: Envelope) -> None:
        for api, response_type in ERROR_RESPONSES.items():
            if api in m.errors and isinstance(envelope.message, response_type):
                error = Errors[m.errors.pop(api)]
                envelope = Envelope(envelope.client, envelope.request_id, response_type(error))
        m.consumer.receive(envelope, self.now)
        self._flush(m)

    def _deliver_next(self) -> bool:
        message = self.network.deliver_next()
        if message is None:
            return False
        if message.destination == COORDINATOR:
            self._listed_ids = None
            self._route(self.coordinator.receive(message.envelope, self.now))
        else:
            m = self._by_client(message.destination)
            if m is not None and not m.crashed:
                self._deliver_to_member(m, message.envelope)
        self._idle.clear()
        return True

    def _fingerprint(self, m: _Member) -> tuple[object, ...]:
        c = m.consumer
        return (c.state, c.generation, c.member_id, c.owned_partitions, c.paused,
                len(c.callback_log), len(c.buffered))

    def _poll_one(self) -> bool:
        for name in sorted(self.members):
            m = self.members[name]
            if not m.active or m.closed or name in self._idle:
                continue
            before = self._fingerprint(m)
            m.last_owned = m.consumer.owned_partitions
            try:
                result = m.consumer.poll(self.now)
                self._records += [(name, (r.topic, r.partition)) for r in result.records]
            except Exception as exc:  # noqa: BLE001 - poll raises what the app would see
                # (a callback's or the leader's assignor's error); the member rejoins, and a
                # group that cannot get past it fails I11
                self._errors.append((name, f"poll raised {type(exc).__name__}: {exc}"))
            self._flush(m)
            if self._fingerprint(m) == before and self.network.idle():
                self._idle.add(name)
            else:
                self._idle.clear()
            return True
        return False

    def _tick(self) -> bool:
        deadline = self.coordinator.next_deadline()
        step_to = self.now + CLOCK_TICK_MS
        self.now = step_to if deadline is None else max(self.now, min(deadline, step_to))
        self._listed_ids = None
        self._route(self.coordinator.advance(self.now))
        for m in self.members.values():
            if m.active and not m.closed:
                m.consumer.advance(self.now)
                self._flush(m)
        self._idle.clear()
        return True

    def step(self, within_ms: int | None = None) -> bool:
        """One step of the logical clock (``within_ms`` is for targets that wait)."""
        if self._deliver_next() or self._poll_one():
            return True
        if not any(not m.closed for m in self.members.values()) and \
                self.coordinator.next_deadline() is None:
            return False
        return self._tick()

    @property
    def clock_ms(self) -> int:
        """The logical clock (ms): the model bounds a settle in logical time, not steps."""
        return self.now

    # --- observation --------------------------------------------------------------------

    def _listed(self) -> set[str]:
        """The member ids the coordinator lists (read again only after it has moved)."""
        if self._listed_ids is None:
            self._listed_ids = set(self.coordinator.members)
        return self._listed_ids

    def _settled(self, listed: set[str]) -> bool:
        live = [m for m in self.members.values()
                if m.active and not m.closed and m.consumer.subscription]
        if not live and not listed:
            return self.network.idle()
        if self.coordinator.state is not GroupState.STABLE or not self.network.idle():
            return False
        if {m.consumer.member_id for m in live} != listed:
            return False
        return all(m.consumer.state is MemberState.STABLE and not m.consumer.rebalance_in_progress
                   and m.consumer.generation == self.coordinator.generation_id
                   and m.consumer.joined_subscription == m.consumer.subscription
                   and m.name in self._idle for m in live)

    def view(self) -> GroupView:
        listed = self._listed()
        names = {m.consumer.member_id: n for n, m in self.members.items() if not m.closed}
        members = {
            n: MemberView(n, m.consumer.member_id, m.consumer.generation,
                          m.consumer.owned_partitions, m.consumer.paused,
                          m.consumer.subscription, m.consumer.protocol.name, m.spec.profile,
                          m.consumer.member_id in listed, m.active,
                          len(m.consumer.commit_log), m.consumer.completed_joins,
                          m.consumer.joined_assignment)
            for n, m in self.members.items() if not m.closed}
        view = GroupView(
            self.coordinator.generation_id, self.coordinator.state.value,
            names.get(self.coordinator.leader_id or ""), dict(self.partitions), members,
            self._settled(listed), tuple(self._callbacks), tuple(self._rebalances),
            tuple(self._records), tuple(self._errors))
        self._callbacks, self._rebalances, self._records, self._errors = [], [], [], []
        return view

    def close(self) -> None:
        self.members.clear()
