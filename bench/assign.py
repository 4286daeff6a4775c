"""Benchmark: groupcheck's assignors side by side with Kafka's Java client, one table.

Kafka's scale-test shape (AbstractStickyAssignorTest's large-assignment tests): 500 topics x
2,000 partitions (1,000,000 partitions), 2,000 consumers, in process. Cases:

  range, roundrobin                 every consumer subscribes to every topic
  sticky, cooperative-sticky        a first assignment of the empty group, then a reassignment
                                    after ``consumer0000`` left, fed the first answer the way
                                    clients send it (sticky: user data; cooperative: owned
                                    partitions and generation)
  ... -unequal                      the same, the last consumer subscribing to topic 0 only
                                    (the general builder)

Both sides answer the same ``assign`` requests (``mode: raw``, so each side's leader sees the
subscriptions exactly as written). Kafka's side is the ``java:`` target's driver (one JVM a
round, its ``ms``: the time of ``ConsumerPartitionAssignor.assign(Cluster,
GroupSubscription)``); groupcheck's side is a Python process a round timing its leader's
``assign(cluster, subscriptions)`` on the same subscriptions (`raw_subscription`). A round
runs ``--warmup`` untimed requests (the JIT's warm-up; for Python, warm caches and allocator)
and ``--runs`` timed ones per phase, with a fresh assignor each; the sides alternate (Java,
Python, Java, Python for ``--rounds 2``) so that both see the same load, and the median of
every timed run is shown. The columns:

  ms / Java ms / ratio   median time of the timed region; ratio = groupcheck / Java (lower
                         is better). Java's region is the driver's in-process assign call,
                         any GC pause during it included. Python's is the assign call plus
                         a pass of the cyclic collector's young and middle generations
                         right after it (``gc.collect(1)``), so that the collector's work on
                         what the call made is counted even where the assignor defers it
  same                   whether both answered the same, list for list and in the order of
                         the answer map (SHA-256 of the answers; "—" without Java)
  py gc ms               of Python's time, the collector pass after the call (the builtin
                         sticky assignors run their passes during the call instead)
  py cold ms             the same region for the phase's first call in its process (first
  Java cold ms           phase: the first call after start-up, the shared partition pool
                         empty, nothing cached; Java: the JVM's first request, its JIT
                         cold); a median over rounds. The ratio is of the warm medians.

The load average is printed before and after, and the whole run's time at the end.

Usage: python bench/assign.py [--java] [--classpath CP] [--rounds N] [--warmup N] [--runs N]
                              [--topics N] [--partitions N] [--consumers N] [--cases a,b,...]
"""

from __future__ import annotations

import argparse
import base64
import gc
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Required, TypedDict

from groupcheck.impl.assign_op import raw_subscription
from groupcheck.impl.assignors import make_assignor
from groupcheck.impl.types import Cluster
from groupcheck.impl.user_data import encode_cooperative_user_data, encode_sticky_user_data
from groupcheck.properties.jsonl_shapes import AssignAnswer, AssignRequest, RequestMember

Pairs = Mapping[str, Sequence[Sequence[str | int]]]  # member -> [[topic, partition], ...]
Figure = Literal["ms", "py_gc_ms", "cold_ms"]


class PhaseRound(TypedDict, total=False):
    """One phase of one round: the timed runs' and the first call's milliseconds, the
    answer's digest, and (Python's side) the collector pass's milliseconds."""

    ms: Required[list[float]]
    cold_ms: Required[list[float]]
    digest: Required[str]
    py_gc_ms: list[float]


class CaseRound(TypedDict, total=False):
    """One round of a case: each phase's figures, and (Python's side) the process's peak
    RSS in MiB."""

    phases: Required[dict[str, PhaseRound]]
    peak_mb: float


@dataclass(frozen=True)
class Case:
    name: str
    assignor: str
    unequal: bool = False

    @property
    def phases(self) -> tuple[str, ...]:
        return ("first", "reassign") if "sticky" in self.assignor else ("first",)


CASES = [Case("range", "range"), Case("roundrobin", "roundrobin"),
         Case("sticky", "sticky"), Case("cooperative-sticky", "cooperative-sticky"),
         Case("sticky-unequal", "sticky", unequal=True),
         Case("cooperative-sticky-unequal", "cooperative-sticky", unequal=True)]
DEFAULT_CASES = "range,roundrobin,sticky,cooperative-sticky"


def _fresh(topics: list[str]) -> RequestMember:
    """A member that owns nothing and has no generation yet."""
    return {"topics": topics, "owned": [], "generation": None}


def first_request(case: Case, sizes: tuple[int, int, int]) -> AssignRequest:
    """The empty group's assign request."""
    n_topics, n_partitions, consumers = sizes
    topics = [f"topic-{t}" for t in range(n_topics)]
    members = {f"consumer{i:04d}": _fresh(topics) for i in range(consumers)}
    if case.unequal:
        members[f"consumer{consumers - 1:04d}"] = _fresh(topics[:1])
    return {"op": "assign", "assignor": case.assignor, "mode": "raw",
            "partitions": {t: n_partitions for t in topics}, "members": members}


def reassign_request(first: AssignRequest, answer: Pairs) -> AssignRequest:
    """The group after ``consumer0000`` left, each survivor reporting its partitions at
    generation 1 as its client sends them (sticky: user data; cooperative: owned)."""
    members: dict[str, RequestMember] = {}
    for member, fields in first["members"].items():
        if member == "consumer0000":
            continue
        owned = [(str(t), int(p)) for t, p in answer[member]]
        if first["assignor"] == "sticky":
            data = encode_sticky_user_data(owned, 1)
            members[member] = {"topics": fields["topics"], "owned": [], "generation": 1,
                               "userData": base64.b64encode(data).decode("ascii")}
        else:
            data = encode_cooperative_user_data(1)
            members[member] = {"topics": fields["topics"], "generation": 1,
                               "owned": [[t, p] for t, p in owned],
                               "userData": base64.b64encode(data).decode("ascii")}
    return {**first, "members": members}


def digest(answer: Pairs) -> str:
    """SHA-256 of an answer: a line per member in the answer's order, its partitions in
    order (the same for Python tuples and Java's JSON pairs)."""
    sha = hashlib.sha256()
    for member, partitions in answer.items():
        line = ",".join(f"{t}-{p}" for t, p in partitions)
        sha.update(f"{member}\t{line}\n".encode())
    return sha.hexdigest()


def python_phase(request: AssignRequest, warmup: int, runs: int
                 ) -> tuple[list[float], list[float], float, dict[str, list[tuple[str, int]]]]:
    """(timed-region ms per timed run: the call and a young pass after it; that pass's ms;
    the same region's ms for the phase's first, untimed call; the last answer) of
    groupcheck's leader on ``request``."""
    cluster = Cluster(dict(request["partitions"]))
    subscriptions = {m: raw_subscription(v) for m, v in request["members"].items()}
    times: list[float] = []
    passes: list[float] = []
    cold = 0.0
    answer: dict[str, list[tuple[str, int]]] = {}
    for i in range(warmup + runs):
        answer = {}
        gc.collect()
        assignor = make_assignor(request["assignor"])
        started = time.perf_counter()
        result = assignor.assign(cluster, subscriptions)
        called = time.perf_counter()
        gc.collect(1)
        ended = time.perf_counter()
        if i == 0:
            cold = (ended - started) * 1000
        if i >= warmup:
            times.append((ended - started) * 1000)
            passes.append((ended - called) * 1000)
        answer = {m: a.partitions for m, a in result.items()}
        del result
    return times, passes, cold, answer


def run_python(case: Case, sizes: tuple[int, int, int], warmup: int, runs: int
               ) -> CaseRound:
    """One round of a case in this process: timings, GC passes and digests per phase."""
    phases: dict[str, PhaseRound] = {}
    request = first_request(case, sizes)
    for phase in case.phases:
        times, passes, cold, answer = python_phase(request, warmup, runs)
        phases[phase] = {"ms": times, "py_gc_ms": passes, "cold_ms": [cold],
                         "digest": digest(answer)}
        request = reassign_request(request, answer)
    return {"phases": phases,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_java(command: list[str], case: Case, sizes: tuple[int, int, int], warmup: int,
             runs: int) -> CaseRound:
    """One round of a case on a fresh JVM of the ``java:`` target's driver."""
    from groupcheck.targets.processes.jsonl_process import JsonlProcess, JsonlTarget

    target = JsonlTarget("java: bench", JsonlProcess(command, timeout=900, label="java: bench"),
                         case.assignor)
    phases: dict[str, PhaseRound] = {}
    try:
        request = first_request(case, sizes)
        for phase in case.phases:
            times: list[float] = []
            cold = 0.0
            answer: Pairs = {}
            for i in range(warmup + runs):
                reply: AssignAnswer = target.assign(request)
                if i == 0:
                    cold = float(reply["ms"])
                if i >= warmup:
                    times.append(float(reply["ms"]))
                answer = reply["assignment"]
            phases[phase] = {"ms": times, "cold_ms": [cold], "digest": digest(answer)}
            request = reassign_request(request, answer)
    finally:
        target.close()
    return {"phases": phases}


def run_here(case: Case, sizes: tuple[int, int, int], warmup: int, runs: int
             ) -> CaseRound:
    """One round of a case in a fresh Python process (its peak RSS is its own)."""
    done = subprocess.run([sys.executable, __file__, "--one-case", case.name, "--topics",
                           str(sizes[0]), "--partitions", str(sizes[1]), "--consumers",
                           str(sizes[2]), "--warmup", str(warmup), "--runs", str(runs)],
                          capture_output=True, text=True, check=True)
    result: CaseRound = json.loads(done.stdout)
    return result


def row(name: str, phase: str, py: list[CaseRound], java: list[CaseRound]) -> str:
    """One Markdown table row for ``phase`` of a case."""

    def median(rounds: list[CaseRound], key: Figure) -> float:
        return statistics.median(x for r in rounds for x in r["phases"][phase].get(key, []))

    ms, py_gc, cold = median(py, "ms"), median(py, "py_gc_ms"), median(py, "cold_ms")
    if not java:
        return f"| {name} {phase} | {ms:,.0f} | — | — | — | {py_gc:,.0f} | {cold:,.0f} | — |"
    java_ms, java_cold = median(java, "ms"), median(java, "cold_ms")
    same = {r["phases"][phase]["digest"] for r in py + java}
    return (f"| {name} {phase} | {ms:,.0f} | {java_ms:,.0f} | {ms / java_ms:.2f} | "
            f"{'yes' if len(same) == 1 else 'NO'} | {py_gc:,.0f} | {cold:,.0f} | "
            f"{java_cold:,.0f} |")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def java_command(classpath: str) -> list[str] | str:
    """The driver's command line, or why there is none."""
    from groupcheck.targets.processes.java_runtime import JavaUnavailable, driver_command

    try:
        return driver_command(classpath)
    except JavaUnavailable as exc:
        return str(exc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--java", action="store_true", help="time Kafka's Java client too")
    parser.add_argument("--classpath", default=os.environ.get("GROUPCHECK_KAFKA_CLASSPATH", ""),
                        help="Kafka's classpath, as in java:[CLASSPATH] (default: "
                             "$GROUPCHECK_KAFKA_CLASSPATH)")
    parser.add_argument("--rounds", type=int, default=2, help="Java/Python alternations")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per round")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per round")
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--consumers", type=int, default=2000)
    parser.add_argument("--cases", default=DEFAULT_CASES,
                        help=f"comma-separated, of: {', '.join(c.name for c in CASES)}")
    parser.add_argument("--one-case", help=argparse.SUPPRESS)  # a round, in this process
    args = parser.parse_args()
    by_name = {c.name: c for c in CASES}
    sizes = (args.topics, args.partitions, args.consumers)
    if args.one_case:
        print(json.dumps(run_python(by_name[args.one_case], sizes, args.warmup, args.runs)))
        return 0
    names = [n for n in args.cases.split(",") if n]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    command: list[str] = []
    if args.java:
        found = java_command(args.classpath)
        if isinstance(found, str):
            print(f"bench/assign.py: {found}", file=sys.stderr)
            return 2
        command = found
    started = time.perf_counter()
    print(f"{args.topics} topics x {args.partitions} partitions, {args.consumers} consumers; "
          f"{args.rounds} round(s) of {args.warmup} warm-up + {args.runs} timed runs a side; "
          f"cpus {os.cpu_count()}; load average {load()}")
    print("\n| case | groupcheck ms | Java ms | ratio | same | py gc ms | py cold ms "
          "| Java cold ms |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    for name in names:
        case = by_name[name]
        py: list[CaseRound] = []
        java: list[CaseRound] = []
        for _ in range(args.rounds):
            if command:
                java.append(run_java(command, case, sizes, args.warmup, args.runs))
            py.append(run_here(case, sizes, args.warmup, args.runs))
        for phase in case.phases:
            print(row(name, phase, py, java), flush=True)
    print(f"\nload average {load()}; the benchmark took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
