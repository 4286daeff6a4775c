"""Benchmark: how groupcheck's four builtin assignors' cost grows, as the scale engine sees it.

    python bench/scale.py [--budget S] [--assignor A ...]

Runs the scale engine's ladders (``engines/battery/scale.py``) on each builtin's assign
function (``impl.assign_op.run_assign``, the ``builtin:`` target's), each ladder within
``--budget`` seconds, and prints one table: per assignor and ladder the shapes measured
(members × partitions: seconds), the fitted exponent k of time ≈ c·n^k, and the size at
which one call would pass the 300 s rebalance timeout. The load average is printed before
and after.
"""

from __future__ import annotations

import argparse
import os
import time

from groupcheck.engines.battery.scale import COST_BOUND, DEFAULT_LADDERS, run_ladder
from groupcheck.impl.assign_op import run_assign
from groupcheck.targets.target import BUILTIN_ASSIGNORS


def _row(assignor: str, axis: str, steps: str, k: str, passes: str) -> str:
    return f"| {assignor} | {axis} | {steps} | {k} | {passes} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=30.0,
                        help="seconds per assignor and ladder (default 30)")
    parser.add_argument("--assignor", action="append", choices=BUILTIN_ASSIGNORS)
    args = parser.parse_args()
    began = time.perf_counter()
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    print(_row("assignor", "ladder", "members × partitions: seconds", "k",
               f"one call passes {COST_BOUND:g} s at"))
    print("| --- | --- | --- | ---: | ---: |")
    for assignor in args.assignor or BUILTIN_ASSIGNORS:
        for ladder in DEFAULT_LADDERS:
            run, _ = run_ladder(run_assign, assignor, ladder,
                                time.perf_counter() + args.budget)
            steps = ", ".join(f"{p.shape.members:,}×{p.shape.partitions:,}: {p.seconds:.3g}"
                              for p in run.points)
            k = f"{run.fit.k:.2f}" if run.fit else "—"
            passes = f"≈ {run.fit.size_at(COST_BOUND):.2g} {ladder.axis}" if run.fit else "—"
            print(_row(assignor, ladder.axis, steps, k, passes), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}; "
          f"{time.perf_counter() - began:.0f} s in all")


if __name__ == "__main__":
    main()
