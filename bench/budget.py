"""Benchmark: does ``--budget`` hold? The wall time of whole commands against their budget.

    python bench/budget.py [--budget S ...] [--target KIND ...] [--command C ...]

Runs each command that takes ``--budget`` (``check``, ``scenarios``, ``diff``; ``prove``
and ``fuzz`` take none) on a builtin target, a ``python:`` target, a ``jsonl:`` target (a
process: groupcheck's own JSON-lines server) and a ``java:`` target (Kafka's client at
``$GROUPCHECK_KAFKA_CLASSPATH``), for budgets of 1, 3, 10, 30 and 120 s, each in a fresh
process, and measures the wall time of the whole command as a user sees it (interpreter
start, imports, the run, the output, the exit). A row is within its bound when the wall
time is at most the budget plus 10 %, plus one start of the process of a ``java:`` or
``jsonl:`` target (what the command leaves out of its budget: resolving the target and
starting its process, measured in a process of its own just before and just after the row,
under the same load; the mean of the two).
groupcheck's modules are compiled to bytecode first and the commands run with bytecode on,
as an installed package runs (``PYTHONDONTWRITEBYTECODE`` in the environment would have
every command compile every module it imports afresh). Prints a Markdown table (with the
CPU seconds of each command, the figure a busy machine does not inflate) and the load
average before and after; exits 1 when a row is out of bound.
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGETS = (1.0, 3.0, 10.0, 30.0, 120.0)
SLACK = 0.10  # of the budget
TARGETS = {"builtin": "builtin:range",
           "python": "python:groupcheck.impl.assignors.range:RangeAssignor",
           "jsonl": "jsonl:groupcheck jsonl",
           "java": "java:"}
COMMANDS = ("check", "scenarios", "diff")
#: times what a command leaves out of its budget for a process target (``sys.argv[1]``):
#: its resolution and its process's start
PROCESS_START = """
import os, sys, time
from groupcheck import engines
from groupcheck.targets.settings import Settings
settings = Settings.from_environ(os.environ)
began = time.perf_counter()
offers = engines.offers_of(sys.argv[1], ["range"], None, settings)
engines.started(o.target for o in offers if o.target is not None)
print(time.perf_counter() - began)
engines.close_all(offers)
"""
#: the kinds whose process start a command leaves out of its budget
PROCESSES = ("jsonl", "java")


def argv_of(command: str, target: str, budget: float, failures: str) -> list[str]:
    """The command line of one run (range on every target; diff against the builtin)."""
    tail = ["--budget", f"{budget:g}", "--quiet", "--failures", failures]
    if command == "diff":
        return ["diff", "--target", target, "--target", "builtin:range", "--assignor",
                "range", *tail]
    return [command, "--target", target, "--assignor", "range", *tail]


#: the commands' environment: bytecode written and read, as an installed package has it
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
FLOORS = ("groupcheck", "groupcheck.impl", "groupcheck.properties", "groupcheck.broker",
          "groupcheck.targets", "groupcheck.model", "groupcheck.audit", "groupcheck.engines")


def compiled() -> None:
    """groupcheck's sources compiled to bytecode (what ``pip install`` does)."""
    for name in FLOORS:
        for folder in importlib.import_module(name).__path__:
            compileall.compile_dir(folder, quiet=1)


def wall(argv: list[str], timeout: float) -> tuple[float, float, int]:
    """Seconds the command ``groupcheck ARGV`` took in a fresh process, the CPU seconds it
    and the processes it waited for used (the figure a busy machine does not inflate), and
    its exit code."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "groupcheck", *argv], capture_output=True,
                          timeout=timeout, check=False, env=ENV)
    seconds = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
    return seconds, cpu, done.returncode


def process_start(target: str) -> float:
    """One start of ``target``'s process as a command makes it."""
    return float(subprocess.run([sys.executable, "-c", PROCESS_START, target],
                                capture_output=True, text=True, timeout=300, check=True,
                                env=ENV).stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, action="append", help="seconds (repeatable)")
    parser.add_argument("--target", action="append", choices=TARGETS)
    parser.add_argument("--command", action="append", choices=COMMANDS)
    args = parser.parse_args()
    budgets = args.budget or BUDGETS
    kinds = args.target or list(TARGETS)
    if "java" in kinds and not os.environ.get("GROUPCHECK_KAFKA_CLASSPATH"):
        parser.error("java: needs $GROUPCHECK_KAFKA_CLASSPATH (or leave out --target java)")
    began = time.perf_counter()
    compiled()
    print(f"load average before: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    bad = 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        print("| target | command | budget (s) | wall (s) | overrun | CPU (s) | process start "
              "(s) | bound (s) | within bound |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for kind in kinds:
            for command in args.command or COMMANDS:
                for budget in budgets:
                    argv = argv_of(command, TARGETS[kind], budget, str(folder / "failures"))
                    started = kind in PROCESSES
                    before = process_start(TARGETS[kind]) if started else 0.0
                    seconds, cpu, code = wall(argv, budget * 3 + 300)
                    allowance = (before + process_start(TARGETS[kind])) / 2 if started else 0.0
                    bound = budget * (1 + SLACK) + allowance
                    ok = seconds <= bound and code in (0, 1)
                    bad += not ok
                    print(f"| {TARGETS[kind]} | {command} | {budget:g} | {seconds:.2f} | "
                          f"{(seconds - budget) / budget:+.0%} | {cpu:.2f} | "
                          f"{f'{allowance:.2f}' if started else '-'} | {bound:.2f} | "
                          f"{'yes' if ok else 'NO'}{'' if code in (0, 1) else f' (exit {code})'}"
                          f" |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}; "
          f"{time.perf_counter() - began:.0f} s in all")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
