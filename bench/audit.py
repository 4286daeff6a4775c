"""Audit throughput: the Spark pipeline on ``local[2]`` vs a plain single-process loop.

    python bench/audit.py [--scenarios 4000] [--seed 0] [--master local[2]]
                          [--target T ...] [--scaling 10000,100000,1000000] [--out DIR]

Both run the same targets on the same scenarios (``random_spec(seed, i)``, i < N) through
the same chain driver; the loop does it in this process, one scenario after another, the
pipeline with ``mapInArrow`` on Arrow batches. The pipeline figure counts everything from
the first chunk to the written report (aggregates, Parquet, HTML) except starting the JVM,
which is shown on its own. ``--scaling`` then runs the pipeline alone at each size.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from groupcheck.audit.chain import run_chain
from groupcheck.audit.pipeline import AuditConfig, run_audit
from groupcheck.audit.scenarios import random_spec
from groupcheck.audit.session import spark_session
from groupcheck.audit.targets import DEFAULT_TARGETS
from groupcheck.engines.resolving import resolve_audit_target

ROOT = Path(__file__).resolve().parent.parent


def plain_loop(targets: list[str], scenarios: int, seed: int) -> float:
    resolved = [resolve_audit_target(t) for t in targets]
    started = time.perf_counter()
    for i in range(scenarios):
        spec = random_spec(seed, i)
        for t in resolved:
            run_chain(t, spec)
    return time.perf_counter() - started


def pipeline(spark: object, targets: list[str], scenarios: int, seed: int,
             out: Path) -> tuple[float, float]:
    """(seconds for the whole audit, seconds for its chunks alone)."""
    shutil.rmtree(out, ignore_errors=True)
    config = AuditConfig(targets=targets, scenarios=scenarios, seed=seed, out=str(out))
    started = time.perf_counter()
    run_audit(config, resolve_audit_target, spark=spark)
    timings = json.loads((out / "timings.json").read_text())
    return time.perf_counter() - started, float(timings["chunks_seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--target", action="append", default=None)
    parser.add_argument("--scaling", default="", help="comma-separated sizes, e.g. 10000,"
                                                       "100000,1000000")
    parser.add_argument("--no-loop", action="store_true", help="skip the plain loop")
    parser.add_argument("--out", default=None, help="scratch folder (default: a temp dir)")
    args = parser.parse_args()
    targets = list(args.target or DEFAULT_TARGETS)
    scratch = Path(args.out or tempfile.mkdtemp(prefix="groupcheck-bench-audit-"))
    scratch.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"targets: {', '.join(targets)}; cpus {os.cpu_count()}; load at start {load:.1f}")
    started = time.perf_counter()
    spark = spark_session(args.master, scratch / "_package")
    jvm = time.perf_counter() - started
    rows: list[tuple[str, int, float, float]] = []
    if not args.no_loop:
        loop_s = plain_loop(targets, args.scenarios, args.seed)
        rows.append(("plain loop (1 process)", args.scenarios, loop_s, loop_s))
        rows.append((f"pipeline {args.master}", args.scenarios,
                     *pipeline(spark, targets, args.scenarios, args.seed, scratch / "cmp")))
    for size in filter(None, (s.strip() for s in args.scaling.split(","))):
        n = int(size)
        rows.append((f"pipeline {args.master}", n,
                     *pipeline(spark, targets, n, args.seed, scratch / f"s{n}")))
        print(f"  {n:,} scenarios: {rows[-1][2]:.1f}s", flush=True)
    spark.stop()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nJVM and session start: {jvm:.1f}s (not counted below); load at end {load:.1f}\n")
    print("| run | scenarios | seconds (all) | scenarios/s (all) | seconds (scenarios only) "
          "| scenarios/s (scenarios only) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, n, seconds, work in rows:
        print(f"| {name} | {n:,} | {seconds:.1f} | {n / seconds:.0f} | {work:.1f} | "
              f"{n / work:.0f} |")
    if not args.no_loop:
        print(f"\nspeed-up of the pipeline over the loop: {rows[0][2] / rows[1][2]:.2f}x "
              f"whole audit, {rows[0][3] / rows[1][3]:.2f}x scenarios only (the pipeline's "
              "'all' also writes Parquet, aggregates and the HTML report)")
    if args.out is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
