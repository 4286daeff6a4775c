"""Kafka's sticky scale test: 500 topics x 2,000 partitions (1,000,000), 2,000 consumers.

Cases (each in its own process, so that the peak RSS is the case's own):
  uniform      all consumers subscribe to all topics (constrained builder)
  unequal      the last consumer subscribes to topic 0 only (general builder)
for ``sticky`` and ``cooperative-sticky``: a first assignment of the empty group, then a
reassignment after one consumer left, fed the first result the way clients send it (sticky:
user data; cooperative: owned partitions and generation). Only ``assign`` is timed.

Usage: python bench/assign_sticky.py [--topics N] [--partitions N] [--consumers N]
Java on the reference 2-core machine: sticky 0.21 s / 3.5 s, cooperative 0.24 s / 2.8 s.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from groupcheck.impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from groupcheck.impl.types import Cluster, Subscription
from groupcheck.impl.user_data import encode_cooperative_user_data, encode_sticky_user_data

CASES = [(a, s) for a in ("sticky", "cooperative-sticky") for s in ("uniform", "unequal")]


def _subscriptions(topics: list[str], consumers: int, unequal: bool) -> dict[str, Subscription]:
    subs = {f"consumer{i:04d}": Subscription(list(topics)) for i in range(consumers)}
    if unequal:
        subs[f"consumer{consumers - 1:04d}"] = Subscription([topics[0]])
    return subs


def _second_round(name: str, subs: dict[str, Subscription],
                  first: dict[str, list[tuple[str, int]]]) -> dict[str, Subscription]:
    """The group after ``consumer0000`` left, each survivor reporting its partitions."""
    out: dict[str, Subscription] = {}
    for member, sub in subs.items():
        if member == "consumer0000":
            continue
        owned = first[member]
        if name == "sticky":
            out[member] = Subscription(sub.topics, encode_sticky_user_data(owned, 1), [], 1)
        else:
            out[member] = Subscription(sub.topics, encode_cooperative_user_data(1), owned, 1)
    return out


def run_case(name: str, shape: str, n_topics: int, n_partitions: int, consumers: int) -> dict:
    topics = [f"topic-{t}" for t in range(n_topics)]
    cluster = Cluster({t: n_partitions for t in topics})
    subs = _subscriptions(topics, consumers, shape == "unequal")
    make = StickyAssignor if name == "sticky" else CooperativeStickyAssignor
    started = time.perf_counter()
    result = make().assign(cluster, subs)
    first_s = time.perf_counter() - started
    first = {m: a.partitions for m, a in result.items()}
    again = _second_round(name, subs, first)
    started = time.perf_counter()
    make().assign(cluster, again)
    second_s = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"first": first_s, "reassign": second_s, "peak_mb": peak_mb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=500)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--consumers", type=int, default=2000)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [str(args.topics), str(args.partitions), str(args.consumers)]
    if args.case:
        name, shape = args.case.split(":")
        print(json.dumps(run_case(name, shape, args.topics, args.partitions, args.consumers)))
        return
    print(f"{'case':<32}{'first s':>10}{'reassign s':>12}{'peak MB':>10}")
    for name, shape in CASES:
        out = subprocess.run([sys.executable, __file__, "--case", f"{name}:{shape}",
                              "--topics", sizes[0], "--partitions", sizes[1],
                              "--consumers", sizes[2]],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout)
        print(f"{name + ' ' + shape:<32}{row['first']:>10.2f}{row['reassign']:>12.2f}"
              f"{row['peak_mb']:>10.0f}")


if __name__ == "__main__":
    main()
