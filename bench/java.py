"""Benchmark: the ``java:`` target — compile, JVM start, parity run, assign requests per second.

Four tables, on the classpath of ``java:[CLASSPATH]`` (default: ``$GROUPCHECK_KAFKA_CLASSPATH``):

  compile        ``javac`` of the driver into an empty cache (first use), and a cached use
                 (the classpath digest and the cache lookup only), median of ``--rounds``
  start          a fresh JVM to its first answer (``ping``), median of ``--rounds``
  parity         every line of the golden vectors piped through one JVM (start included)
  assign         requests per second through the target (one JVM, one request at a time,
                 round trip included) for groups of a few sizes, beside groupcheck's own
                 assignor in process; each request is a second rebalance (members own the
                 first one's answer), so the sticky assignors do their real work

Usage: python bench/java.py [--classpath CP] [--rounds N] [--seconds S]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from groupcheck.engines.battery.runner import vectors_dir
from groupcheck.impl.assign_op import run_assign
from groupcheck.properties.jsonl_shapes import AssignRequest
from groupcheck.targets.processes import java_runtime
from groupcheck.targets.processes.jsonl_process import JsonlProcess

SIZES = ((3, 2, 4), (30, 10, 10), (300, 50, 20))  # members, topics, partitions per topic


def _median(samples: list[float]) -> float:
    return statistics.median(samples)


def compile_times(classpath: str, rounds: int) -> tuple[float, float]:
    """(first use, cached use) in seconds."""
    first, cached = [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["XDG_CACHE_HOME"] = cache
            java_runtime._COMPILED.clear()
            started = time.perf_counter()
            java_runtime.driver_command(classpath)
            first.append(time.perf_counter() - started)
            java_runtime._COMPILED.clear()
            started = time.perf_counter()
            java_runtime.driver_command(classpath)
            cached.append(time.perf_counter() - started)
    os.environ.pop("XDG_CACHE_HOME")
    java_runtime._COMPILED.clear()
    return _median(first), _median(cached)


def start_time(command: list[str], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        process = JsonlProcess(command, timeout=60)
        started = time.perf_counter()
        process.call({"op": "ping"})
        samples.append(time.perf_counter() - started)
        process.close()
    return _median(samples)


def parity(command: list[str]) -> list[tuple[str, int, float]]:
    env = os.environ.get("GROUPCHECK_VECTORS")
    folder = vectors_dir(Path(env) if env else None)
    if folder is None:
        return []
    out = []
    for name in ("codec.jsonl", "assign.jsonl"):
        lines = (folder / name).read_text(encoding="utf-8").splitlines()
        payload = "".join(json.dumps(json.loads(x)["request"]) + "\n" for x in lines)
        started = time.perf_counter()
        subprocess.run(command, input=payload, capture_output=True, text=True, check=True)
        out.append((name, len(lines), time.perf_counter() - started))
    return out


def second_rebalance(assignor: str, members: int, topics: int, per_topic: int
                     ) -> AssignRequest:
    """Every member on every topic, owning its share of a first rebalance's answer."""
    names = [f"consumer-{i:03d}" for i in range(members)]
    first: AssignRequest = {
        "op": "assign", "assignor": assignor, "mode": "client",
        "partitions": {f"topic-{t}": per_topic for t in range(topics)},
        "members": {m: {"topics": [f"topic-{t}" for t in range(topics)], "owned": [],
                        "generation": None} for m in names}}
    answer = run_assign(first)
    # the first consumer left: its partitions move
    return {**first, "members": {m: {**first["members"][m], "owned": answer["assignment"][m],
                                     "generation": 1} for m in names[1:]}}


def rate(call: Callable[[AssignRequest], object], request: AssignRequest,
         seconds: float) -> float:
    call(request)  # warm-up (the JIT, our caches)
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        call(request)
        done += 1
    return done / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--classpath", default=os.environ.get("GROUPCHECK_KAFKA_CLASSPATH", ""),
                        help="Kafka's client (default: $GROUPCHECK_KAFKA_CLASSPATH)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    classpath = java_runtime.classpath_entries(args.classpath)
    print("classpath: " + ", ".join(Path(p).name for p in classpath))
    first, cached = compile_times(args.classpath, args.rounds)
    command = java_runtime.driver_command(args.classpath)
    java = subprocess.run([command[0], "-version"], capture_output=True, text=True).stderr
    print(f"java: {java.splitlines()[0]}")
    print("\n| step | seconds (median) |\n| --- | ---: |")
    print(f"| compile the driver (first use, empty cache) | {first:.2f} |")
    print(f"| cached use (classpath digest + cache lookup) | {cached:.3f} |")
    print(f"| JVM start to its first answer | {start_time(command, args.rounds):.2f} |")
    print("\n| parity run (one JVM, start included) | lines | seconds | lines/s |")
    print("| --- | ---: | ---: | ---: |")
    for name, lines, seconds in parity(command):
        print(f"| {name} | {lines:,} | {seconds:.2f} | {lines / seconds:,.0f} |")
    print("\n| assignor | members | partitions | java: requests/s | builtin in process/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    process = JsonlProcess(command, timeout=120)
    try:
        for assignor in ("range", "sticky", "cooperative-sticky"):
            for members, topics, per_topic in SIZES:
                request = second_rebalance(assignor, members, topics, per_topic)
                java_rate = rate(process.call, request, args.seconds)
                ours = rate(run_assign, request, args.seconds)
                print(f"| {assignor} | {members - 1} | {topics * per_topic:,} | "
                      f"{java_rate:,.1f} | {ours:,.1f} |")
    finally:
        process.close()
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
