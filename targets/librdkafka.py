"""``librdkafka:<range|roundrobin|cooperative-sticky>[:adversarial]``: real librdkafka consumers
(confluent-kafka) in one group on a fresh librdkafka mock cluster per test case.

Theory of operation: every member is a `WireMember` (its own poll thread) writing to one
`WireLog`. The engines' events become real calls — join creates a Consumer, leave closes
it, crash and stall stop its polling (librdkafka keeps heartbeating on its own thread, so the
group evicts a silent member after ``max.poll.interval.ms``: a crashed member never comes
back, a stalled one wakes later), pause / resume / subscribe are the client's calls, produce
writes a record with a Producer, and an injected error fails the group's next request of
that API on the mock. `step()` shows the next log entry (waiting for it, with a deadline,
when there is none yet), so the engines judge the group after every callback end and every
record, in the order they happened: ownership is exactly the recorded intervals (a member
that stopped polling is shown out of the group, but its intervals stay open until its own
revoke or lost callback ends, so the model's interval check sees any overlap). The mock
numbers its generations freely (one member's first join may already be generation 2), so
the view's group generation counts rebalances instead: the distinct generations in which
some member's assign callback ended (members keep librdkafka's own generation). The group
is settled when nothing is waiting to be shown, every polling member's latest statistics
(newer than the last entry) say its group is up and steady, each has finished an assign
callback since it joined or changed its subscription, and the polling members own every
partition of their topics exactly once.

``:adversarial`` lets the state machine also stall members past ``max.poll.interval.ms`` and
make revoke callbacks slower than the rebalance: librdkafka's documented behaviour there is
an ownership overlap (I1) that it reports afterwards (on_lost, _MAX_POLL_EXCEEDED).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..properties.group import CallbackRecord, GroupView, MemberSpec, MemberView, SubscribeCall
from .librdkafka_member import (
    COMMAND_TIMEOUT,
    Entry,
    WireLog,
    WireMember,
    consumer_conf,
)
from .librdkafka_mock import MockCluster

ASSIGNORS = ("range", "roundrobin", "cooperative-sticky")
STEP_WAIT = 60.0  # seconds a step waits for the group to do anything at all
JOIN_TIMEOUT = 10.0
PRODUCE_TIMEOUT = 15.0


@dataclass
class _Member:
    thread: WireMember
    spec: MemberSpec
    subscription: frozenset[str]
    owned: set[tuple[str, int]] = field(default_factory=set)
    marks: set[tuple[str, int]] = field(default_factory=set)  # the app's pause marks
    member_id: str = ""
    generation: int = -1  # librdkafka's, as its last callback saw it
    assigns: int = 0  # assign callbacks finished (completed joins)
    joined_owned: frozenset[tuple[str, int]] = frozenset()
    needs_assign: bool = True  # joined or changed subscription, no assign callback since
    commanded_at: float = 0.0  # time of the last command the driver sent
    polling: bool = True


class WireGroup:
    """A `GroupTarget` of librdkafka consumers on a mock cluster of its own."""

    shows_pause_calls = True  # pause / resume reach the model when their entry is shown

    def __init__(self, name: str, assignor: str) -> None:
        self.name, self.assignor = name, assignor
        self.cooperative = assignor == "cooperative-sticky"
        self.cluster = MockCluster()
        self.log = WireLog()
        self.members: dict[str, _Member] = {}
        self.gone: list[WireMember] = []  # crashed members, closed at the end
        self.applied = 0
        self.rounds: set[int] = set()  # generations some member's assign callback ended in
        self._producer: Any = None
        self._pending: dict[str, list[Any]] = {"callbacks": [], "records": [], "errors": [],
                                               "subscribes": [], "pauses": []}

    # --- membership events --------------------------------------------------------------

    def join(self, member: str, spec: MemberSpec) -> None:
        conf = consumer_conf(self.cluster.bootstraps, self.assignor)
        thread = WireMember(member, conf, self.log, self.cooperative)
        self.members[member] = _Member(thread, spec, frozenset(spec.topics))
        thread.start()
        self._command(member, "subscribe", tuple(spec.topics))

    def _command(self, member: str, op: str, *args: Any) -> None:
        m = self.members[member]
        m.commanded_at = _now()
        m.thread.call(op, *args)

    def leave(self, member: str) -> None:
        m = self.members.pop(member)
        m.thread.call("close")
        m.thread.join(COMMAND_TIMEOUT)

    def crash(self, member: str) -> None:
        """The process is gone: it polls no more, holds nothing, and its later callbacks
        (librdkafka's, at the final close) are not the application's."""
        m = self.members.pop(member)
        m.thread.call("polling", False)
        m.thread.muted = True
        self.gone.append(m.thread)

    def stall(self, member: str) -> None:
        self.members[member].polling = False
        self._command(member, "polling", False)

    def wake(self, member: str) -> None:
        self.members[member].polling = True
        self._command(member, "polling", True)

    def slow_revoke(self, member: str) -> None:
        """The member's next revoke callback lasts until another member owns one of the
        partitions it is revoking (bounded): a callback slower than the rebalance."""
        self._command(member, "slow_revoke")

    def subscribe(self, member: str, topics: tuple[str, ...]) -> None:
        m = self.members[member]
        if frozenset(topics) != m.subscription:
            m.needs_assign = True
        m.subscription = frozenset(topics)
        self._command(member, "subscribe", topics)

    def unsubscribe(self, member: str) -> None:
        raise ValueError("librdkafka: wire mode does not drive unsubscribe")

    def pause(self, member: str, partitions: tuple[tuple[str, int], ...]) -> None:
        self._command(member, "pause", partitions)

    def resume(self, member: str, partitions: tuple[tuple[str, int], ...]) -> None:
        self._command(member, "resume", partitions)

    def inject_error(self, member: str, api: str, error: str) -> None:
        """The group's next ``api`` request fails with ``error`` (the mock cannot aim at
        one member: whichever member sends that request first gets it)."""
        self.cluster.push_errors(api, [error])

    # --- metadata and records -----------------------------------------------------------

    def set_partitions(self, topic: str, count: int) -> None:
        self.cluster.create_topic(topic, count)

    def delete_topic(self, topic: str) -> None:
        raise ValueError("librdkafka: wire mode does not delete topics")

    def produce(self, topic: str, partition: int) -> None:
        if self._producer is None:
            from confluent_kafka import Producer

            self._producer = Producer({"bootstrap.servers": self.cluster.bootstraps,
                                       "log_level": 3})
        self._producer.produce(topic, b"groupcheck", partition=partition)
        if self._producer.flush(PRODUCE_TIMEOUT) != 0:
            raise TimeoutError(f"librdkafka: a record to {topic}-{partition} was not "
                               f"delivered in {PRODUCE_TIMEOUT:.0f}s")

    # --- showing the log, one entry at a time ---------------------------------------------

    def pending(self) -> int:
        """Entries logged but not shown yet."""
        with self.log.cond:
            return len(self.log.entries) - self.applied

    def step(self) -> bool:
        """Show the next entry; with none, wait (bounded) for one or for the group to settle."""
        with self.log.cond:
            ready = self.log.cond.wait_for(
                lambda: len(self.log.entries) > self.applied or self._settled(), STEP_WAIT)
            if not ready:
                self._pending["errors"].append(
                    ("group", f"nothing happened for {STEP_WAIT:.0f}s; {self._unsettled()}"))
                return False
            if len(self.log.entries) > self.applied:
                entry = self.log.entries[self.applied]
                self.applied += 1
                self._apply(entry)
        return True

    def _apply(self, e: Entry) -> None:
        m = self.members.get(e.member)
        if m is None or m.thread.source != e.source:
            return  # a member that left or crashed: its interval ended then
        if e.kind in ("assigned", "revoked", "lost") and e.phase == "end":
            self._apply_callback(m, e)
        elif e.kind == "record":
            self._pending["records"].append((e.member, e.partitions[0]))
        elif e.kind == "error":
            self._pending["errors"].append((e.member, f"librdkafka: {e.text}"))
        elif e.kind in ("pause", "resume"):
            m.marks = m.marks | set(e.partitions) if e.kind == "pause" \
                else m.marks - set(e.partitions)
            self._pending["pauses"].append((e.member, e.kind, e.partitions))
        elif e.kind == "subscribe":
            self._pending["subscribes"].append(
                SubscribeCall(e.member, frozenset(e.before), frozenset(e.after)))

    def _apply_callback(self, m: _Member, e: Entry) -> None:
        before = tuple(sorted(m.owned))
        if e.kind == "assigned":
            m.owned |= set(e.partitions)
            m.assigns += 1
            m.needs_assign = False
            m.joined_owned = frozenset(m.owned)
        else:
            m.owned -= set(e.partitions)
        m.member_id, m.generation = e.member_id, e.generation
        if e.kind == "assigned" and e.generation >= 0:
            self.rounds.add(e.generation)
        self._pending["callbacks"].append(CallbackRecord(
            e.seq, e.member, e.kind, e.partitions, before, e.generation, e.member_id,
            started=e.started))

    # --- observation --------------------------------------------------------------------

    def _settled(self) -> bool:
        return not self._unsettled()

    def _unsettled(self) -> str:
        """Why the group is not settled ('' when it is); called with the log's lock held."""
        entries = len(self.log.entries)
        if entries > self.applied:
            return "entries to show"
        live = [(n, m) for n, m in self.members.items() if m.polling]
        topics = set().union(*(m.subscription for _, m in live)) if live else set()
        for name, m in live:
            stats = self.log.stats.get(m.thread.source)
            if not m.subscription:
                continue
            if m.needs_assign:
                return f"{name} has had no assign callback since it (re)subscribed"
            if stats is None or stats.seq_at < entries or stats.t < m.commanded_at:
                return f"{name} has no statistics newer than the last entry"
            if (stats.state, stats.join_state) != ("up", "steady"):
                return f"{name}'s group is {stats.state}/{stats.join_state}"
        owned = [tp for _, m in live for tp in m.owned]
        wanted = {(t, p) for t in topics for p in range(self.cluster.topics.get(t, 0))}
        if len(owned) != len(set(owned)) or set(owned) != wanted:
            return "the polling members do not own their topics' partitions exactly once"
        return ""

    def view(self) -> GroupView:
        with self.log.cond:
            settled = self._settled()
            members = {
                n: MemberView(n, m.member_id, m.generation, frozenset(m.owned),
                              frozenset(m.marks & m.owned), m.subscription,
                              "COOPERATIVE" if self.cooperative else "EAGER", m.spec.profile,
                              m.polling, m.polling, 0, m.assigns, m.joined_owned)
                for n, m in self.members.items()}
            view = GroupView(len(self.rounds), "Stable" if settled else "Rebalancing", None,
                             dict(self.cluster.topics), members, settled,
                             tuple(self._pending["callbacks"]), (),
                             tuple(self._pending["records"]), tuple(self._pending["errors"]),
                             subscribe_calls=tuple(self._pending["subscribes"]),
                             pause_calls=tuple(self._pending["pauses"]))
            for kept in self._pending.values():
                kept.clear()
        return view

    def close(self) -> None:
        """Close every consumer (bounded), then the producer and the mock cluster."""
        threads = [m.thread for m in self.members.values()] + self.gone
        self.members.clear()
        for thread in threads:
            thread.muted = True
        for thread in threads:
            if thread.is_alive():
                try:
                    thread.call("close")
                except TimeoutError:
                    pass  # reported by the join below staying alive; never a hang
        for thread in threads:
            thread.join(COMMAND_TIMEOUT)
        if self._producer is not None:
            self._producer.flush(PRODUCE_TIMEOUT)
            self._producer = None
        if not any(t.is_alive() for t in threads):
            self.cluster.close()


def _now() -> float:
    import time

    return time.monotonic()
