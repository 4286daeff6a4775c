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

Each case runs in its own processes: a Python one (groupcheck) and, with ``--java``, a JVM
running Kafka's real assignors through ``bench/AssignBench.java``, alternately (Java, Python,
Java, Python for ``--rounds 2``) so that both see the same load. On both sides only the
assign call is timed (Java: ``ConsumerPartitionAssignor.assign(Cluster, GroupSubscription)``;
Python: ``assign(cluster, subscriptions)``), after ``--warmup`` untimed runs (the JIT's warm-up;
for Python, warm caches and allocator), ``--runs`` timed runs a round; the median of every
timed run is shown. Each run gets a fresh assignor. Between runs, outside the timing, the
last answer is dropped and memory collected (Java ``System.gc()``, Python ``gc.collect()``).
The figures in the table:

  ms / Java ms / ratio   median call time; ratio = groupcheck / Java (lower is better)
  same                   whether both answered the same, list for list and in the order of
                         the answer map (SHA-256 of the answers; "—" without Java)
  py gc ms               Python's cyclic-GC pass over the answer just after the call: the
                         builtin assignors keep the collector off inside ``assign`` (millions
                         of acyclic tuples), so the collector's first look at them comes after
                         the call, in the caller's time; not in the ratio
  java gc ms             time Java's collectors ran inside the timed call (in the ratio)

The load average is printed before and after, and the whole run's time at the end.

Usage: python bench/assign.py [--java] [--kafka CLASSPATH] [--rounds N] [--warmup N] [--runs N]
                              [--topics N] [--partitions N] [--consumers N] [--cases a,b,...]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kafka_java import JavaUnavailable, java_command, kafka_classpath  # noqa: E402

from groupcheck.impl.assignors import make_assignor  # noqa: E402
from groupcheck.impl.types import Assignment, Cluster, Subscription  # noqa: E402
from groupcheck.impl.user_data import (  # noqa: E402
    encode_cooperative_user_data,
    encode_sticky_user_data,
)

Answer = dict[str, Assignment]


@dataclass(frozen=True)
class Case:
    name: str
    assignor: str
    unequal: bool = False

    @property
    def reassign(self) -> bool:
        return "sticky" in self.assignor


CASES = [Case("range", "range"), Case("roundrobin", "roundrobin"),
         Case("sticky", "sticky"), Case("cooperative-sticky", "cooperative-sticky"),
         Case("sticky-unequal", "sticky", unequal=True),
         Case("cooperative-sticky-unequal", "cooperative-sticky", unequal=True)]
DEFAULT_CASES = "range,roundrobin,sticky,cooperative-sticky"


def subscriptions(topics: list[str], consumers: int, unequal: bool) -> dict[str, Subscription]:
    subs = {f"consumer{i:04d}": Subscription(list(topics)) for i in range(consumers)}
    if unequal:
        subs[f"consumer{consumers - 1:04d}"] = Subscription([topics[0]])
    return subs


def after_one_left(assignor: str, subs: dict[str, Subscription],
                   first: Answer) -> dict[str, Subscription]:
    """The group after ``consumer0000`` left, each survivor reporting its partitions."""
    out: dict[str, Subscription] = {}
    for member, sub in subs.items():
        if member == "consumer0000":
            continue
        owned = first[member].partitions
        if assignor == "sticky":
            out[member] = Subscription(sub.topics, encode_sticky_user_data(owned, 1), [], 1)
        else:
            out[member] = Subscription(sub.topics, encode_cooperative_user_data(1), owned, 1)
    return out


def digest(answer: Answer) -> str:
    """SHA-256 of the answer as AssignBench.java writes it: a line per member, map order."""
    sha = hashlib.sha256()
    for member, assignment in answer.items():
        line = ",".join(f"{t}-{p}" for t, p in assignment.partitions)
        sha.update(f"{member}\t{line}\n".encode())
    return sha.hexdigest()


def timed_runs(warmup: int, runs: int, call: Callable[[], Answer]
               ) -> tuple[list[float], list[float], Answer]:
    """(call ms per timed run, GC-pass ms after each, the last answer)."""
    times: list[float] = []
    passes: list[float] = []
    answer: Answer = {}
    for i in range(warmup + runs):
        answer = {}
        gc.collect()
        started = time.perf_counter()
        answer = call()
        elapsed = time.perf_counter() - started
        started = time.perf_counter()
        gc.collect(0)
        if i >= warmup:
            times.append(elapsed * 1000)
            passes.append((time.perf_counter() - started) * 1000)
    return times, passes, answer


def run_python(case: Case, sizes: tuple[int, int, int], warmup: int, runs: int
               ) -> dict[str, object]:
    """One case in this process: timings, GC passes and digests per phase."""
    n_topics, n_partitions, consumers = sizes
    topics = [f"topic-{t}" for t in range(n_topics)]
    cluster = Cluster({t: n_partitions for t in topics})
    subs = subscriptions(topics, consumers, case.unequal)
    out: dict[str, object] = {}
    phases = [("first", subs)]
    for phase, group in phases:
        times, passes, answer = timed_runs(
            warmup, runs, lambda g=group: make_assignor(case.assignor).assign(cluster, g))
        out.update({f"{phase}_ms": times, f"{phase}_py_gc_ms": passes,
                    f"{phase}_digest": digest(answer)})
        if phase == "first" and case.reassign:
            phases.append(("reassign", after_one_left(case.assignor, subs, answer)))
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_java(command: list[str], case: Case, sizes: tuple[int, int, int], warmup: int,
             runs: int) -> dict[str, object]:
    args = [case.name, *map(str, sizes), str(warmup), str(runs)]
    done = subprocess.run([*command, *args], capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run_here(case: Case, sizes: tuple[int, int, int], warmup: int, runs: int
             ) -> dict[str, object]:
    """One case in a fresh Python process (its peak RSS is its own)."""
    done = subprocess.run([sys.executable, __file__, "--one-case", case.name, "--topics",
                           str(sizes[0]), "--partitions", str(sizes[1]), "--consumers",
                           str(sizes[2]), "--warmup", str(warmup), "--runs", str(runs)],
                          capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def merged(rounds: list[dict[str, object]], key: str) -> list[float]:
    return [float(x) for r in rounds for x in r.get(key, [])]  # type: ignore[attr-defined]


def row(name: str, phase: str, py: list[dict[str, object]], java: list[dict[str, object]]
        ) -> str:
    """One Markdown table row for ``phase`` of a case."""
    ms = statistics.median(merged(py, f"{phase}_ms"))
    py_gc = statistics.median(merged(py, f"{phase}_py_gc_ms"))
    if not java:
        return f"| {name} {phase} | {ms:,.0f} | — | — | — | {py_gc:,.0f} | — |"
    java_ms = statistics.median(merged(java, f"{phase}_ms"))
    java_gc = statistics.median(merged(java, f"{phase}_gc_ms"))
    same = {str(r[f"{phase}_digest"]) for r in py + java}
    return (f"| {name} {phase} | {ms:,.0f} | {java_ms:,.0f} | {ms / java_ms:.2f} | "
            f"{'yes' if len(same) == 1 else 'NO'} | {py_gc:,.0f} | {java_gc:,.0f} |")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--java", action="store_true", help="time Kafka's Java client too")
    parser.add_argument("--kafka", help="Kafka classpath (folder or jar list)")
    parser.add_argument("--jvm-option", action="append", default=[],
                        help="an option for the JVM (repeatable)")
    parser.add_argument("--rounds", type=int, default=2, help="Java/Python alternations")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per round")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per round")
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--consumers", type=int, default=2000)
    parser.add_argument("--cases", default=DEFAULT_CASES,
                        help=f"comma-separated, of: {', '.join(c.name for c in CASES)}")
    parser.add_argument("--one-case", help=argparse.SUPPRESS)  # a case, in this process
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
        try:
            command = java_command("AssignBench", kafka_classpath(args.kafka), args.jvm_option)
        except JavaUnavailable as e:
            print(f"bench/assign.py: {e}", file=sys.stderr)
            return 2
    started = time.perf_counter()
    print(f"{args.topics} topics x {args.partitions} partitions, {args.consumers} consumers; "
          f"{args.rounds} round(s) of {args.warmup} warm-up + {args.runs} timed runs a side; "
          f"cpus {os.cpu_count()}; load average {load()}")
    print("\n| case | groupcheck ms | Java ms | ratio | same | py gc ms | java gc ms |")
    print("|---|---:|---:|---:|---|---:|---:|")
    for name in names:
        case = by_name[name]
        py: list[dict[str, object]] = []
        java: list[dict[str, object]] = []
        for _ in range(args.rounds):
            if command:
                java.append(run_java(command, case, sizes, args.warmup, args.runs))
            py.append(run_here(case, sizes, args.warmup, args.runs))
        for phase in ("first", "reassign") if case.reassign else ("first",):
            print(row(name, phase, py, java), flush=True)
    print(f"\nload average {load()}; the benchmark took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
