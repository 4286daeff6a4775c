"""``--broker groupcheck`` (the default): groupcheck's own broker (`broker.Broker`) as the
wire layer's cluster backend.

Everything the wire layer asks of a backend the broker already does in process: topics are
created, grown and deleted in its metadata; an injected error, a delayed answer, a connection
closed before its answer, a coordinator move and the order of SyncGroup answers are aimed at the
members they name (a member's client id is its name), so `aims_errors_at_members` is true (a
move needs a broker of two nodes or more, ``nodes``); the rounds are the coordinator's own
(`Broker.rounds`), with the time the leader's assignment reached it; `describe` asks the broker
for the group with a real DescribeGroups over the wire (`broker.client`), as an admin client
does. A topic a client's Metadata request names is created with one partition, as Kafka's
``auto.create.topics.enable`` and ``num.partitions`` defaults do (the wire group tells the
model of it). `start_broker` starts a broker as the wire layer runs it. The broker accepts the
harness's short session timeouts (its minimum is lowered to 1 ms), and its joins complete as
soon as every known member has rejoined, so no round waits out a session timeout. It has no
defects to work around: nothing of `mock` is used here. Several wire groups can share one broker
the caller runs: each then gets a backend scoped to its group id (its rounds, its joins in
flight), and closing it leaves the broker running.

Ordering (`order_sync_answers`): every current member's next SyncGroup answer is held; once
the first is held, the others of that generation that can still come (not answered yet,
this ordering's hold still armed for them) are waited for, at most `ORDER_WINDOW` and half
the session timeout, then released one by one — the leader's before or after the named
member's, the rest after both — and the hold rules that did not fire are disarmed. A thread
per ordering does this, so no answer is held longer than the window and none outlives the
backend. Each ordering tags its holds and releases and disarms its own only, so two at once
never touch each other's answers; an answer whose member has gone (crashed, left, its
connection closed) is skipped by the broker, and the others still go out. A member that
leaves or crashes has every rule aimed at it disarmed (`forget`): its name may come back
on a new consumer.

A steering thread that raises anyway is this backend's failure (`failure`), as is anything
that failed inside its broker: the wire group raises it at its next call, as a harness
error, and no verdict is drawn from what the group did after.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ....properties.harness import Failures, ThreadFailure
from ....properties.member_id_rules import ErrorResponse, NextJoin
from ..member_ids import Ledger, error_answers
from ..refusals import LastJoin, last_joins
from ..silence import silent_after_sync
from .backend import BackendUnavailable, GroupRound

if TYPE_CHECKING:  # the broker imports kio: loaded only when a backend is made
    from ....broker import Broker
    from ....broker.commit_log import CommitAnswer
    from ....broker.server import Listener
    from ....broker.steering import Exchange

__all__ = ["API_NAMES", "ERROR_CODES", "ERROR_NAMES", "ORDER_LIMIT", "ORDER_WINDOW",
           "GroupcheckBackend", "SyncOrder", "request_generation", "start_broker"]

#: the wire layer's API names and error names, as Kafka's API keys and error codes
API_NAMES = {"join": "JoinGroup", "heartbeat": "Heartbeat", "sync": "SyncGroup",
             "leave": "LeaveGroup", "commit": "OffsetCommit"}
ERROR_CODES = {"ILLEGAL_GENERATION": 22, "UNKNOWN_MEMBER_ID": 25, "REBALANCE_IN_PROGRESS": 27,
               "COORDINATOR_NOT_AVAILABLE": 15, "NOT_COORDINATOR": 16,
               "FENCED_INSTANCE_ID": 82}
ERROR_NAMES = {code: name for name, code in ERROR_CODES.items()}
#: seconds an ordering waits at most for the rest of a generation's SyncGroup answers once
#: the first is held (a member that never syncs in it must not hold the others longer); on a
#: backend whose members' session is shorter, half their session timeout, so that no held
#: member outlives its session: a member the harness holds past it would come back with a
#: stale assignment, a zombie of the harness's making
ORDER_WINDOW = 3.0
#: seconds an ordering waits for its rebalance to come at all before it disarms
ORDER_LIMIT = 120.0


def start_broker(*, nodes: int = 1, log_limit: int | None = None,
                 listener: Listener | None = None) -> Broker:
    """groupcheck's broker as the wire layer runs it, started: the harness's short session
    timeouts allowed (a minimum of 1 ms), of ``nodes`` nodes, ``log_limit`` exchanges kept
    (None: the broker's default), its requests heard by ``listener``."""
    try:
        from ....broker import Broker, BrokerConfig  # needs kio, an optional dependency
    except ImportError as exc:
        raise BackendUnavailable(f"groupcheck broker: {exc} (pip install "
                                 "'groupcheck[broker]')") from None
    config = BrokerConfig(min_session_timeout_ms=1, nodes=nodes)
    if log_limit is not None:
        config = replace(config, log_limit=log_limit)
    return Broker(config, listener=listener).start()


def request_generation(request: Any) -> int:
    """The generation a group request carries: SyncGroup's, Heartbeat's ``generation_id``,
    OffsetCommit's ``generation_id_or_member_epoch`` (its name since KIP-848, every
    version); -1 for a request without one (OffsetFetch, FindCoordinator, OffsetCommit v0)."""
    for name in ("generation_id", "generation_id_or_member_epoch"):
        value = getattr(request, name, None)
        if value is not None:
            return int(value)
    return -1


class GroupcheckBackend:
    """A fresh broker for one group."""

    name = "groupcheck"
    aims_errors_at_members = True
    fences_static_members = True
    keeps_commits = True

    def __init__(self, clients: frozenset[str], session_timeout_ms: int,
                 broker: Broker | None = None, group: str | None = None,
                 nodes: int = 1) -> None:
        """A broker of its own, of ``nodes`` nodes (two or more: its coordinator can move);
        or, given ``broker`` (a running `broker.Broker` the caller owns and closes) and
        ``group``, that group's part of it, for several wire groups at once on one broker."""
        if broker is None:
            broker = start_broker(nodes=nodes)
        self.broker, self.group, self.own_broker = broker, group, group is None
        self.bootstrap = self.broker.bootstrap
        self.stopping = threading.Event()
        self.orderings: list[SyncOrder] = []
        self.failures = Failures()  # of the steering threads
        self.order_window = min(ORDER_WINDOW, session_timeout_ms / 2000)
        self._told_seq = -1  # the last steered exchange `told` read
        self._fenced_number = -1  # and the last fencing answer
        self._joins_seq, self._joins = -1, dict[str, "Exchange"]()  # `last_joins`: read
        self._rejoin_floor, self._rejoined = -1, set[int]()  # `rejoins`: below, all judged
        self._ledger = Ledger()  # `rejoins`: what the log read so far says of each member
        self._tags = itertools.count(1)
        self._commit_floor, self._commits = -1, dict[int, "CommitAnswer"]()  # `commits`: read

    @property
    def topics(self) -> dict[str, int]:
        return self.broker.partitions()

    def create_topic(self, topic: str, partitions: int) -> None:
        self.broker.create_topic(topic, partitions)

    def grow_topic(self, topic: str, partitions: int) -> None:
        self.broker.grow_topic(topic, partitions)

    def delete_topic(self, topic: str) -> None:
        self.broker.delete_topic(topic)

    def inject_error(self, api: str, error: str, member: str | None = None) -> None:
        """The named member's next ``api`` request (the wire layer's name, or Kafka's) fails
        with ``error``, one the broker's fault table lets that API answer (every member's,
        when none is named, as on the mock)."""
        names = [member] if member is not None else sorted(self._member_names())
        for name in names:
            self.broker.fail_next(name, API_NAMES.get(api, api), error)

    def delay_answer(self, api: str, seconds: float, member: str | None = None) -> None:
        """The named member's next ``api`` answer (the wire layer's name, or Kafka's) goes
        out ``seconds`` late."""
        names = [member] if member is not None else sorted(self._member_names())
        for name in names:
            self.broker.delay(name, API_NAMES.get(api, api), seconds)

    def close_before_answer(self, api: str, member: str) -> None:
        """The named member's connection is closed instead of its next ``api`` answer (the
        wire layer's name, or Kafka's): the coordinator took the request, the answer is
        lost."""
        self.broker.close_before_answer(member, API_NAMES.get(api, api))

    def move_coordinator(self, api: str, member: str) -> None:
        """The group's coordinator moves to the broker's next node when the named member's
        next ``api`` request arrives, which the old node answers NOT_COORDINATOR; a broker
        of one node refuses (ValueError)."""
        self.broker.move_coordinator(member, API_NAMES.get(api, api))

    def order_sync_answers(self, member: str, leader_first: bool, members: list[str]) -> None:
        """The next rebalance's SyncGroup answers go out with the leader's before (or after)
        ``member``'s; ``members`` are the group's current members, whose answers are held."""
        ordering = SyncOrder(self, member, leader_first, sorted(set(members) | {member}),
                             f"order-{next(self._tags)}")
        self.orderings.append(ordering)
        ordering.arm()  # before the next event: a member that crashes next is forgotten
        ordering.start()

    def told(self) -> list[tuple[str, str, int]]:
        """Errors the broker answered since the last call: (member, error, the generation of
        the request answered, -1 for one without): injected ones, and the coordinator's own
        fencing answers (a member it expired learns so from its next request; Kafka's Java
        consumer then still shows the generation it had, `consumer.groupMetadata()` being
        set only when a join completes); not one its client never read (`Exchange.unread`)."""
        steered = self.broker.steered(self._told_seq)
        fenced = self.broker.fenced(self._fenced_number)
        self._told_seq = max([self._told_seq, *(e.seq for e in steered)])
        self._fenced_number = max([self._fenced_number, *(n for n, _ in fenced)])
        told = [e for e in steered if (e.steering or "").startswith("fail")]
        return [(e.who.client_id, ERROR_NAMES[e.error_code], request_generation(e.request))
                for e in sorted(told + [e for _, e in fenced], key=lambda e: e.seq)
                if self._ours(e) and e.error_code in ERROR_NAMES and not e.unread]

    def commits(self) -> list[CommitAnswer]:
        """Every OffsetCommit of this backend's group answered so far (`broker.commit_log`);
        each call reads only the exchanges logged since the last."""
        answers, self._commit_floor = self.broker.offset_commits(self._commit_floor,
                                                                 self.group)
        for answer in answers:
            if self.group in (None, answer.group):
                self._commits.setdefault(answer.seq, answer)
        return sorted(self._commits.values(), key=lambda a: a.seq)

    def log_ends(self, topics: Collection[str] | None = None
                 ) -> dict[tuple[str, int], tuple[int, int]]:
        return self.broker.log_ends(topics)

    def forget(self, member: str) -> None:
        """``member`` left or crashed: no rule aimed at it fires on whoever joins next
        under its name, and no join of whoever does answers its errors (I16)."""
        self.broker.forget(member)
        self._ledger.closed.setdefault(member, []).append(time.monotonic_ns())

    def failure(self) -> ThreadFailure | None:
        """The first failure of a steering thread or inside the broker, or None."""
        return self.failures.first or self.broker.failure()

    def describe(self, group: str) -> Any:
        """The group as its coordinator holds it, by DescribeGroups over the wire to the node
        that coordinates it now (a move may have taken it off the bootstrap node)."""
        from ....broker.client import describe_group

        return describe_group(self.broker.address(self.broker.coordinator_of(group)), group)

    def groups(self) -> list[str]:
        """The groups this backend answers for: its own, or every group of its broker."""
        return [self.group] if self.group is not None else self.broker.group_ids()

    def _member_names(self) -> set[str]:
        return {r.client_ids[m] for g in self.groups() for r in self.broker.rounds(g)
                for m in r.client_ids}

    def rounds(self) -> list[GroupRound]:
        out = []
        for group in self.groups():
            for r in self.broker.rounds(group):
                out.append(GroupRound(r.generation, r.protocol, r.leader, dict(r.subscriptions),
                                      dict(r.assignments), dict(r.client_ids), r.complete,
                                      r.leader_sync_ns, frozenset(r.synced - r.withheld),
                                      dict(r.waited_ms)))
        return out

    def joining(self) -> int:
        return sum(self.broker.joins_in_flight(g) for g in self.groups())

    def problems(self) -> list[str]:
        """Connections the broker closed (unreadable or unserved requests)."""
        return self.broker.notes()

    def rejoins(self) -> list[tuple[ErrorResponse, NextJoin]]:
        """Error answers (`member_ids.JUDGED_ERRORS`) whose member's next JoinGroup was
        answered since the last call; one still waiting (while its member is in the group),
        or an exchange not answered yet, keeps the scan's floor below it."""
        members = self._member_names()
        exchanges = [e for e in self.broker.exchanges(self._rejoin_floor) if self._ours(e)]
        out, waiting = [], [e.seq for e in exchanges if e.answered_ms is None]
        for seq, answer, join in error_answers(exchanges, self._ledger):
            if join is None or join.waited_ms is None:
                waiting += [seq] if answer.member in members else []
            elif seq not in self._rejoined:
                self._rejoined.add(seq)
                out.append((answer, join))
        if exchanges:
            self._rejoin_floor = min(waiting, default=exchanges[-1].seq + 1) - 1
        return out

    def _ours(self, e: Exchange) -> bool:
        """An exchange of this backend's group (any, for a backend of every group)."""
        return self.group in (None, getattr(e.request, "group_id", None))

    def silent(self, quiet_ms: int) -> dict[str, int]:
        """Members silent since their SyncGroup answer (`silence.silent_after_sync`)."""
        return silent_after_sync([e for e in self.broker.exchanges() if self._ours(e)],
                                 quiet_ms, time.monotonic_ns())

    def last_joins(self) -> dict[str, LastJoin]:
        """Each member's latest JoinGroup of this backend's group and its answer
        (`refusals.last_joins`); each call reads only the exchanges logged since the last
        (a step asks on every tick of a wait), keeping each member's latest JoinGroup."""
        log = self.broker.exchanges(self._joins_seq)
        for e in log:
            if e.api == "JoinGroup" and self._ours(e):
                self._joins[e.who.client_id] = e
        self._joins_seq = log[-1].seq if log else self._joins_seq
        return last_joins(self._joins.values())

    def close(self) -> None:
        self.stopping.set()
        for ordering in self.orderings:
            ordering.join(timeout=ORDER_WINDOW + 5)
        if self.own_broker:
            self.broker.close()


class SyncOrder(threading.Thread):
    """One ordering of SyncGroup answers (see the module docstring); ``tag`` marks its holds."""

    def __init__(self, backend: GroupcheckBackend, member: str, leader_first: bool,
                 members: list[str], tag: str = "") -> None:
        super().__init__(daemon=True, name=f"sync-order-{member}")
        self.backend, self.broker = backend, backend.broker
        self.member, self.leader_first, self.members = member, leader_first, members
        self.tag = tag or f"sync-order-{member}-{id(self)}"
        self.released: list[str] = []  # client ids, in the order their answers went out

    def arm(self) -> None:
        """Hold every member's next SyncGroup answer (in the caller's thread, so that a
        member forgotten right after has no hold of this ordering left)."""
        for name in self.members:
            self.broker.hold(name, "SyncGroup", tag=self.tag)

    def run(self) -> None:
        self.backend.failures.guard(self.name, self._order)()

    def _order(self) -> None:
        try:
            first = self._wait(lambda held: bool(held), ORDER_LIMIT)
            if first:
                generation = int(first[0].exchange.request.generation_id)
                held = self._wait(lambda h: not self._coming(generation, h),
                                  self.backend.order_window) or first
                self._release(held)
        finally:
            for name in self.members:
                self.broker.cancel(name, "SyncGroup", "hold", self.tag)
            rest = self._syncs()
            if rest:
                self._release(rest)

    def _syncs(self) -> list[Any]:
        return [h for h in self.broker.held(self.tag) if h.api == "SyncGroup"
                and h.exchange.who.client_id in self.members]

    def _wait(self, enough: Any, limit: float) -> list[Any]:
        deadline = time.monotonic() + limit
        while not self.backend.stopping.is_set():
            held = self._syncs()
            if held and enough(held) or time.monotonic() > deadline:
                return held
            time.sleep(0.01)
        return self._syncs()

    def _coming(self, generation: int, held: list[Any]) -> set[str]:
        """The members of ``generation`` whose answer may still come to be held here: not
        answered by the coordinator yet, and with a hold of this ordering armed for them
        (a member that crashed or left has none: its answer is not waited for)."""
        armed = {r.member for r in self.broker.armed()
                 if r.tag == self.tag and r.action == "hold"}
        for group in self.backend.groups():
            for r in self.broker.rounds(group):
                if r.generation == generation:
                    answered = {r.client_ids.get(m, "") for m in r.synced}
                    return (set(r.client_ids.values()) & armed) - answered - {
                        h.exchange.who.client_id for h in held}
        return set()

    def _release(self, held: list[Any]) -> None:
        """Leader before (or after) the named member; the named member being the leader,
        before (or after) everyone; the others after the two."""
        lead = [h for h in held if h.exchange.request.assignments]
        named = [h for h in held if h.exchange.who.client_id == self.member and h not in lead]
        others = [h for h in held if h not in lead and h not in named]
        if self.leader_first:
            ordered = lead + named + others
        else:
            ordered = named + lead + others if named else others + lead
        sent = self.broker.release(*ordered)
        self.released += [h.exchange.who.client_id for h in sent]
