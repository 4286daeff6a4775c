"""``wire:<client>[+<client>…]:<assignor>``: real consumers of any client in one group, on a
backend cluster, judged from their own log and from the coordinator's side.

Theory of operation: each member is a consumer inside a member driver (`driver_process`, the
contract: ``docs/reference/member-driver-contract.md``), placed by a `driver_pool` (a member of a
client that crashes by kill alone in one, unless the pool shares); the engines' events become
driver commands — join is ``create``, leave ``close``, crash ``crash`` (or SIGKILL), stall and wake
``stop_polling`` / ``start_polling``, pause / resume / subscribe the client's calls — and metadata,
injected errors, delayed answers, closed connections, coordinator moves and SyncGroup orders go
to the backend (`backends.backend`, `steered`). Every
driver event lands in one `WireLog`, merged by CLOCK_MONOTONIC; `step()` shows the next entry
(waiting, with a deadline, when there is none yet), so ownership is exactly the recorded intervals,
from the end of an assign callback to the end of the revoke or lost callback that releases the
partition. Each generation the coordinator completes is shown too, decoded from its bytes
(`rounds`), with what the members owned when the leader's assignment reached it; on a backend that
answers DescribeGroups (groupcheck's broker) the bytes judged are the ones the coordinator
describes.

The group is settled when nothing is waiting to be shown, `settle.unsettled` finds no reason
left on either side and every polling member has been handed each partition it owns up to its
high watermark (`settle.unread`; the backend's, or what the group produced); a step waits no
longer once the coordinator refuses a member for good (`refusals`). Every call into the group
first raises, as a `HarnessError`, whatever failed in a thread of the harness since
(`check_harness`; a view checks again before it is handed over, a wait on every tick): what the
group did after is not the client's doing.

The view's generation counts the generations the coordinator completed (the mock numbers freely,
and a round nobody finished is no rebalance a member saw); each member keeps the generation its
client reports. A mixed group (``wire:mixed:java@2.8.0+kafka-python:<assignor>``) gives members to
the clients in turn, by the order of first joins; each is judged by its client's profile (no I6 on
claims of a release that sends no generation). A join that names its client (``MemberSpec.client``,
a rolling upgrade's) starts that one; each member configures its own assignor list and is
COOPERATIVE only when every assignor in it is (KIP-429), and commits in its own style
(``MemberSpec.commit_style``, one that every client's driver offers: `commit_styles`)."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ...properties.group import (
    GroupView,
    MemberSpec,
    RebalanceRecord,
    TopicPartition,
)
from ...properties.harness import checked
from . import settle
from .backends.backend import Backend, GroupRound, ensure_partitions
from .backends.factory import make_backend
from .clients import ClientInfo, hello
from .deliveries import Deliveries
from .described import as_described, latest_round
from .driver_pool import DriverPool, check_alive, close_members
from .driver_process import CommandFailed, DriverProcess
from .drivers.messages import DriverConfig, DriverEvent
from .log import Entry, WireLog, owned_at
from .members import WireMember, member_config, member_view, offered_styles
from .round_records import COOPERATIVE_PROTOCOLS, given_before, record
from .shown import Shown, show_entry
from .steered import Steered
from .timeouts import group_timeouts

__all__ = ["CONFIG", "GROUP", "SLOW_REVOKE_MS", "STEP_WAIT", "TICK", "ClientSetup", "WireGroup"]

CONFIG: DriverConfig = {
    "session_timeout_ms": 2000, "heartbeat_interval_ms": 300, "max_poll_interval_ms": 3000,
    "auto_offset_reset": "earliest", "enable_auto_commit": False,
    "metadata_max_age_ms": 1000,  # a topic that grows is seen within a settle
    "request_timeout_ms": 10_000}  # a late answer is given up in seconds, not a minute
SESSION_MS = int(CONFIG["session_timeout_ms"])
GROUP = "groupcheck"
STEP_WAIT = 60.0  # seconds a step waits for the group to do anything at all
TICK = 0.05
SLOW_REVOKE_MS = 2 * int(CONFIG["max_poll_interval_ms"])  # slower than any rebalance
#: a client name → Kafka's client classpath for its driver ('' for none), and whether its
#: release sends no generation
ClientSetup = Callable[[str], tuple[str, bool]]


class WireGroup(Steered):
    """A `GroupTarget` of real consumers of one or more clients on a fresh backend (what it
    asks of the coordinator: `steered.Steered`)."""

    shows_pause_calls = True  # pause / resume reach the model when their entry is shown

    def __init__(self, name: str, clients: tuple[str, ...], assignor: str,
                 broker: str = "groupcheck", classpaths: Mapping[str, str] | None = None,
                 trace: bool = False, generationless: frozenset[str] = frozenset(),
                 setup: ClientSetup | None = None, *, group: str = GROUP,
                 backend: Backend | None = None, pool: DriverPool | None = None,
                 nodes: int = 0) -> None:
        """``group``, ``backend``, ``pool``: a caller's that runs several groups at once;
        ``nodes``: its own broker's (`factory.make_backend`)."""
        self.name, self.assignor, self.group = name, assignor, group
        #: Kafka's client for each java driver (``java``, ``java@3.4.0``), by client name;
        #: the clients whose release sends no generation; ``setup`` gives both for a client
        #: a join event names that the target string did not (a rolling upgrade's)
        self.classpaths, self.generationless = dict(classpaths or {}), set(generationless)
        self.setup, self.order = setup, list(clients)
        self.infos = {c: hello(c, self.classpaths.get(c, "")) for c in clients}
        self.timeouts = group_timeouts({i.name for i in self.infos.values()}, CONFIG)  # I11
        self.commit_styles = offered_styles(self.infos.values())  # every client's driver offers
        self.own_backend, self.own_pool = backend is None, pool is None
        self.backend = backend or make_backend(
            broker, frozenset(i.client for i in self.infos.values()), SESSION_MS, trace, nodes)
        self.static_membership = self.backend.fences_static_members and all(
            i.static_membership for i in self.infos.values())  # KIP-345, on both sides
        self.tells_errors = self.backend.aims_errors_at_members  # `GroupView.told`
        self.pool = pool or DriverPool()
        self.log = WireLog(lambda horizon: all(m.driver.drained(horizon)
                                               for m in self.members.values()))
        self.members: dict[str, WireMember] = {}
        self.turns: dict[str, str] = {}  # member name → client, fixed at its first join
        self.sources: dict[tuple[int, str], int] = {}  # (driver, member) → incarnation
        self.applied, self._incarnations = 0, 0  # entries shown, joins so far
        self._said: dict[str, str] = {}  # member → the error it showed last ('' since)
        self.described, self.shown_rounds = 0, set[int]()  # rounds judged on DescribeGroups
        self.shown = Shown()  # for the next view
        self.produced = collections.Counter[TopicPartition]()  # records acked, per partition
        self.deliveries = Deliveries()  # each view's cumulative `DeliveryLog` (I17)

    # --- drivers --------------------------------------------------------------------------

    def _on_event(self, driver: DriverProcess, message: DriverEvent) -> None:
        source = self.sources.get((id(driver), str(message.get("member", ""))), 0)
        self.log.receive(source, message)

    def client_of(self, member: str, spec: MemberSpec | None = None) -> ClientInfo:
        """The member's client: its join's, else the next in turn (fixed at its first join)."""
        if spec is not None and spec.client:
            self.turns[member] = spec.client
        elif member not in self.turns:
            self.turns[member] = self.order[len(self.turns) % len(self.order)]
        return self._info(self.turns[member])

    def _info(self, client: str) -> ClientInfo:
        if client not in self.infos:
            classpath, generationless = self.setup(client) if self.setup else ("", False)
            self.classpaths[client] = classpath
            self.generationless |= {client} if generationless else set()
            self.infos[client] = hello(client, classpath)
            self.static_membership &= self.infos[client].static_membership  # KIP-345
            self.commit_styles = offered_styles(self.infos.values())
            self.timeouts = group_timeouts({i.name for i in self.infos.values()}, CONFIG)
        return self.infos[client]

    # --- membership events ----------------------------------------------------------------

    @checked
    def join(self, member: str, spec: MemberSpec) -> None:
        info = self.client_of(member, spec)
        config = member_config(CONFIG, info, member, spec)  # refuses an impossible static one
        driver = self.pool.place(info, self.classpaths.get(info.name, ""), member,
                                 self._on_event)
        self._incarnations += 1
        self.sources[(id(driver), member)] = self._incarnations
        self.deliveries.styles[member] = spec.commit_style
        self.deliveries.revokes(member, "revoke" in info.commit_styles)
        assignors = list(spec.assignors) or [self.assignor]
        self.members[member] = WireMember(
            info, driver, self._incarnations, spec, frozenset(spec.topics),
            cooperative=all(a in COOPERATIVE_PROTOCOLS for a in assignors))
        try:
            driver.call("create", member=member, bootstrap=self.backend.bootstrap,
                        group=self.group, assignor=assignors[0], assignors=assignors,
                        topics=list(spec.topics), config=config)
        except CommandFailed as exc:  # the client would not start: shown, never in the group
            self.members.pop(member)
            self.pool.release(driver, member)
            self._failed(member, exc)

    def _failed(self, member: str, exc: CommandFailed) -> None:
        with self.log.cond:
            self.shown.errors.append((member, f"{self.client_of(member).name}: {exc}"))

    def _command(self, member: str, cmd: str, **fields: Any) -> None:
        """One client call; one the client refused is shown as the member's error (as the
        driver's error event says), a broken driver ends the run; a member never started: none."""
        if member not in self.members:
            return
        try:
            self.members[member].driver.call(cmd, member=member, **fields)
        except CommandFailed as exc:
            self._failed(member, exc)

    @checked
    def leave(self, member: str) -> None:
        self._command(member, "close")
        if (m := self.members.pop(member, None)) is not None:
            self.deliveries.end(m.source, time.monotonic_ns(), revoked=True)
            self.pool.release(m.driver, member)
            self.backend.forget(member)

    @checked
    def crash(self, member: str) -> None:
        """The consumer is gone without a word: no LeaveGroup, no heartbeat, and nothing it
        logs later is the application's."""
        m = self.members.get(member)
        if m is None:
            return
        if m.client.crash == "kill":
            self.pool.kill_alone(m.driver, member)  # refuses before anything happened
        else:
            m.driver.call("crash", member=member)
            self.pool.forget(m.driver, member)
        del self.members[member]
        self.deliveries.end(m.source, time.monotonic_ns(), revoked=False)
        self.backend.forget(member)

    @checked
    def stall(self, member: str) -> None:
        self._command(member, "stop_polling")
        if member in self.members:
            self.members[member].polling = False

    @checked
    def wake(self, member: str) -> None:
        self._command(member, "start_polling")
        if member in self.members:
            self.members[member].polling = True

    @checked
    def idle(self, ms: int) -> None:
        """Nothing is produced or asked for ``ms``: the members poll as on a quiet topic."""
        time.sleep(ms / 1000.0)

    @checked
    def slow_revoke(self, member: str) -> None:
        self._command(member, "slow_revoke", ms=SLOW_REVOKE_MS)

    @checked
    def subscribe(self, member: str, topics: tuple[str, ...]) -> None:
        if member in self.members:
            self.members[member].subscription = frozenset(topics)
        self._command(member, "subscribe", topics=list(topics))

    def unsubscribe(self, member: str) -> None:  # refused before anything runs
        raise ValueError("wire: unsubscribe is not judged (commits are not observed)")

    @checked
    def pause(self, member: str, partitions: tuple[TopicPartition, ...]) -> None:
        self._command(member, "pause", partitions=[list(tp) for tp in partitions])

    @checked
    def resume(self, member: str, partitions: tuple[TopicPartition, ...]) -> None:
        self._command(member, "resume", partitions=[list(tp) for tp in partitions])

    # --- metadata and records -------------------------------------------------------------

    @checked
    def set_partitions(self, topic: str, count: int) -> None:
        ensure_partitions(self.backend, topic, count)  # never shrinks a topic

    @checked
    def delete_topic(self, topic: str) -> None:
        self.backend.delete_topic(topic)
        for tp in [tp for tp in self.produced if tp[0] == topic]:
            del self.produced[tp]

    @checked
    def produce(self, topic: str, partition: int) -> None:
        """Nothing arrives on a partition the broker lacks (a shrunk story's). A harness
        producer whose metadata predates a topic's growth is replaced by a fresh one."""
        if partition < self.backend.topics.get(topic, 0):
            client = self.infos[self.order[0]].name
            self.pool.produce(client, self.classpaths.get(client, ""), self.backend.bootstrap,
                              topic, partition)
            self.produced[(topic, partition)] += 1

    # --- showing the log, one entry at a time ---------------------------------------------

    @checked
    def pending(self) -> int:
        with self.log.cond:
            self.log.release()
            return len(self.log.entries) - self.applied + len(self._new_rounds())

    def _new_rounds(self) -> list[GroupRound]:
        return [r for r in self.backend.rounds()
                if r.complete and r.generation not in self.shown_rounds]

    @checked
    def step(self, within_ms: int | None = None) -> bool:
        """Show the next entry or completed generation; with none, wait for one or for the
        group to settle, at most ``within_ms`` (a settle's bound, I11), else `STEP_WAIT`."""
        wait_s = STEP_WAIT if within_ms is None else max(within_ms, 0) / 1000
        deadline = time.monotonic() + wait_s
        with self.log.cond:
            while True:
                waiting = self.log.release()
                if len(self.log.entries) > self.applied:
                    self.applied += 1
                    if self._apply(self.log.entries[self.applied - 1]):
                        return True
                    continue
                if rounds := (self._new_rounds() if not waiting else []):
                    self._show_round(rounds[0])
                    return True
                self.check_harness()  # a thread of ours that failed while we waited
                check_alive({n: m.driver for n, m in self.members.items()})  # not I11
                if not waiting and not self._unsettled():
                    return True
                refused = "" if waiting else settle.refused_for_good(self.backend, self.members)
                if refused or time.monotonic() > deadline:  # a refusal no wait can end
                    self.shown.errors.append(("group", refused or settle.stalled(
                        self._unsettled(), self.backend, self.members, wait_s, SESSION_MS)))
                    return False
                self.log.cond.wait(TICK)

    def _apply(self, e: Entry) -> bool:
        """Show one entry; False for a member's error repeated with nothing from it between
        (a client that fails every poll alike waits on `STEP_WAIT`, not on a step count)."""
        m = self.members.get(e.member)
        if m is None or m.source != e.source:
            return True  # a member that left or crashed: its interval ended then
        return show_entry(self.shown, self._said, m, e)

    def _show_round(self, round_: GroupRound) -> None:
        self.shown_rounds.add(round_.generation)
        round_, described = as_described(
            self.backend, self.group, round_,
            lambda text: self.shown.errors.append(("group", text)))
        self.described += described
        given = given_before(self.backend.rounds(), round_,
                             self.timeouts.sync_request_timeout_ms)
        owned = owned_at(self.log.entries[:self.applied],
                         {n: m.source for n, m in self.members.items()}, round_.at_ns)
        rebalance: RebalanceRecord = record(round_, owned, given)
        self.shown.rebalances.append(replace(rebalance, generationless=frozenset(
            n for n, c in self.turns.items() if c in self.generationless)))

    # --- observation ----------------------------------------------------------------------

    def _unsettled(self) -> str:
        """Why the group is not settled ('' when it is); called with the log's lock held."""
        if len(self.log.entries) > self.applied or self.log.incoming:
            return "entries to show"
        return settle.unsettled(self.backend, self.members, self.shown_rounds) or \
            self._unread() or settle.unfenced(self.members, self.log.entries[:self.applied])

    def _unread(self, every: bool = False) -> str:
        """`settle.unread`: ``every`` member and partition, paused or stalled, for
        ``caught_up`` (I17 judges what is lost only once each owner could read it all)."""
        commits = settle.accepted_commits(self.backend, self.log.entries[:self.applied])
        ends = settle.read_to(self.backend, self.produced, commits)
        return settle.unread(self.members, ends, every)

    @checked
    def view(self) -> GroupView:
        with self.log.cond:
            settled = not self._unsettled()
            latest = latest_round(self.backend)
            listed = set(latest.names.values()) if latest else set()
            members = {n: member_view(n, m, n in listed) for n, m in self.members.items()}
            leader = latest.names.get(latest.leader) if latest else None
            p = self.shown
            self.deliveries.take(self.log.entries)
            rounds = sum(1 for r in self.backend.rounds() if r.complete)
            view = GroupView(rounds, "Stable" if settled else "Rebalancing", leader,
                             dict(self.backend.topics), members, settled,
                             tuple(p.callbacks), tuple(p.rebalances), tuple(p.records),
                             tuple(p.errors), subscribe_calls=tuple(p.subscribes),
                             pause_calls=tuple(p.pauses), told=tuple(self.backend.told()),
                             raised=tuple(p.raised), rejoins=tuple(self.backend.rejoins()),
                             delivery=self.deliveries.log(self.backend, self.produced, settled
                                                          and not self._unread(every=True)))
            p.clear()
        self.check_harness()  # nothing it shows is judged if the harness failed meanwhile
        return view

    def check_harness(self) -> None:
        """Raise the first failure of a harness thread (a driver's reader, the pool's, the
        backend's steering, broker or proxy) as a `HarnessError` (see the module docstring)."""
        failure = self.pool.failure() or self.backend.failure()
        if failure is not None:
            raise failure.error()

    def close(self) -> None:
        """Shut every driver down (bounded; one that hangs is killed), then the backend;
        given a caller's pool or backend, close this group's members only (side by side);
        raise a thread's failure in closing (one before was raised by a call)."""
        failed_before = bool(self.pool.failure() or self.backend.failure())
        members, self.members = self.members, {}
        if self.own_pool:
            self.pool.close()
        else:
            close_members(self.pool, {n: m.driver for n, m in members.items()})
        if self.own_backend:
            self.backend.close()
        if not failed_before:
            self.check_harness()

