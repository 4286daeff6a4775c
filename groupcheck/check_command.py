"""``groupcheck check``, ``groupcheck zoo`` and ``groupcheck diff``.

    groupcheck check --target T [--budget SECONDS] [--parity] [--scope S] [--assignor A]
    groupcheck zoo [--row R ...] [--peers] [--budget SECONDS]
    groupcheck diff --target A --target B [--assignor A] [--scope S] [--no-vectors]

Exit codes: 0 every invariant held (``diff``: the targets agree; ``zoo``: every mutant was
caught and every control passed), 1 a violation (a disagreement, a mutant that escaped),
2 bad arguments (one line).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from typing import Any

from .battery import (
    BatteryResult,
    EngineResult,
    Finding,
    run_battery,
    run_codec,
    run_fuzz,
    run_prove,
    run_scenarios,
)
from .membership_commands import DEFAULT_FAILURES, CommandError
from .targets.registry import TARGET_KINDS, Target, TargetError, resolve

DEFAULT_BUDGET = 120.0


def _resolve(text: str, assignor: str | None = None, timeout: float | None = None) -> Target:
    try:
        return resolve(text, assignor=assignor, timeout=timeout)
    except TargetError as exc:
        raise CommandError(f"{exc}") from None


def _check_scope(text: str | None) -> None:
    if text:
        from .properties.scope import Scope

        try:
            Scope.parse(text)
        except ValueError as exc:
            raise CommandError(f"--scope: {exc}") from None


def cmd_check(args: argparse.Namespace) -> int:
    if args.budget <= 0:
        raise CommandError("check: --budget must be positive")
    _check_scope(args.scope)
    target = _resolve(args.target, args.assignor, args.timeout)
    try:
        result = run_battery(target, budget=args.budget, parity=args.parity, scope=args.scope,
                             failures=args.failures, seed=args.seed, workers=args.workers,
                             strict=args.strict)
    finally:
        target.close()
    if args.json:
        print(json.dumps(battery_json(result), ensure_ascii=False))
    else:
        print(result.table())
        first = result.first()
        if first is not None:
            print(f"\nfirst counterexample ({first[0].engine}):\n{first[1].detail}")
    return 1 if result.failed else 0


def battery_json(result: BatteryResult) -> dict[str, Any]:
    return {"target": result.target, "ok": not result.failed,
            "seconds": round(result.seconds, 3),
            "engines": {e.engine: {
                "skipped": e.skipped or None, "runs": e.runs, "seconds": round(e.seconds, 3),
                "checked": list(e.checked), "note": e.note,
                "violations": {inv: {"violation": f.violation, "file": f.file, "size": f.size}
                               for inv, f in e.findings.items()},
                "inheritedFromKafka": {inv: {"violation": f.violation, "file": f.file}
                                       for inv, f in e.inherited.items()}}
                for e in result.engines}}


# ---------------------------------------------------------------------------------------
# zoo


@dataclass
class ZooOutcome:
    row: str
    bug: str
    target: str
    engine: str
    expected: str
    caught: Finding | None
    seconds: float
    budget: float
    control: str  # "passed" | "FAILED: ..." | "not run"

    @property
    def ok(self) -> bool:
        return (self.caught is not None and self.seconds <= self.budget
                and self.control in ("passed", "not run"))


def run_zoo_check(entry: Any, target: Target, failures: str) -> EngineResult:
    """The one check a zoo entry names, on ``target``."""
    if entry.engine == "scenario":
        return run_scenarios(target, entry.scenarios, failures, entry.expect)
    if entry.engine == "prove":
        return run_prove(target, entry.scope, failures)
    if entry.engine == "codec":
        return run_codec(target, failures)
    if entry.engine == "fuzz":
        return run_fuzz(target, entry.budget, failures)
    raise ValueError(f"unknown engine {entry.engine}")


def run_zoo_entry(entry: Any, failures: str, control: bool = True) -> ZooOutcome:
    target = resolve(entry.target)
    started = time.perf_counter()
    try:
        result = run_zoo_check(entry, target, failures)
    finally:
        target.close()
    seconds = time.perf_counter() - started
    caught = None
    if result.findings:
        caught = result.findings.get(entry.invariant) or next(iter(result.findings.values()))
    verdict = "not run"
    if control:
        base = resolve(entry.base)
        try:
            base_result = run_zoo_check(entry, base, failures)
        finally:
            base.close()
        verdict = "passed" if not base_result.findings else \
            "FAILED: " + next(iter(base_result.findings.values())).violation
    return ZooOutcome(entry.row, entry.bug, entry.target, entry.engine, entry.invariant,
                      caught, seconds, entry.budget, verdict)


def zoo_table(outcomes: list[ZooOutcome]) -> str:
    lines = [f"{'row':<6} {'bug':<20} {'target':<42} {'caught by':<11} {'engine':<9} "
             f"{'time':>7}  {'shrunk':<12} control"]
    for o in outcomes:
        caught = o.caught.invariant if o.caught else "ESCAPED"
        if o.caught and o.caught.invariant != o.expected:
            caught += f" (!{o.expected})"
        size = "-"
        if o.caught and o.caught.size is not None:
            unit = "events" if o.engine == "fuzz" else "members"
            size = f"{o.caught.size} {unit}"
        lines.append(f"{o.row:<6} {o.bug:<20} {o.target:<42} {caught:<11} {o.engine:<9} "
                     f"{o.seconds:>6.2f}s  {size:<12} {o.control}")
    good = sum(o.ok for o in outcomes)
    lines.append(f"{good}/{len(outcomes)} mutants caught within budget with a clean control")
    return "\n".join(lines)


def cmd_zoo(args: argparse.Namespace) -> int:
    from .targets.zoo import PEER_ZOO, ZOO

    entries = list(ZOO) + (list(PEER_ZOO) if args.peers else [])
    if args.row:
        entries = [e for e in entries if e.row in args.row]
        if not entries:
            raise CommandError(f"zoo: no row {', '.join(args.row)}; rows are "
                               f"{', '.join(e.row for e in ZOO)}")
    outcomes = []
    for entry in entries:
        if args.budget is not None:
            from dataclasses import replace

            entry = replace(entry, budget=args.budget)
        try:
            outcomes.append(run_zoo_entry(entry, args.failures, control=not args.no_control))
        except TargetError as exc:
            raise CommandError(str(exc)) from None
        if args.verbose and outcomes[-1].caught:
            print(f"row {entry.row}: {outcomes[-1].caught.violation}\n"
                  f"  {outcomes[-1].caught.file}")
    print(zoo_table(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


# ---------------------------------------------------------------------------------------
# diff


def cmd_diff(args: argparse.Namespace) -> int:
    from .differential import describe, run_diff

    if len(args.target) != 2:
        raise CommandError("diff: give exactly two --target options")
    _check_scope(args.scope)
    a = _resolve(args.target[0], args.assignor, args.timeout)
    b = _resolve(args.target[1], args.assignor, args.timeout)
    try:
        if a.assign is None or b.assign is None:
            raise CommandError("diff: both targets need an assign function (an assignor)")
        assignor = args.assignor or a.assignor or b.assignor
        if a.assignor != b.assignor and args.assignor is None:
            print(f"note: {a.name} runs {a.assignor!r}, {b.name} runs {b.assignor!r}; "
                  f"requests name {assignor!r}")
        assert assignor is not None
        result = run_diff(a, b, assignor=assignor, scope=args.scope or
                          "members=3,topics=2,partitions=2,generations=2,claims=1,"
                          "symmetry=2",
                          vectors=not args.no_vectors, budget=args.budget)
    finally:
        a.close()
        b.close()
    print(describe(result, a.name, b.name))
    if not result.agree and args.failures:
        from .battery import save_json

        path = save_json(args.failures, f"diff-{a.name}-vs-{b.name}", {
            **(result.request or {}), "groupcheck": {
                "format": "groupcheck-diff/1", "targets": [a.name, b.name],
                "invariant": "TIMEOUT" if result.timeout else "DIFF",
                "answers": [result.a, result.b], "source": result.source}})
        print(f"saved: {path}")
    return 0 if result.agree else 1


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    target_help = TARGET_KINDS
    p = sub.add_parser("check", help="run the whole battery against a target")
    p.add_argument("--target", required=True, help=target_help)
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET,
                   help="seconds in all (the state machine gets what the rest leaves; "
                        "default %(default)s)")
    p.add_argument("--parity", action="store_true",
                   help="also hold the target against the golden vectors")
    p.add_argument("--scope", default=None, help="the prover's scope (default: by budget)")
    p.add_argument("--assignor", default=None,
                   help="which assignor a jsonl: or java: target runs (default sticky)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds per request for a jsonl: or java: target before it is a "
                        "TIMEOUT (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=None, help="prover processes")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where counterexamples go")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--strict", action="store_true",
                   help="fail on violations that are Kafka's own behaviour too (rules K1-K3)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("zoo", help="catch every mutant of the bug zoo")
    p.add_argument("--row", action="append", default=[], help="only these rows (repeatable)")
    p.add_argument("--peers", action="store_true",
                   help="also the real peers behind zoo rows (kafka-python)")
    p.add_argument("--budget", type=float, default=None, help="seconds per mutant")
    p.add_argument("--no-control", action="store_true",
                   help="skip running each check on the unmutated builtin")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where counterexamples go")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_zoo)

    p = sub.add_parser("diff", help="find the smallest input on which two targets disagree")
    p.add_argument("--target", action="append", default=[], help=target_help + " (twice)")
    p.add_argument("--assignor", default=None, help="the assignor named in the requests")
    p.add_argument("--scope", default=None, help="scope of generated requests")
    p.add_argument("--no-vectors", action="store_true", help="generated requests only")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET, help="seconds")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds per request for a jsonl: or java: target (default 10)")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where the input is saved")
    p.set_defaults(func=cmd_diff)
