"""Benchmark: range and roundrobin on Kafka's large uniform shape.

500 topics x 2,000 partitions (1,000,000 partitions), 2,000 consumers all subscribed to
every topic (AbstractStickyAssignorTest.testLargeAssignmentAndGroupWithUniformSubscription).
Prints seconds (in-process ``assign`` only) and peak traced memory of each run.

Usage: ``python bench/assign_range_rr.py [--topics N] [--partitions N] [--consumers N]``
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

from groupcheck.impl.assignors.range import RangeAssignor
from groupcheck.impl.assignors.roundrobin import RoundRobinAssignor
from groupcheck.impl.types import Assignor, Cluster, Subscription


def build(topics: int, partitions: int, consumers: int
          ) -> tuple[Cluster, dict[str, Subscription]]:
    names = [f"topic-{i}" for i in range(topics)]
    cluster = Cluster(partitions=dict.fromkeys(names, partitions))
    subs = {f"consumer-{i}": Subscription(topics=list(names)) for i in range(consumers)}
    return cluster, subs


def run(assignor: Assignor, cluster: Cluster, subs: dict[str, Subscription],
        memory: bool) -> tuple[float, float, int]:
    gc.collect()
    if memory:
        tracemalloc.start()
    started = time.perf_counter()
    result = assignor.assign(cluster, subs)
    elapsed = time.perf_counter() - started
    peak = 0.0
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    assigned = sum(len(a.partitions) for a in result.values())
    return elapsed, peak, assigned


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--consumers", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best is shown)")
    args = parser.parse_args()
    cluster, subs = build(args.topics, args.partitions, args.consumers)
    print(f"{args.topics} topics x {args.partitions} partitions, {args.consumers} consumers")
    print(f"{'assignor':<12}{'best s':>9}{'peak MB':>10}{'assigned':>11}")
    for factory in (RangeAssignor, RoundRobinAssignor):
        # Timings without tracemalloc (it slows allocation); one extra run for peak memory.
        times = [run(factory(), cluster, subs, memory=False)[0] for _ in range(args.repeat)]
        _, peak, assigned = run(factory(), cluster, subs, memory=True)
        print(f"{factory.name:<12}{min(times):>9.3f}{peak:>10.1f}{assigned:>11}")


if __name__ == "__main__":
    main()
