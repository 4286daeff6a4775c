"""Many clients at once on groupcheck's broker: one big group of mixed clients, many groups side
by side, and members whose drivers are SIGKILLed at seeded moments; every group judged as
every wire run is, its settles timed, the broker's requests counted.

Theory of operation. A `LoadScenario` lists its groups (`GroupPlan`: a group id, the client of
each member in join order, the assignor, how many members a SIGKILL ends) and whether its
drivers are shared (one driver per client for every member of the run: one JVM for all the
Java consumers; a member of a client that crashes by kill then cannot crash alone, so a
scenario with kills gives each such member a driver of its own). `plan` turns each group into
an event list, seeded: its topic (two partitions a member), each member's join naming its
client, a settle; each kill is a seeded number of protocol steps (``poll``) and a ``crash``,
which SIGKILLs the member's driver, at a seeded point of the joins or after the group settled,
each followed by a settle. `run` starts one broker whose listener counts every request it
answers, one `DriverPool`, and a `WireGroup` per group (its own group id on that broker, a
backend scoped to it), and plays each group's events on a thread of its own through
`model.replay.replay_events`: the model judges every event (I1 to I11), as for any wire run.
A settle is timed from the end of the event before it (the last join, or the kill) to the
group settled. A group's verdict is ``holds`` or its first violation (saved as a replay file
when a folder is given). Anything a group's thread raises — a harness error, such as a driver
that died behind the harness's back, or any other exception of ours — ends the whole run
with a `HarnessError` naming that group's thread once every group has stopped: no verdict
is drawn from a run whose harness failed. Nothing waits unbounded: a wire group's commands
and steps have the member-driver contract's bounds (a settle, the model's step budget), a
dead driver ends its group's run at once, and `settle_bound` is what a settle may take, from
the protocol's timeouts (the opt-in tests hold every settle to it).
"""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.event_types import Crash, Join
from ..model.events import MAX_SETTLE_GENERATIONS, DomainEvent
from ..model.group_events import Partitions, Poll, Settle
from ..model.replay import replay_events, save
from ..properties.harness import Failures
from ..targets.registry import client_setup
from ..targets.settings import Settings
from ..targets.wire.backends.groupcheck_broker import GroupcheckBackend, start_broker
from ..targets.wire.clients import ClientInfo, hello
from ..targets.wire.driver_pool import DriverPool
from ..targets.wire.wire_group import CONFIG, WireGroup
from .many_clients_json import ScenarioJson, SettleStats

if TYPE_CHECKING:  # the broker imports kio: loaded only when a run starts one
    from ..broker import Broker

__all__ = ["GroupPlan", "GroupResult", "RequestCounter", "LoadScenario", "ScenarioResult", "plan",
           "run", "settle_bound"]

PARTITIONS_PER_MEMBER = 2
#: exchanges the run's broker keeps (the counter hears every one; nothing here reads the
#: log, and a long run of fifty consumers would otherwise hold 100,000 of them)
LOG_LIMIT = 1000
RSS_EVERY = 0.5  # seconds between two samples of the drivers' memory
#: at most this many protocol steps before a kill: a kill lands anywhere in a rebalance of a
#: few members (each member logs a callback start and end per rebalance)
MAX_STEPS_BEFORE_KILL = 12


def settle_bound() -> float:
    """Seconds a settle may take on the wire config: a member killed without a word is
    noticed at its session timeout, then each rebalance the model allows a settle
    (`MAX_SETTLE_GENERATIONS`, plus one) may wait up to the rebalance timeout (the
    member's ``max.poll.interval.ms``) for a member slow to rejoin."""
    session = int(CONFIG["session_timeout_ms"])
    rebalance = int(CONFIG["max_poll_interval_ms"])
    return (session + (MAX_SETTLE_GENERATIONS + 1) * rebalance) / 1000.0


@dataclass(frozen=True)
class GroupPlan:
    group: str
    clients: tuple[str, ...]  # each member's client, in join order
    assignor: str
    kills: int = 0
    topic: str = "t0"  # the group's own topic (``t<n>``, a name the findings' shapes read)

    @property
    def target(self) -> str:
        """The wire target a replay file of this group names (its joins name each client)."""
        names = list(dict.fromkeys(self.clients))
        kind = f"mixed:{'+'.join(names)}" if len(names) > 1 else names[0]
        return f"wire:{kind}:{self.assignor}"


@dataclass(frozen=True)
class LoadScenario:
    name: str
    groups: tuple[GroupPlan, ...]
    shared_drivers: bool
    seed: int = 0

    @property
    def members(self) -> int:
        return sum(len(g.clients) for g in self.groups)


@dataclass
class GroupResult:
    group: str
    clients: tuple[str, ...]
    verdict: str  # "holds" or the first violation
    join_settles: list[float] = field(default_factory=list)  # after the joins
    kill_settles: list[float] = field(default_factory=list)  # after a kill
    seconds: float = 0.0
    replay: str | None = None
    late: int = 0  # events shown after a later one (`log.WireLog.late`)
    topic: str = "t0"

    @property
    def plain(self) -> str:
        """The verdict as one group of its own would read (``g04-c2`` → ``c2``, ``t4-0`` →
        ``t0-0``), so that groups failing alike read alike."""
        return self.verdict.replace(f"{self.group}-", "").replace(f"{self.topic}-", "t0-")


@dataclass
class ScenarioResult:
    scenario: LoadScenario
    groups: list[GroupResult]
    seconds: float
    requests: Counter[str]
    drivers: int = 0  # driver processes started
    driver_rss_mb: float = 0.0  # their resident memory at its peak (sampled)

    @property
    def rate(self) -> float:
        """The broker's answered requests a second over the run."""
        return sum(self.requests.values()) / self.seconds if self.seconds else 0.0

    def settles(self, kind: str) -> list[float]:
        return [s for g in self.groups for s in getattr(g, f"{kind}_settles")]

    def verdict(self) -> str:
        """``holds`` when every group held, else each distinct verdict with its count."""
        counts = Counter(g.plain for g in self.groups)
        if set(counts) == {"holds"}:
            return "holds"
        return "; ".join(f"{n}× {v}" for v, n in counts.most_common())

    def to_json(self) -> ScenarioJson:
        def stats(values: list[float]) -> SettleStats | None:
            return {"median": round(statistics.median(values), 3),
                    "max": round(max(values), 3)} if values else None

        return {"scenario": self.scenario.name, "seed": self.scenario.seed,
                "members": self.scenario.members, "groups": len(self.groups),
                "shared_drivers": self.scenario.shared_drivers,
                "join_settle_s": stats(self.settles("join")),
                "kill_settle_s": stats(self.settles("kill")),
                "seconds": round(self.seconds, 2), "requests": dict(self.requests),
                "requests_per_s": round(self.rate, 1), "verdict": self.verdict(),
                "drivers": self.drivers, "driver_rss_mb": round(self.driver_rss_mb),
                "by_group": [{"group": g.group, "clients": list(g.clients),
                              "verdict": g.verdict, "replay": g.replay, "late": g.late}
                             for g in self.groups]}


class RequestCounter:
    """The broker's listener: every answered request, by API key, on the broker's loop."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, exchange: Any) -> None:
        with self._lock:
            self.counts[str(exchange.api_key)] += 1

    def take(self) -> Counter[str]:
        """The counts so far, and start again from zero."""
        with self._lock:
            counts, self.counts = self.counts, Counter()
        return counts


def plan(g: GroupPlan, rng: random.Random, infos: dict[str, ClientInfo]) -> list[DomainEvent]:
    """A group's events: its topic, the joins (some kills among them, at seeded points), a
    settle, then the other kills, each followed by a settle. A victim is a member of a client
    that crashes by kill (its crash is a SIGKILL) that has joined and is not dead yet, drawn
    with ``rng``; ``infos``: each client's ``hello``."""
    topic = g.topic
    names = [f"{g.group}-c{i + 1}" for i in range(len(g.clients))]
    mortal = [n for n, c in zip(names, g.clients, strict=True) if infos[c].crash == "kill"]
    if g.kills > len(mortal):
        raise ValueError(f"{g.group}: {g.kills} kills, but only {len(mortal)} members crash "
                         "by kill")
    events: list[DomainEvent] = [Partitions(topic, PARTITIONS_PER_MEMBER * len(names))]
    during = rng.randint(0, g.kills)  # how many kills land among the joins
    at = rng.sample(range(1, len(names) + 1), min(during, len(names)))
    killed: list[str] = []

    def kill(joined: list[str]) -> list[DomainEvent]:
        alive = [n for n in joined if n in mortal and n not in killed]
        if not alive:
            return []
        killed.append(rng.choice(alive))
        return [Poll(rng.randint(0, MAX_STEPS_BEFORE_KILL)), Crash(killed[-1])]

    for i, (name, client) in enumerate(zip(names, g.clients, strict=True), 1):
        events.append(Join(name, (topic,), (g.assignor,), client=client,
                           profile=infos[client].profile))
        if i in at:
            events += kill(names[:i])
    events.append(Settle())
    while len(killed) < g.kills:
        events += [*kill(names), Settle()]
    return events


def _infos(scenario: LoadScenario, settings: Settings) -> tuple[dict[str, ClientInfo],
                                                            dict[str, str]]:
    """Each client's ``hello`` and classpath; `ValueError` when a client lacks the assignor
    its group asks for (checked before anything runs)."""
    infos: dict[str, ClientInfo] = {}
    classpaths: dict[str, str] = {}
    for g in scenario.groups:
        for client in dict.fromkeys(g.clients):
            if client not in infos:
                classpaths[client] = client_setup(client, settings)[0]
                infos[client] = hello(client, classpaths[client])
            if g.assignor not in infos[client].assignors:
                raise ValueError(f"{g.group}: {client} has no {g.assignor} (it has "
                                 f"{', '.join(infos[client].assignors)})")
    return infos, classpaths


@dataclass
class _Timer:
    """Each event's end, for the settles' times."""

    ends: list[float] = field(default_factory=list)

    def __call__(self, _number: int, _view: Any) -> None:
        self.ends.append(time.monotonic())


def _play(g: GroupPlan, events: list[DomainEvent], broker: Broker, pool: DriverPool,
          classpaths: dict[str, str], failures: Path | None, seed: int) -> GroupResult:
    """One group's events on its own wire group of the shared broker, judged and timed."""
    began = time.monotonic()
    result = GroupResult(g.group, g.clients, "holds", topic=g.topic)
    timer = _Timer([began])
    group = WireGroup(g.target, tuple(dict.fromkeys(g.clients)), g.assignor,
                      classpaths=classpaths, group=g.group, pool=pool,
                      backend=GroupcheckBackend(frozenset(g.clients),
                                                int(CONFIG["session_timeout_ms"]), broker,
                                                g.group))
    outcome = replay_events(group, events, on_event=timer)
    result.late = group.log.late
    timed = outcome.events_run - (1 if outcome.violations else 0)  # a failed settle: no time
    for i, event in enumerate(events[:timed]):
        if isinstance(event, Settle) and i + 1 < len(timer.ends):
            kind = "kill" if isinstance(events[i - 1], Crash) else "join"
            getattr(result, f"{kind}_settles").append(timer.ends[i + 1] - timer.ends[i])
    if outcome.violations:
        result.verdict = outcome.violations[0]
        if failures is not None:
            result.replay = str(save(failures, g.target, events[:outcome.events_run],
                                     outcome.violations, seed, {
                                         "story": outcome.story,
                                         "wire_log": _log_lines(group)}))
    result.seconds = time.monotonic() - began
    return result


def _log_lines(group: WireGroup) -> list[str]:
    """The group's merged driver log, one line an entry (the evidence behind a failure;
    replay reads only the events)."""
    first = group.log.entries[0].ts if group.log.entries else 0
    shown = [f"#{e.seq} +{(e.ts - first) / 1e6:.1f}ms {e.member} {e.kind} {e.phase} "
             f"gen {e.generation} {' '.join(f'{t}-{p}' for t, p in e.partitions)} {e.text}"
             for e in group.log.entries]
    waiting = [f"(not shown yet) +{(i.ts - first) / 1e6:.1f}ms {i.message}"
               for i in sorted(group.log.incoming)]
    return [line.rstrip() for line in shown + waiting]


def run(scenario: LoadScenario, settings: Settings, failures: Path | None = None) -> ScenarioResult:
    """Play every group of ``scenario`` at once on one broker (see the module docstring)."""
    infos, classpaths = _infos(scenario, settings)
    rng = random.Random(scenario.seed)
    stories = [(g, plan(g, rng, infos)) for g in scenario.groups]
    counter = RequestCounter()
    broker = start_broker(log_limit=LOG_LIMIT, listener=counter)
    pool = DriverPool(shared=scenario.shared_drivers)
    results: dict[str, GroupResult] = {}
    threads_failed = Failures()
    try:
        counter.take()  # from here on, the run's requests
        began = time.monotonic()

        def play(g: GroupPlan, events: list[DomainEvent]) -> None:
            results[g.group] = _play(g, events, broker, pool, classpaths, failures,
                                     scenario.seed)

        threads = [threading.Thread(target=threads_failed.guard(f"group-{story[0].group}", play),
                                    args=story, name=f"group-{story[0].group}")
                   for story in stories]
        for thread in threads:
            thread.start()
        peak = 0.0
        for thread in threads:  # the drivers' memory sampled while the groups run
            while thread.is_alive():
                peak = max(peak, sum(_rss_mb(d.proc.pid) for d in list(pool.drivers)))
                thread.join(RSS_EVERY)
        seconds = time.monotonic() - began
        requests = counter.take()
        drivers = len(pool.drivers)
    finally:
        pool.close()
        broker.close()
    threads_failed.check()  # a group's thread raised: the run is groupcheck's own error
    return ScenarioResult(scenario, [results[g.group] for g in scenario.groups], seconds,
                          requests, drivers, peak)


def _rss_mb(pid: int) -> float:
    """A live process's resident memory (Linux ``/proc``; 0 where it cannot be read)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    found = [line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")]
    return int(found[0]) / 1024 if found else 0.0


#: the clients that share an assignor (range) in one group; KafkaJS joins with the protocol
#: name RoundRobinAssigner, which no other client offers, so it runs in groups of its own
RANGE_CLIENTS = ("librdkafka", "kafka-python", "aiokafka", "java")
#: the clients whose cooperative-sticky holds in a mixed group (aiokafka and KafkaJS have
#: none; kafka-python's sends no generation with its claims, a known finding, I6)
COOPERATIVE_CLIENTS = ("librdkafka", "java")


def _spread(clients: tuple[str, ...], members: int, rng: random.Random) -> tuple[str, ...]:
    """``members`` clients taken from ``clients`` in turn, in a seeded join order."""
    picked = [clients[i % len(clients)] for i in range(members)]
    rng.shuffle(picked)
    return tuple(picked)


def scenarios(seed: int = 0, members: int = 50, groups: int = 20, group_size: int = 3,
              kill_groups: int = 4, kills: int = 2) -> dict[str, LoadScenario]:
    """The scenarios of ``bench/many_clients.py`` and the opt-in wire tests, by name: one
    group of ``members`` mixed clients on range, and on cooperative-sticky; ``groups``
    groups of ``group_size`` at once (every fifth a KafkaJS group on its round robin, the
    others mixed on range); ``kill_groups`` groups of five mixed members, ``kills`` of each
    SIGKILLed at seeded moments (each member in a driver of its own)."""
    rng = random.Random(seed)
    many = tuple(
        GroupPlan(f"g{i:02d}", ("kafkajs",) * group_size, "roundrobin", topic=f"t{i}")
        if i % 5 == 4 else
        GroupPlan(f"g{i:02d}", _spread(RANGE_CLIENTS[i % 4:] + RANGE_CLIENTS[:i % 4],
                                       group_size, rng), "range", topic=f"t{i}")
        for i in range(groups))
    killed = tuple(GroupPlan(f"k{i:02d}", _spread(RANGE_CLIENTS, 5, rng), "range", kills,
                             f"t{i}") for i in range(kill_groups))
    return {
        "one-group-range": LoadScenario("one-group-range", (GroupPlan(
            "big", _spread(RANGE_CLIENTS, members, rng), "range"),), True, seed),
        "one-group-cooperative": LoadScenario("one-group-cooperative", (GroupPlan(
            "bigcoop", _spread(COOPERATIVE_CLIENTS, members, rng), "cooperative-sticky"),),
            True, seed),
        "many-groups": LoadScenario("many-groups", many, True, seed),
        "sigkill": LoadScenario("sigkill", killed, False, seed)}
