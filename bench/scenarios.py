"""Benchmark: check's scenarios engine (the audit's random stories, in process), one table.

For each builtin assignor: how many stories a second the engine plays (``--count`` stories
of seed 0, every eighth a large group) and the largest group among them. For each bug-zoo
mutant with an assign function: whether the engine alone finds it within ``--budget``
seconds, the invariant, the seconds to the failing story (before shrinking), the story's
number, and the size the finding was shrunk to. The load average is printed before and
after (the machine is shared).

Usage: python bench/scenarios.py [--count N] [--budget S] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time

from groupcheck.engines.battery.scenarios import run_scenarios_engine
from groupcheck.targets.registry import BUILTIN_ASSIGNORS, resolve
from groupcheck.targets.zoo.entries import ZOO


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"load average before: {_load()}  ({os.cpu_count()} cores)")
    failures = tempfile.mkdtemp(prefix="bench-scenarios-")
    print(f"{'target':<44} {'stories':>8} {'seconds':>8} {'stories/s':>10}  largest group")
    for name in BUILTIN_ASSIGNORS:
        target = resolve(f"builtin:{name}")
        started = time.perf_counter()
        result = run_scenarios_engine(target, 0.0, failures, args.seed, count=args.count)
        seconds = time.perf_counter() - started
        largest = re.search(r"largest group (\d+)", result.note)
        print(f"{target.name:<44} {result.runs:>8} {seconds:>8.1f} "
              f"{result.runs / seconds:>10.0f}  {largest.group(1) if largest else '?'}")
    print()
    print(f"{'mutant':<44} {'found':<6} {'after s':>8} {'story':>6}  shrunk to")
    for entry in ZOO:
        target = resolve(entry.target)
        if target.assign is None:
            continue
        result = run_scenarios_engine(target, args.budget, failures, args.seed)
        if not result.findings:
            print(f"{entry.target:<44} {'no':<6} {'-':>8} {result.runs:>6}  -")
            continue
        inv, finding = next(iter(result.findings.items()))
        after = re.search(r"failed after ([\d.]+)s", result.note)
        record = json.loads(open(str(finding.file), encoding="utf-8").read())
        to = record.get("shrink", {}).get("to", {})
        print(f"{entry.target:<44} {inv:<6} {after.group(1) if after else '?':>8} "
              f"{record['scenario']:>6}  {to.get('members', '?')} members, "
              f"{to.get('partitions', '?')} partitions, {to.get('rounds', '?')} rebalance(s)")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
