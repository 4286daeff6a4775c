"""The exhaustive scope prover's speed, per target and scope: one command for the table in
BENCHMARKS.md.

Each row is one `prove` run on two worker processes (``--workers``): classes checked (one
representative run each), the configurations of the scope they cover (what symmetry
saved), wall and CPU time, classes and configurations per second, and the 1-minute load
average before and after the run (the machine is shared; CPU seconds are the steadier
figure).

    python bench/prove.py [--targets builtin:sticky,...] [--scopes ";"-separated scopes]
    python bench/prove.py --zoo [--scopes ...]   # what each scope finds on the bug zoo
    python bench/prove.py --no-gaps ...          # no I4b gap: claim-blind proofs where sound

It measures the groupcheck it imports: the checkout (interpreted), or an installed copy
whose hot path ``scripts/compile_prover.py`` compiled (``PYTHONPATH=SITE``, as in the proofs
environments of ``tox.ini``); the first line says which.

Rows say whether the run is a proof (``symmetry`` 0 or 1) or a sample (2, 3), and whether
claims were aggregated (``--no-gaps`` on a target whose leader never sees them). ``--zoo``
prints, per mutant of the bug zoo and per scope, the invariants broken somewhere: the
evidence that a smaller default scope keeps the bug-finding power of a bigger one.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from groupcheck.properties.scope.prover import prove
from groupcheck.properties.scope.space import Scope
from groupcheck.targets.registry import resolve

ROOT = Path(__file__).resolve().parent.parent

TARGETS = "builtin:sticky,builtin:cooperative-sticky,builtin:range,builtin:roundrobin"
SCOPES = ";members=3,topics=2,partitions=3"
ZOO_SCOPES = "partitions=2,symmetry=2;"


def row(target: str, scope_text: str, workers: int, gaps: bool = True) -> str:
    resolved = resolve(target)
    assert resolved.assign is not None and resolved.assignor is not None
    scope = Scope.parse(scope_text)
    load = os.getloadavg()[0]
    cpu = time.process_time()
    report = prove(resolved.assign, resolved.assignor, scope, target=target, workers=workers,
                   sticky=resolved.balanced, session=resolved.assign_session, gaps=gaps)
    own = time.process_time() - cpu  # the parent's share (collecting, merging)
    found = ",".join(sorted(report.violations)) or "none"
    kind = "proof" if report.proved else "sample"
    if report.claims_hidden:
        kind += f", claims aggregated ({report.claims_hidden})"
    return (f"| {target} | {scope_text or '(default)'} | {kind} | {report.configurations:,} | "
            f"{report.labelled:,} | x{report.labelled / max(report.configurations, 1):.1f} | "
            f"{report.seconds:.1f} | {report.rate:,.0f} | "
            f"{report.labelled / max(report.seconds, 1e-9):,.0f} | "
            f"{report.cpu_seconds + own:.1f} | {found} | {load:.2f}–{os.getloadavg()[0]:.2f} |")


def _build() -> str:
    """Whether the prover's hot path runs compiled (scripts/compile_prover.py)."""
    from groupcheck.properties.scope import judgement

    if judgement.__file__ is not None and judgement.__file__.endswith(".py"):
        return "interpreted"
    return "compiled (mypyc)"


def zoo(scopes: list[str], workers: int) -> None:
    """Per mutant of the bug zoo, the invariants each scope finds broken."""
    from groupcheck.targets.zoo.entries import ASSIGNOR_MUTANTS

    print("| mutant | " + " | ".join(s or "(default)" for s in scopes) + " |")
    print("| --- |" + " --- |" * len(scopes))
    for name in ["sticky-user-data-v0", "cooperative-no-withhold", *sorted(ASSIGNOR_MUTANTS)]:
        resolved = resolve(f"mutant:{name}")
        assert resolved.assign is not None and resolved.assignor is not None
        cells = []
        for text in scopes:
            report = prove(resolved.assign, resolved.assignor, Scope.parse(text),
                           workers=workers, sticky=resolved.balanced,
                           session=resolved.assign_session)
            cells.append(",".join(sorted(report.violations)) or "none")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--targets", default=TARGETS)
    parser.add_argument("--scopes", default=SCOPES, help="';'-separated; empty = default")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--zoo", action="store_true", help="the bug zoo's findings per scope")
    parser.add_argument("--no-gaps", action="store_true",
                        help="skip the I4b gap (claim-blind proofs where they are sound)")
    args = parser.parse_args()
    if args.zoo:
        zoo([s.strip() for s in (args.scopes if args.scopes != SCOPES else ZOO_SCOPES)
             .split(";")], args.workers)
        return
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, {args.workers} worker(s), {_build()}")
    print("| target | scope | kind | classes | configurations | saved | wall s | classes/s "
          "| configurations/s | CPU s | violated | load |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for scope_text in args.scopes.split(";"):
        for target in args.targets.split(","):
            print(row(target, scope_text.strip(), args.workers, not args.no_gaps), flush=True)


if __name__ == "__main__":
    main()
