"""Benchmark: the four assignors on Kafka's scale-test shape, one table.

500 topics x 2,000 partitions (1,000,000 partitions), 2,000 consumers
(AbstractStickyAssignorTest's large-assignment tests). Cases, each in its own process so that
its peak RSS is its own:

  range, roundrobin                 all consumers subscribe to every topic
  sticky, cooperative-sticky        a first assignment of the empty group, then a reassignment
                                    after ``consumer0000`` left, fed the first result the way
                                    clients send it (sticky: user data; cooperative: owned
                                    partitions and generation)
  ... unequal                       the same, the last consumer subscribing to topic 0 only
                                    (the general builder)

Only ``assign`` is timed (best of ``--repeat`` runs); peak MB is the process's peak RSS,
input building included. The load average is printed before and after.

Usage: python bench/assign.py [--topics N] [--partitions N] [--consumers N] [--repeat N]
                              [--cases range,sticky-unequal,...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from groupcheck.impl.assignors import make_assignor
from groupcheck.impl.types import Cluster, Subscription
from groupcheck.impl.user_data import encode_cooperative_user_data, encode_sticky_user_data

Assignment = dict[str, list[tuple[str, int]]]


@dataclass(frozen=True)
class Case:
    name: str
    assignor: str
    unequal: bool = False
    reassign: bool = False
    java: str = "—"  # Kafka's Java client on a 2-core machine, in process, cold JVM


CASES = [
    Case("sticky", "sticky", reassign=True, java="0.21 / 3.5"),
    Case("sticky-unequal", "sticky", unequal=True, reassign=True),
    Case("cooperative-sticky", "cooperative-sticky", reassign=True, java="0.24 / 2.8"),
    Case("cooperative-sticky-unequal", "cooperative-sticky", unequal=True, reassign=True),
    Case("range", "range", java="1.5"),
    Case("roundrobin", "roundrobin", java="3.4"),
]


def subscriptions(topics: list[str], consumers: int, unequal: bool) -> dict[str, Subscription]:
    subs = {f"consumer{i:04d}": Subscription(list(topics)) for i in range(consumers)}
    if unequal:
        subs[f"consumer{consumers - 1:04d}"] = Subscription([topics[0]])
    return subs


def after_one_left(assignor: str, subs: dict[str, Subscription],
                   first: Assignment) -> dict[str, Subscription]:
    """The group after ``consumer0000`` left, each survivor reporting its partitions."""
    out: dict[str, Subscription] = {}
    for member, sub in subs.items():
        if member == "consumer0000":
            continue
        owned = first[member]
        if assignor == "sticky":
            out[member] = Subscription(sub.topics, encode_sticky_user_data(owned, 1), [], 1)
        else:
            out[member] = Subscription(sub.topics, encode_cooperative_user_data(1), owned, 1)
    return out


def best_of(repeat: int, run: Callable[[], Assignment]) -> tuple[float, Assignment]:
    best, result = float("inf"), {}
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def run_case(case: Case, n_topics: int, n_partitions: int, consumers: int,
             repeat: int) -> dict[str, float | None]:
    topics = [f"topic-{t}" for t in range(n_topics)]
    cluster = Cluster({t: n_partitions for t in topics})
    subs = subscriptions(topics, consumers, case.unequal)

    def assign(group: dict[str, Subscription]) -> Callable[[], Assignment]:
        return lambda: {m: a.partitions
                        for m, a in make_assignor(case.assignor).assign(cluster, group).items()}

    first_s, first = best_of(repeat, assign(subs))
    reassign_s = None
    if case.reassign:
        reassign_s, _ = best_of(repeat, assign(after_one_left(case.assignor, subs, first)))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"first": first_s, "reassign": reassign_s, "peak_mb": peak_mb}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--consumers", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=1, help="timed runs (best is shown)")
    parser.add_argument("--cases", default=",".join(c.name for c in CASES),
                        help="comma-separated case names")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in this process
    args = parser.parse_args()
    by_name = {c.name: c for c in CASES}
    sizes = [str(args.topics), str(args.partitions), str(args.consumers)]
    if args.case:
        print(json.dumps(run_case(by_name[args.case], args.topics, args.partitions,
                                  args.consumers, args.repeat)))
        return
    unknown = [n for n in args.cases.split(",") if n not in by_name]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    print(f"{args.topics} topics x {args.partitions} partitions, {args.consumers} consumers; "
          f"load average {load()}")
    print(f"{'case':<28}{'first s':>9}{'reassign s':>12}{'peak MB':>9}  Java first / reassign s")
    for name in args.cases.split(","):
        out = subprocess.run([sys.executable, __file__, "--case", name, "--topics", sizes[0],
                              "--partitions", sizes[1], "--consumers", sizes[2],
                              "--repeat", str(args.repeat)],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout)
        again = "—" if row["reassign"] is None else f"{row['reassign']:.2f}"
        print(f"{name:<28}{row['first']:>9.2f}{again:>12}{row['peak_mb']:>9.0f}  "
              f"{by_name[name].java}", flush=True)
    print(f"load average {load()}")


if __name__ == "__main__":
    main()
