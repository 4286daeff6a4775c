"""How long ``groupcheck check`` takes to find each mutant of the bug zoo.

For every row of the zoo (``targets/zoo.py``, what ``groupcheck zoo`` replays) this runs

    groupcheck check --target mutant:<name> --budget B --first --json

in a fresh process, so the searching engines look for the defect on their own (the zoo
row's own trigger scenario is not part of ``check``), and prints, per mutant, the time
from the start of the run to its first finding, the engine that made it and the invariant
it broke, and the command's wall time (imports and process start included). ``--first``
only stops the run after that finding; it does not change how long finding takes.

    python bench/check_zoo.py [--budget 120] [--row R ...] [--parity] [--seed S] [--jsonl]

``--jsonl`` checks each mutant as a user checks a process instead: the target is
``jsonl:groupcheck jsonl --target mutant:<name>`` (the mutant served over the JSON-lines
contract), with no ``--assignor``, so the process is asked which assignors it serves (the
contract's ``assignors`` request) and is checked on those (a mutant declares its own name,
custom ones included; a codec mutant Kafka's four).
``--row`` runs the rows in the order given.

The last lines give the median time to the first finding over every row (a row not found
within the budget counts as the budget), the machine's cores and its load average before
and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from groupcheck.engines.battery.check_report import CheckJson
from groupcheck.targets.zoo.entries import ZOO

ROOT = Path(__file__).resolve().parent.parent


def load() -> str:
    with open("/proc/loadavg", encoding="ascii") as fh:
        return " ".join(fh.read().split()[:3])


@dataclass(frozen=True)
class Row:
    """One mutant's run: its earliest finding (seconds, engine, invariant), or why the run
    failed, and the wall-clock seconds."""

    wall: float
    first: tuple[float, str, str] | None = None
    error: str = ""


def first_finding(report: CheckJson) -> tuple[float, str, str] | None:
    """(seconds, engine, invariant) of the earliest finding over every assignor."""
    found = []
    for assignor in report["assignors"].values():
        if "engines" not in assignor:
            continue
        for engine, body in assignor["engines"].items():
            for inv, v in body["violations"].items():
                found.append((float(v["afterSeconds"]), engine, inv))
    return min(found) if found else None


def served(target: str) -> str:
    """``target`` served as a process: the ``jsonl:`` target string that runs it."""
    return f"jsonl:{sys.executable} -m groupcheck jsonl --target {target}"


def shown(target: str, jsonl: bool) -> str:
    """The row's target as printed (no machine paths)."""
    return f"jsonl:groupcheck jsonl --target {target}" if jsonl else target


def run_row(target: str, budget: float, parity: bool, seed: int) -> Row:
    with tempfile.TemporaryDirectory() as failures:
        command = [sys.executable, "-m", "groupcheck", "check", "--target", target,
                   "--budget", str(budget), "--first", "--json", "--seed", str(seed),
                   "--failures", failures] + (["--parity"] if parity else [])
        started = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                              timeout=budget * 3 + 120)
        wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        return Row(wall, error=(proc.stderr.strip().splitlines() or ["?"])[-1])
    return Row(wall, first_finding(json.loads(proc.stdout)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--row", action="append", default=[])
    parser.add_argument("--parity", action="store_true", help="check --parity as well")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jsonl", action="store_true",
                        help="serve each mutant as a jsonl: process (groupcheck jsonl --target)")
    args = parser.parse_args(argv)
    by_row = {e.row: e for e in ZOO}
    rows = [by_row[r] for r in args.row if r in by_row] if args.row else list(ZOO)
    width = 62 if args.jsonl else 40
    print(f"groupcheck check --budget {args.budget:g} --first{' --parity' if args.parity else ''}"
          f" on {len(rows)} zoo mutants{' served as jsonl: processes' if args.jsonl else ''}; "
          f"{os.cpu_count()} cores, load average {load()}")
    print(f"{'row':<7} {'mutant':<{width}} {'found':>8} {'engine':<10} {'invariant':<9} "
          f"{'wall':>7}  zoo expects")
    times = []
    for entry in rows:
        target = served(entry.target) if args.jsonl else entry.target
        name = shown(entry.target, args.jsonl)
        out = run_row(target, args.budget, args.parity, args.seed)
        if out.error:
            error = out.error.replace(target, name)
            print(f"{entry.row:<7} {name:<{width}} {'ERROR':>8} {error}", flush=True)
            times.append(args.budget)
            continue
        first = out.first
        if first is None:
            found = f"{'-':>8} {'ESCAPED':<10} {'-':<9}"
            times.append(args.budget)
        else:
            seconds, engine, invariant = first
            times.append(seconds)
            found = f"{seconds:>7.1f}s {engine:<10} {invariant:<9}"
        print(f"{entry.row:<7} {name:<{width}} {found} {out.wall:>6.1f}s  "
              f"{entry.invariant} ({entry.engine})", flush=True)
    print(f"median time to the first finding: {statistics.median(times):.1f}s over "
          f"{len(times)} mutants ({sum(t < args.budget for t in times)} found); "
          f"load average now {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
