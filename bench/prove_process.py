"""The scope prover's speed over process targets against the same assignor in process: one
command for the table in BENCHMARKS.md ("The prover over process targets").

For each of Kafka's four assignors, one row per way of running it: the builtin in process
(with its assign session, as ``prove`` runs it), ``jsonl:groupcheck jsonl`` one request at a
time (``--sequential``: the transport before pipelining) and pipelined, a ``python:``
assignor served by ``bench/serve_target.py`` behind ``jsonl:``, and Kafka's client
(``java:``, when ``$GROUPCHECK_KAFKA_CLASSPATH`` is set). Every run is on one process
(process targets are not fork-safe). Columns: classes judged (one configuration each), wall
seconds and classes per second, then CPU seconds of the harness and of the target's process
(a child, counted once it has exited) and classes per CPU second of both: the machine
is shared, and the CPU figure is the one other work disturbs least. The 1-minute load
average is printed before and after each row.

    python bench/prove_process.py [--assignors range,...] [--scope TEXT] [--sequential]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

from groupcheck.properties.scope.prover import prove
from groupcheck.properties.scope.space import Scope
from groupcheck.targets.registry import resolve
from groupcheck.targets.settings import Settings

HERE = Path(__file__).resolve().parent
ASSIGNORS = "range,roundrobin,sticky,cooperative-sticky"
CLASSES = {"range": "range:RangeAssignor", "roundrobin": "roundrobin:RoundRobinAssignor",
           "sticky": "sticky:StickyAssignor",
           "cooperative-sticky": "sticky:CooperativeStickyAssignor"}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def row(label: str, target_text: str, assignor: str, scope: Scope, batch: bool) -> str:
    load = os.getloadavg()[0]
    target = resolve(target_text, assignor=None if target_text.startswith("builtin:")
                     else assignor, settings=Settings.from_environ(os.environ))
    assert target.assign is not None and target.assignor is not None
    if target.call is not None:
        target.call({"op": "ping"})  # the process's start-up is not the prover's
    cpu, children = time.process_time(), _children_cpu()
    report = prove(target.assign, target.assignor, scope, target=target.name, workers=1,
                   sticky=target.balanced, session=target.assign_session,
                   assign_many=target.batch if batch else None)
    own = time.process_time() - cpu
    target.close()
    served = _children_cpu() - children
    found = ",".join(sorted(report.violations)) or "none"
    configs = report.configurations
    return (f"| {assignor} | {label} | {configs:,} | {report.seconds:.1f} | "
            f"{configs / max(report.seconds, 1e-9):,.0f} | {own:.1f} | {served:.1f} | "
            f"{configs / max(own + served, 1e-9):,.0f} | {found} | "
            f"{load:.1f}–{os.getloadavg()[0]:.1f} |")


def ways(assignor: str, sequential: bool) -> list[tuple[str, str, bool]]:
    ours = f"jsonl:{sys.executable} -m groupcheck jsonl"
    served = (f"jsonl:{sys.executable} {HERE / 'serve_target.py'} "
              f"python:groupcheck.impl.assignors.{CLASSES[assignor]}")
    out = [("in process (builtin)", f"builtin:{assignor}", False)]
    if sequential:
        out.append(("jsonl: groupcheck jsonl, one at a time", ours, False))
    out += [("jsonl: groupcheck jsonl, pipelined", ours, True),
            ("jsonl: python: assignor served, pipelined", served, True)]
    if os.environ.get("GROUPCHECK_KAFKA_CLASSPATH"):
        out.append(("java: Kafka's client, pipelined", "java:", True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--assignors", default=ASSIGNORS)
    parser.add_argument("--scope", default="", help="a scope (default: the prover's)")
    parser.add_argument("--sequential", action="store_true",
                        help="also run jsonl: one request at a time")
    args = parser.parse_args()
    scope = Scope.parse(args.scope)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, scope {scope.text()}")
    print("| assignor | target | classes | wall s | classes/s | harness CPU s "
          "| target CPU s | classes/CPU s | violated | load |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for assignor in args.assignors.split(","):
        for label, target_text, batch in ways(assignor, args.sequential):
            print(row(label, target_text, assignor, scope, batch), flush=True)


if __name__ == "__main__":
    main()
