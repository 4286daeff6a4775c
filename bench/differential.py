"""The long differential run (``tox -e differential``): each builtin assignor against Kafka's
own client on the audit's seeded stories, every request of every chain given to both.

Prints one row per assignor (stories, requests, differences by explanation, unexplained
ones, time, requests per second), the shapes the stories reached, the machine and its load;
saves every unexplained difference and the smallest example of each explanation as a
request file under ``--out`` (``groupcheck diff --request FILE`` runs one again). Exit code
1 when any difference is unexplained.

Usage: python bench/differential.py [--groups N] [--workers W] [--seed S] [--out DIR]
                                    [--assignor A ...] [--classpath CP] [--timeout S]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from groupcheck.engines.differential.reports import ASSIGNORS, save_differences, story_report
from groupcheck.engines.differential.stories import StoriesResult, run_stories


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _row(result: StoriesResult) -> str:
    explained = ", ".join(f"{k} {n:,}" for k, n in sorted(result.explained.items())) or "-"
    rate = result.requests / result.seconds if result.seconds else 0.0
    return (f"| {result.assignor} | {result.groups:,} | {result.requests:,} | "
            f"{result.differences:,} | {explained} | {result.unexplained_count:,} | "
            f"{result.seconds:.1f} | {rate:,.0f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=100_000, help="stories per assignor")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--assignor", action="append", default=None)
    parser.add_argument("--classpath", default=os.environ.get("GROUPCHECK_KAFKA_CLASSPATH", ""),
                        help="java:CLASSPATH (default: $GROUPCHECK_KAFKA_CLASSPATH)")
    parser.add_argument("--timeout", type=float, default=5.0,
                        help="seconds per request on each side (the audit's limit)")
    parser.add_argument("--out", default="build/differential")
    args = parser.parse_args()
    reference = f"java:{args.classpath}"
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average at the start {_load()}")
    started = time.perf_counter()
    results = []
    for assignor in args.assignor or ASSIGNORS:
        ours = f"builtin:{assignor}"

        def progress(partial: StoriesResult, assignor: str = assignor) -> None:
            print(f"  {assignor}: {partial.groups:,} stories, {partial.requests:,} requests, "
                  f"{partial.unexplained_count} unexplained", file=sys.stderr, flush=True)

        result = run_stories(ours, reference, assignor, groups=args.groups, seed=args.seed,
                             workers=args.workers, timeout=args.timeout, progress=progress)
        results.append(result)
        print("\n".join(story_report(result, ours, reference, args.workers)), flush=True)
        for path in save_differences(result, ours, reference, args.out):
            print(f"  saved: {path}")
    print(f"\nload average at the end {_load()}; {time.perf_counter() - started:.0f} s in all\n")
    print("| assignor | stories | requests | differences | explained (deviation, Kafka's "
          "answer) | unexplained | seconds | requests/s |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for result in results:
        print(_row(result))
    return 1 if any(r.unexplained_count for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
