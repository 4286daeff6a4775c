"""The fault engine's pace, per client: seconds per fault point, the full scope's projected
time, and where a point's time goes.

For each client (``wire:<client>:<assignor>`` on groupcheck's broker) and each ``--workers``
value (0: the engine as it was, one point at a time, each on a broker and driver pool of its
own), a sample of the full scope — ``--sample`` points drawn with seed 0, played in the
scope's order — is played as the engine plays it (`engines.faults.concurrent`:
one broker, one driver pool, ``workers`` points at once), each point to its end whatever it
found. Per played point: its seconds from its group made to its group closed (median, p90),
and where they went (medians): ``join`` (the topic, the joins and the first settle, up to
the fault), ``fault`` (the fault and the step's own event: a join, a leave, a crash),
``settle`` (the last settle) and ``close``. ``projected`` is the sample's wall time scaled
to the full scope (a point not applicable costs next to nothing, so the sample's share of
them stands for the scope's). The last two columns: CPU seconds per played point of the
harness's process (with the broker) and of the member drivers. Every point must get a
verdict: ``found`` counts the points that found something (each a real finding of the
engine, not a failure here).

With ``--full OUT`` the full scope is played instead, to its end, on each client (at the
first ``--workers`` value, 0 for the engine's own choice; ``java@lines``: the newest release
of each of Kafka's major lines the Maven repository holds, ``java@all`` every release it
holds; ``--budget`` seconds per client, the scope's end by default), every finding saved as a
replay file in OUT.

    python bench/faults.py [--clients librdkafka,java@3.8.0,kafka-python,kafkajs:roundrobin]
                           [--assignor range]
                           [--sample 24] [--workers 0,1,4] [--full OUT]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

from groupcheck.engines.battery.faults import play_scope
from groupcheck.engines.faults.concurrent import PointRun, SharedRun, play_points
from groupcheck.engines.faults.points import FaultPoint, fault_points
from groupcheck.engines.faults.stories import PointNames
from groupcheck.model.group_events import (
    ConnectionClosed,
    CoordinatorError,
    CoordinatorMoved,
    Delay,
)
from groupcheck.model.replay import Outcome
from groupcheck.targets.processes.maven_repo import releases
from groupcheck.targets.registry import resolve
from groupcheck.targets.settings import Settings
from groupcheck.targets.wire.clients import missing
from groupcheck.targets.wire.wire_group import WireGroup

PHASES = ("join", "fault", "settle", "close")
#: the events a point's fault is one of
FAULT_EVENTS = (CoordinatorError, Delay, ConnectionClosed, CoordinatorMoved)
FULL_BUDGET = 6 * 3600.0  # seconds: the full scope is played to its end


def phases(run: PointRun) -> dict[str, float]:
    """Where a played point's seconds went (a story cut short by a finding: what it ran)."""
    at = next(i for i, e in enumerate(run.events) if isinstance(e, FAULT_EVENTS))
    ends = [run.began, *run.ends]  # ends[i]: when event i (from 1) ended
    last = len(ends) - 1

    def span(a: int, b: int) -> float:
        return ends[min(b, last)] - ends[min(a, last)]

    return {"join": span(0, at), "fault": span(at, at + 2), "settle": span(at + 2, last),
            "close": run.closed - ends[last]}


def p90(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.9 * len(values)) - 1)]


class FreshRun(SharedRun):
    """The engine as it was: each point on a group of its own broker and driver pool, its
    members and topic named as the story's defaults."""

    def group(self, point: FaultPoint) -> WireGroup:
        assert self.target.group is not None
        group = self.target.group()
        assert isinstance(group, WireGroup)
        return group

    def names(self, point: FaultPoint) -> PointNames:
        return PointNames()


def _tell(run: PointRun) -> None:
    """One line on stderr per point as it ends."""
    if not isinstance(run.outcome, Outcome):
        print(f"  {run.point.name} not applicable: {run.outcome}", file=sys.stderr, flush=True)
        return
    verdict = run.outcome.violations[:1] or "holds"
    print(f"  {run.point.name} {run.closed - run.began:.1f}s {verdict}", file=sys.stderr,
          flush=True)


def _cpu() -> tuple[float, float]:
    """CPU seconds so far of this process (the harness, the broker) and of its children
    that ended (the member drivers)."""
    me, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime, children.ru_utime + children.ru_stime


def bench(target_name: str, settings: Settings, sample: int, workers: int) -> str:
    """One row; ``workers`` 0: the points one at a time, each on a fresh broker and pool."""
    target = resolve(target_name, settings=settings)
    scope = fault_points()
    picked = sorted(random.Random(0).sample(scope, min(sample, len(scope))), key=scope.index)
    runs: list[PointRun] = []
    started, cpu = time.perf_counter(), _cpu()
    shared = (FreshRun if workers == 0 else SharedRun)(target)
    try:
        play_points(shared, picked, max(1, workers), lambda _p: True, lambda _s: True,
                    lambda run: (runs.append(run), _tell(run)))
    finally:
        shared.close()
    wall = time.perf_counter() - started
    harness, drivers = (b - a for a, b in zip(cpu, _cpu(), strict=True))
    played = [r for r in runs if isinstance(r.outcome, Outcome)]
    seconds = [r.closed - r.began for r in played] or [0.0]
    split = [phases(r) for r in played]
    found = sum(1 for r in played if isinstance(r.outcome, Outcome) and r.outcome.violations)
    parts = " ".join(f"{statistics.median([s[p] for s in split] or [0.0]):>7.2f}"
                     for p in PHASES)
    return (f"{target_name:<28}{workers:>4}{len(played):>4}/{len(picked):<4}"
            f"{statistics.median(seconds):>8.2f}{p90(seconds):>7.2f}{wall:>8.1f}"
            f"{wall * len(scope) / len(picked):>11.0f} {parts}{found:>6}"
            f"{harness / max(1, len(played)):>9.2f}{drivers / max(1, len(played)):>9.2f}")


def full(target_name: str, settings: Settings, workers: int | None, out: str,
         budget: float = FULL_BUDGET) -> str:
    """The full scope played to its end (or for ``budget`` seconds) on one target, every
    finding a replay file in ``out``: the coverage line, the findings and the wall time."""
    started = time.perf_counter()
    before = set(Path(out).glob("*.json"))
    result, _ = play_scope(resolve(target_name, settings=settings), budget, out,
                           workers=workers, every_finding=True)
    files = sorted(set(Path(out).glob("*.json")) - before)
    return "\n".join([f"{target_name:<28}{time.perf_counter() - started:>8.0f} s  "
                      f"{result.note}; {len(files)} replay files, by invariant "
                      f"{', '.join(sorted(result.findings))}"])


def target_name(client: str, assignor: str) -> str:
    """``wire:<client>:<assignor>``; a client given as ``<client>:<assignor>`` (KafkaJS has
    round robin only: ``kafkajs:roundrobin``) keeps its own assignor."""
    return f"wire:{client}" if ":" in client else f"wire:{client}:{assignor}"


def targets(clients: str, settings: Settings) -> list[str]:
    """The clients asked for; ``java@lines``: the newest release of each of Kafka's major
    release lines the Maven repository holds; ``java@all``: every release it holds."""
    out: list[str] = []
    for client in clients.split(","):
        if client not in ("java@lines", "java@all"):
            out.append(client)
            continue
        held = releases(settings.maven_repo)  # oldest first
        chosen = held if client == "java@all" else list({v.split(".")[0]: v
                                                          for v in held}.values())
        out += [f"java@{v}" for v in chosen]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", default="librdkafka,java@3.8.0,kafka-python")
    parser.add_argument("--assignor", default="range")
    parser.add_argument("--sample", type=int, default=24)
    parser.add_argument("--workers", default="0,1,4")
    parser.add_argument("--full", metavar="OUT", help="play the full scope on each client "
                        "(at the first --workers value, 0: the engine's choice), replay files "
                        "of findings in OUT")
    parser.add_argument("--budget", type=float, default=FULL_BUDGET,
                        help="with --full: seconds per client (default: to the scope's end)")
    args = parser.parse_args()
    settings = Settings.from_environ(os.environ)  # this script's edge
    print(f"{os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.full:
        for client in targets(args.clients, settings):
            if missing(client.partition("@")[0].partition(":")[0], settings.kafka_classpath):
                print(f"{client:<28}skipped: {missing(client, settings.kafka_classpath)}")
                continue
            print(full(target_name(client, args.assignor), settings,
                       int(args.workers.split(",")[0]) or None, args.full, args.budget),
                  flush=True)
        return
    print(f"{'target':<28}{'K':>4}{'played':>9}{'median':>8}{'p90':>7}{'wall s':>8}"
          f"{'projected':>11} " + " ".join(f"{p:>7}" for p in PHASES)
          + "  found  cpu/pt: harness, drivers", flush=True)
    for client in targets(args.clients, settings):
        if missing(client.partition("@")[0].partition(":")[0], settings.kafka_classpath):
            print(f"{client:<28}skipped: {missing(client, settings.kafka_classpath)}")
            continue
        for workers in (int(w) for w in args.workers.split(",")):
            print(bench(target_name(client, args.assignor), settings, args.sample, workers),
                  flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
