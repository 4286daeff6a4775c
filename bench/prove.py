"""The exhaustive scope prover's speed, per target and scope: one command for the table in
BENCHMARKS.md.

Each row is one `prove` run on two worker processes (``--workers``): representatives
checked, the labelled configurations they stand for (what symmetry saved), wall and CPU
time, configurations per second, and the 1-minute load average before and after the run
(the machine is shared; CPU seconds are the steadier figure). The rate counts
representatives; ``labelled/s`` counts what they stand for.

    python bench/prove.py [--targets builtin:sticky,...] [--scopes ";"-separated scopes]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from groupcheck.properties.scope import Scope, prove  # noqa: E402
from groupcheck.targets.registry import resolve  # noqa: E402

TARGETS = "builtin:sticky,builtin:cooperative-sticky,builtin:range,builtin:roundrobin"
SCOPES = "stale=0;;symmetry=2;partitions=3,symmetry=2"


def row(target: str, scope_text: str, workers: int) -> str:
    resolved = resolve(target)
    assert resolved.assign is not None and resolved.assignor is not None
    scope = Scope.parse(scope_text)
    load = os.getloadavg()[0]
    cpu = time.process_time()
    report = prove(resolved.assign, resolved.assignor, scope, target=target, workers=workers,
                   sticky=resolved.balanced, session=resolved.assign_session)
    own = time.process_time() - cpu  # the parent's share (collecting, merging)
    found = ",".join(sorted(report.violations)) or "none"
    return (f"| {target} | {scope_text or '(default)'} | {report.configurations:,} | "
            f"{report.labelled:,} | x{report.labelled / max(report.configurations, 1):.1f} | "
            f"{report.seconds:.1f} | {report.rate:,.0f} | "
            f"{report.labelled / max(report.seconds, 1e-9):,.0f} | "
            f"{report.cpu_seconds + own:.1f} | {found} | {load:.2f}–{os.getloadavg()[0]:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--targets", default=TARGETS)
    parser.add_argument("--scopes", default=SCOPES, help="';'-separated; empty = default")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, {args.workers} worker(s)")
    print("| target | scope | configurations | labelled | saved | wall s | configurations/s "
          "| labelled/s | CPU s | violated | load |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for scope_text in args.scopes.split(";"):
        for target in args.targets.split(","):
            print(row(target, scope_text.strip(), args.workers), flush=True)


if __name__ == "__main__":
    main()
