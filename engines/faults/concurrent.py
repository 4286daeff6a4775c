"""Fault points played side by side: up to ``workers`` at once, each on a group of its own on
one groupcheck broker.

What lives here: `SharedRun` (the broker, the driver pool and what each point's wire group is
made of), `PointPool` (one point's drivers), `PointGroup` (a point's group), `PointRun` (one
point's story, its outcome and when each event ended) and `play_points` (the points on a
`SharedRun`, side by side), `PointBackend` (a point's part of the broker).

Theory of operation: a point's story runs on a fresh group as it would alone — its own group
id (``groupcheck-<number>``), members and topic named apart (`stories.PointNames.of`: the broker
aims a fault at a client id, so no two points share one) — but on a broker that outlives it,
of `NODES` nodes (a move point moves its own group's coordinator, no other's).
A target whose clients all crash by kill (librdkafka, kafka-python, Java) gets a pool per point
(`PointPool`): the member its story crashes has a driver of its own, so that its crash ends
it alone; the point's other members of a client of `SHARE_A_DRIVER` share one driver, the
run's for a client of `RUN_DRIVER` (one JVM hosts every point's Java consumers, closed without
a wait once their point is judged), the point's own otherwise (librdkafka); kafka-python's
members have one each. Records are written by one producer for the whole run. A target with
a client that crashes by command (aiokafka) places every member on the run's one pool.
A steering rule the broker refuses (an error the member's version cannot carry) makes its
own point not applicable, not the points beside it (`PointBackend`). Each worker takes
the next point, asks ``start`` whether it may (the budget, a finding so far), plays it and
hands its `PointRun` to ``done``; what a worker raises (a `HarnessError`: the broker or a
driver failed) stops every worker from starting another point and is raised once all have
stopped. The group is judged as every wire story is (`model.replay.replay_events`), so a
point's verdict does not depend on the points beside it. A point still under way when the
caller says it is ``overdue`` (its engine's time is over) is abandoned: the run's
``abandon`` event makes its group raise `Abandoned` at its next wait, and it counts as not
reached (a story waiting out a settle's bound would otherwise hold the engines after it).
Once its story is over and judged, a point's members are crashed (their drivers killed, or
on the run's JVM closed without a wait), not closed: a client a fault left failed
(librdkafka after FENCED_INSTANCE_ID) can take the driver's whole command timeout to close.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ...model.events import DomainEvent
from ...model.group_events import Delay
from ...model.machine_config import wire_config
from ...model.replay import Outcome, replay_events
from ...model.stats import Stats
from ...properties.harness import HarnessError, ThreadFailure
from ...targets.target import Target
from ...targets.wire.backends.factory import MOVE_NODES
from ...targets.wire.backends.groupcheck_broker import GroupcheckBackend, start_broker
from ...targets.wire.clients import ClientInfo
from ...targets.wire.driver_pool import DriverPool, EventSink
from ...targets.wire.driver_process import DriverProcess
from ...targets.wire.wire_group import CONFIG, WireGroup
from .points import FULL, FaultPoint, fault_points
from .stories import PointNames, crashed, protocol_assignor, story

if TYPE_CHECKING:  # the broker imports kio: loaded only when a run starts one
    from ...broker import Broker

__all__ = ["LOG_LIMIT", "NODES", "REFUSALS", "RUN_DRIVER", "SHARE_A_DRIVER", "Abandoned",
           "PointBackend", "PointGroup", "PointPool", "PointRun", "SharedRun", "delayed",
           "play_points"]

#: exchanges the shared broker keeps: far more than the points under way at once exchange
#: (a wire group reads the log on every tick of a wait, so a longer one costs CPU)
LOG_LIMIT = 20_000
#: the clients whose members of one point share a driver: librdkafka and Kafka's Java client
#: run the protocol in threads of their own (outside the interpreter's lock; a JVM hosts many
#: consumers, as applications run them); kafka-python's members sharing one interpreter
#: rejoin at other moments (a cooperative group's I6 went unseen), so each keeps a driver of
#: its own
SHARE_A_DRIVER = frozenset({"librdkafka", "java"})
#: the clients whose members of every point share one driver for the whole run: a JVM hosts
#: consumers side by side, and a judged point's are closed without a wait (Java's
#: ``close(Duration.ZERO)``); librdkafka's close can take its command timeout (a member
#: fenced by FENCED_INSTANCE_ID), so its drivers end with their point, killed
RUN_DRIVER = frozenset({"java"})
#: the nodes of the shared broker: two, so that a move point's coordinator has a node to move to
#: (each move moves its own point's group only); a replay of such a story gets as many
NODES = MOVE_NODES
#: where the broker records a steering rule it refused (`broker.connections.Notes.refused`)
REFUSALS = "groupcheck-broker (steering)"
#: seconds between two looks at whether the points under way are overdue
OVERDUE_TICK = 0.1


class Abandoned(Exception):
    """A point's group was told to stop: its engine's time is over; the point is not played."""


@dataclass
class PointRun:
    """A point played (``outcome``), not applicable (why), or not reached (None)."""

    point: FaultPoint
    events: list[DomainEvent] = field(default_factory=list)
    outcome: Outcome | str | None = None
    began: float = 0.0  # time.perf_counter() when its group was made
    ends: list[float] = field(default_factory=list)  # when each event ended
    closed: float = 0.0  # when its group was closed
    stats: Stats = field(default_factory=Stats)


class PointPool(DriverPool):
    """The drivers of one point whose clients all crash by kill: the members of a client of
    `SHARE_A_DRIVER` on one driver (of `RUN_DRIVER`: the run's, ``run``'s, hosting every
    point's), but a member the story crashes on one of its own; its records are written by
    the run's producer (started once for every point)."""

    def __init__(self, crashing: frozenset[str], run: DriverPool) -> None:
        super().__init__()
        self.crashing, self.run = crashing, run
        self.on_run: set[str] = set()  # the members placed on the run's driver

    def produce(self, client: str, classpath: str, bootstrap: str, topic: str,
                partition: int) -> None:
        self.run.produce(client, classpath, bootstrap, topic, partition)

    def place(self, info: ClientInfo, classpath: str, member: str,
              sink: EventSink) -> DriverProcess:
        shares = member not in self.crashing and info.client in SHARE_A_DRIVER
        placed = replace(info, crash="command") if shares else info
        if shares and info.client in RUN_DRIVER:
            self.on_run.add(member)
            return self.run.place(placed, classpath, member, sink)
        return super().place(placed, classpath, member, sink)

    # a member on the run's driver is the run pool's to forget, release and count
    def forget(self, driver: DriverProcess, member: str) -> None:
        (self.run.forget if member in self.on_run else super().forget)(driver, member)

    def release(self, driver: DriverProcess, member: str) -> None:
        (self.run.release if member in self.on_run else super().release)(driver, member)

    def hosts_others(self, driver: DriverProcess, member: str) -> bool:
        return (self.run.hosts_others if member in self.on_run
                else super().hosts_others)(driver, member)

    def end(self, hosted: dict[str, DriverProcess]) -> None:
        """SIGKILL every driver of the point's own (its members vanish without a word), and
        close each of ``hosted`` (member → driver) on the run's driver at once, unawaited
        (`close` with ``timeout_ms`` 0: the story is judged, only the JVM's threads go)."""
        for driver in list(self.drivers):
            driver.kill()
        for member, driver in hosted.items():
            if member in self.on_run:
                self.run.forget(driver, member)
                if driver.alive:
                    driver.tell("close", member=member, timeout_ms=0)


class PointBackend(GroupcheckBackend):
    """A point's part of the shared broker, whose failures are its own: a steering rule the
    broker refused names its member, so it is the failure of that member's point alone (the
    point is not applicable), never of the points beside it."""

    def __init__(self, clients: frozenset[str], broker: Broker, group: str,
                 members: tuple[str, ...]) -> None:
        super().__init__(clients, int(CONFIG["session_timeout_ms"]), broker, group)
        self.members = frozenset(f"{m!r}" for m in members)

    def failure(self) -> ThreadFailure | None:
        return self.failures.first or next(
            (f for f in self.broker.failures.all() if not self._anothers(f)), None)

    def _anothers(self, failure: ThreadFailure) -> bool:
        return failure.thread == REFUSALS and not any(m in failure.message
                                                     for m in self.members)


class PointGroup(WireGroup):
    """A point's wire group, ended as a crash ends its members: the story is over and judged,
    so no member's client is asked to leave (a client a fault left failed can take its whole
    command timeout to close). Once ``abandon`` is set, its next call or wait raises
    `Abandoned`."""

    def __init__(self, *args: Any, abandon: threading.Event, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.abandon, self.closing = abandon, False

    def check_harness(self) -> None:
        if self.abandon.is_set() and not self.closing:
            raise Abandoned(f"{self.group}: abandoned, its engine's time is over")
        super().check_harness()

    def close(self) -> None:
        self.closing = True
        try:
            if isinstance(self.pool, PointPool):
                self.pool.end({n: m.driver for n, m in self.members.items()})
                self.members = {n: m for n, m in self.members.items()
                                if n not in self.pool.on_run}
            else:
                for member in list(self.members):
                    self.crash(member)
        finally:
            super().close()
            if isinstance(self.pool, PointPool):
                self.pool.close()


class SharedRun:
    """One broker and one driver pool for every point of a wire target's run."""

    def __init__(self, target: Target) -> None:
        assert target.group is not None
        model = target.group()  # what each point's group is made of (its target's)
        model.close()
        if not isinstance(model, WireGroup):
            raise ValueError(f"{target.name}: not a wire group")
        self.target, self.model = target, model
        self.numbers = {p: n for n, p in enumerate(fault_points(FULL))}
        self.plays_alone = itertools.count(len(self.numbers))  # no fault: a number a play
        self.broker = start_broker(nodes=NODES, log_limit=LOG_LIMIT)
        self.pool = DriverPool()
        self.abandon = threading.Event()  # set: every point under way stops (`Abandoned`)
        #: every client crashes by kill: each point gets a pool of its own (`PointPool`)
        self.kills = all(i.crash == "kill" for i in model.infos.values())

    def number(self, point: FaultPoint) -> int:
        """The number of this play of ``point``: the point's own in the full scope; a new
        one at each play of a story with no fault (`points.no_fault`), which may be played
        more than once."""
        return next(self.plays_alone) if point.kind == "none" else self.numbers[point]

    def group(self, point: FaultPoint, number: int) -> WireGroup:
        """A fresh group for play ``number`` of ``point`` on the shared broker and pool
        (`PointGroup`)."""
        m, group_id, names = self.model, f"groupcheck-{number}", PointNames.of(number)
        clients = tuple(m.order)
        pool = PointPool(crashed(point, names), self.pool) if self.kills else self.pool
        backend = PointBackend(frozenset(i.client for i in m.infos.values()), self.broker,
                               group_id, names.members)
        return PointGroup(m.name, clients, m.assignor, classpaths=m.classpaths,
                         generationless=frozenset(m.generationless), setup=m.setup,
                         group=group_id, backend=backend, pool=pool, abandon=self.abandon)

    def late(self, point: FaultPoint) -> float:
        """Seconds the point's late answers add (0 for a point no story plays)."""
        assert self.target.assignor
        client = self.model.infos[self.model.order[0]].name
        events = story(point, client, protocol_assignor(point.protocol, self.target.assignor))
        return 0.0 if isinstance(events, str) else delayed(events)

    def play(self, point: FaultPoint, fits: Callable[[float], bool]) -> PointRun:
        """``point`` on a fresh group (`PointRun`); not reached when its late answers do not
        ``fit`` the time left."""
        run = PointRun(point, began=time.perf_counter())
        number = self.number(point)
        group, target, names = self.group(point, number), self.target, PointNames.of(number)
        assert target.hints is not None and target.assignor
        info = group.client_of(names.members[0])
        assignor = protocol_assignor(point.protocol, target.assignor)
        if assignor not in info.assignors:
            group.close()
            run.outcome = f"{info.name} has no {assignor} assignor ({point.protocol} rebalances)"
            return run
        events = story(point, info.name, assignor, names, info.commit_styles)
        if isinstance(events, str) or not fits(delayed(events)):
            group.close()
            run.outcome = events if isinstance(events, str) else None
            return run
        run.events = events
        config = wire_config(target.hints.assignor, steering=True,
                             profiles=target.hints.profiles)
        try:
            run.outcome = replay_events(group, events, config.promises,
                                        target.hints.generations, stats=run.stats,
                                        on_event=lambda _i, _v: run.ends.append(
                                            time.perf_counter()))
        except Abandoned:
            run.outcome = None  # not reached: its group closed as the replay ended
            return run
        except (ValueError, HarnessError) as exc:  # the broker refused the fault at the
            if "refused" not in str(exc):          # version the member speaks
                raise
            run.outcome = str(exc).splitlines()[0]
        run.closed = time.perf_counter()
        return run

    def close(self) -> None:
        self.pool.close()
        self.broker.close()


def delayed(events: list[DomainEvent]) -> float:
    """Seconds the story's late answers add."""
    return sum(e.ms for e in events if isinstance(e, Delay)) / 1000


def play_points(run: SharedRun, points: Iterable[FaultPoint], workers: int,
                start: Callable[[FaultPoint], bool], fits: Callable[[float], bool],
                done: Callable[[PointRun], None],
                overdue: Callable[[], bool] = lambda: False) -> None:
    """Each point that ``start`` lets begin, up to ``workers`` at once, each handed to
    ``done`` (under a lock) as it ends; ``points`` is read under that lock, as each is taken.
    Once ``overdue`` says so, the points under way are abandoned (``run.abandon``). A
    worker's failure is raised when all have stopped."""
    queue: Iterator[FaultPoint] = iter(points)
    lock, failed = threading.Lock(), list[BaseException]()

    def work() -> None:
        while True:
            with lock:
                point = next(queue, None)
                if point is None or failed or not start(point):
                    return
            try:
                played = run.play(point, fits)
            except BaseException as exc:  # raised in the caller's thread below
                with lock:
                    failed.append(exc)
                return
            with lock:
                done(played)

    threads = [threading.Thread(target=work, name=f"fault-point-{i}", daemon=True)
               for i in range(max(1, workers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(OVERDUE_TICK)
            if overdue():
                run.abandon.set()
    if failed:
        raise failed[0]
