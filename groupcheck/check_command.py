"""``groupcheck check`` and ``groupcheck zoo``, and the ``diff`` command's options (its runs:
`diff_command`).

    groupcheck check --target T [--budget SECONDS] [--parity] [--scope S] [--assignor A,...]
                     [--first] [--json]
    groupcheck zoo [--row R ...] [--peers] [--budget SECONDS]
    groupcheck diff --target A --target B [--assignor A] [--scope S] [--no-vectors]
                    [--stories N [--seed S] [--start I] [--workers W]] [--request FILE]

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
    run_batteries,
    run_codec,
    run_fuzz,
    run_prove,
    run_scenarios,
)
from .cli_values import int_at_least, positive_seconds
from .membership_commands import DEFAULT_FAILURES, CommandError
from .targets.offers import Offer, close_all, expand, parse_assignors
from .targets.registry import TARGET_KINDS, Target, TargetError, resolve

DEFAULT_BUDGET = 120.0
ASSIGNOR_HELP = ("which assignors to check, repeatable or comma-separated (default: every "
                 "assignor the target answers; for python:pkg.module an attribute or a name)")


def offers_of(text: str, assignors: list[str] | None,
              timeout: float | None = None) -> list[Offer]:
    """Every assignor a target answers, narrowed by ``--assignor`` (CommandError on a bad
    target or a narrowing that names nothing it supports)."""
    try:
        return expand(text, parse_assignors(assignors), timeout)
    except TargetError as exc:
        raise CommandError(f"{exc}") from None


def check_scope(text: str | None) -> None:
    if text:
        from .properties.scope import Scope

        try:
            Scope.parse(text)
        except ValueError as exc:
            raise CommandError(f"--scope: {exc}") from None


def cmd_check(args: argparse.Namespace) -> int:
    check_scope(args.scope)
    offers = offers_of(args.target, args.assignor, args.timeout)
    targets = [o.target for o in offers if o.target is not None]
    references = References(args.reference, args.timeout)
    try:
        results = run_batteries(targets, budget=args.budget, parity=args.parity,
                                scope=args.scope, failures=args.failures, seed=args.seed,
                                workers=args.workers, strict=args.strict, first=args.first,
                                reference=references.of if args.reference else None)
    finally:
        close_all(offers)
        references.close()
    if args.json:
        print(json.dumps(check_json(args.target, offers, results), ensure_ascii=False))
    else:
        print(check_text(args.target, offers, results))
    return 1 if any(r.failed for r in results) else 0


def check_text(text: str, offers: list[Offer], results: list[BatteryResult]) -> str:
    """One table per assignor, the assignors not supported, and a summary line each."""
    parts = [r.table() for r in results]
    summary = [f"{len(results)} assignor(s) of {text} checked"]
    by_label = iter(results)
    for offer in offers:
        if not offer.supported:
            summary.append(f"  {offer.label:<20} not supported: {offer.error}")
            continue
        r = next(by_label)
        first = r.first()
        verdict = "every invariant judged held" if first is None else (
            f"VIOLATED {', '.join(sorted({i for e in r.engines for i in e.findings}))}; "
            f"first after {r.after(first[1]):.1f}s ({first[0].engine})")
        summary.append(f"  {offer.label:<20} {verdict}")
    out = "\n\n".join(parts) + "\n\n" + "\n".join(summary)
    failing = [(r, r.first()) for r in results if r.first() is not None]
    if failing:
        r, (engine, finding) = failing[0]  # type: ignore[misc]
        out += (f"\n\nfirst counterexample ({r.assignor}, {engine.engine}):\n"
                f"{finding.detail}")
    return out


def battery_json(result: BatteryResult) -> dict[str, Any]:
    return {"target": result.target, "assignor": result.assignor, "ok": not result.failed,
            "balance": result.balance, "seconds": round(result.seconds, 3),
            "engines": {e.engine: engine_json(result, e) for e in result.engines}}


def engine_json(result: BatteryResult, e: EngineResult) -> dict[str, Any]:
    from .battery import INVARIANT_ROWS

    return {"skipped": e.skipped or None, "runs": e.runs, "seconds": round(e.seconds, 3),
            "checked": list(e.checked), "note": e.note,
            "verdicts": {inv: e.verdict(inv) for inv in INVARIANT_ROWS
                         if e.verdict(inv) != "-"},
            "judged": {inv: n for inv, n in sorted(e.judged.items()) if n},
            "notJudged": {inv: e.why_not(inv) for inv in e.checked
                          if e.verdict(inv) == "not judged"},
            "figures": {k: ({str(x): n for x, n in v.items()} if isinstance(v, dict) else v)
                        for k, v in e.figures.items() if v},
            "violations": {inv: {"violation": f.violation, "file": f.file, "size": f.size,
                                 "afterSeconds": round(result.after(f), 3)}
                           for inv, f in e.findings.items()},
            "inheritedFromKafka": {inv: {"violation": f.violation, "file": f.file,
                                         "label": f.label}
                                   for inv, f in e.inherited.items()}}


def check_json(text: str, offers: list[Offer], results: list[BatteryResult]) -> dict[str, Any]:
    """Every assignor's battery as data, with the assignors the target does not support."""
    by_label = iter(results)
    assignors: dict[str, Any] = {}
    for offer in offers:
        assignors[offer.label] = ({"supported": False, "error": offer.error}
                                  if not offer.supported else
                                  {"supported": True, **battery_json(next(by_label))})
    return {"target": text, "ok": not any(r.failed for r in results),
            "seconds": round(max((r.seconds for r in results), default=0.0), 3),
            "assignors": assignors}


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
    lines = [f"{'row':<7} {'bug':<20} {'target':<42} {'caught by':<11} {'engine':<9} "
             f"{'time':>7}  {'shrunk':<12} control"]
    for o in outcomes:
        caught = o.caught.invariant if o.caught else "ESCAPED"
        if o.caught and o.caught.invariant != o.expected:
            caught += f" (!{o.expected})"
        size = "-"
        if o.caught and o.caught.size is not None:
            unit = "events" if o.engine == "fuzz" else "members"
            size = f"{o.caught.size} {unit}"
        lines.append(f"{o.row:<7} {o.bug:<20} {o.target:<42} {caught:<11} {o.engine:<9} "
                     f"{o.seconds:>6.2f}s  {size:<12} {o.control}")
    good = sum(o.ok for o in outcomes)
    lines.append(f"{good}/{len(outcomes)} mutants caught within budget with a clean control")
    return "\n".join(lines)


def cmd_zoo(args: argparse.Namespace) -> int:
    from .targets.zoo.entries import PEER_ZOO, ZOO

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
# diff (the command itself: diff_command)


class References:
    """``--reference T``: one reference target per assignor, resolved when first asked for
    (a ``java:`` reference starts one JVM per assignor), closed together."""

    def __init__(self, text: str | None, timeout: float | None) -> None:
        self.text = text
        self.timeout = timeout
        self.made: dict[str | None, Target] = {}

    def of(self, target: Target) -> Target | None:
        if not self.text:
            return None
        if target.assignor not in self.made:
            offers = offers_of(self.text, [str(target.assignor)], self.timeout)
            made = [o.target for o in offers if o.target is not None]
            if not made:
                close_all(offers)
                raise CommandError(f"--reference {self.text} does not answer "
                                   f"{target.assignor}: {offers[0].error if offers else ''}")
            self.made[target.assignor] = made[0]
        return self.made[target.assignor]

    def close(self) -> None:
        for made in self.made.values():
            made.close()


def add_broker_option(p: argparse.ArgumentParser) -> None:
    """``--broker``: the cluster the wire targets run on (``$GROUPCHECK_BROKER``)."""
    from .targets.wire.backends.factory import BACKENDS

    p.add_argument("--broker", choices=BACKENDS, default=None,
                   help="the cluster wire targets run on: groupcheck's own broker "
                        "(groupcheck, the default) or librdkafka's mock cluster (mock)")


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    target_help = TARGET_KINDS
    p = sub.add_parser("check", help="run the whole battery against a target")
    p.add_argument("--target", required=True, help=target_help)
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_BUDGET,
                   help="seconds in all, over every assignor (the searching engines share "
                        "what the fixed ones leave; default %(default)s)")
    p.add_argument("--parity", action="store_true",
                   help="also hold the target against the golden vectors")
    p.add_argument("--scope", default=None, help="the prover's scope (default: by budget)")
    p.add_argument("--assignor", action="append", default=None, help=ASSIGNOR_HELP)
    p.add_argument("--timeout", type=positive_seconds, default=None,
                   help="seconds per request for a jsonl: or java: target before it is a "
                        "TIMEOUT (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int_at_least(1), default=None, help="prover processes")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where counterexamples go")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--first", action="store_true",
                   help="stop at the first finding (the rest of the budget is not spent)")
    p.add_argument("--reference", default=None, metavar="T",
                   help="a target (java: for Kafka's client) asked the requests of the "
                        "prover's violations: identical answers label a violation the "
                        "reference's own, other answers make it the target's own (the state "
                        "machine's findings keep the rules)")
    p.add_argument("--strict", action="store_true",
                   help="fail on violations that are Kafka's own behaviour too (rules K1-K4)")
    add_broker_option(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("zoo", help="catch every mutant of the bug zoo")
    p.add_argument("--row", action="append", default=[], help="only these rows (repeatable)")
    p.add_argument("--peers", action="store_true",
                   help="also the real peers behind zoo rows (kafka-python)")
    p.add_argument("--budget", type=positive_seconds, default=None, help="seconds per mutant")
    p.add_argument("--no-control", action="store_true",
                   help="skip running each check on the unmutated builtin")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where counterexamples go")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_zoo)

    p = sub.add_parser("diff", help="find the smallest input on which two targets disagree")
    p.add_argument("--target", action="append", default=[], help=target_help + " (twice)")
    p.add_argument("--assignor", action="append", default=None,
                   help="compare only these assignors (repeatable or comma-separated; "
                        "default: every assignor both targets answer)")
    p.add_argument("--scope", default=None, help="scope of generated requests")
    p.add_argument("--no-vectors", action="store_true", help="generated requests only")
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_BUDGET, help="seconds")
    p.add_argument("--timeout", type=positive_seconds, default=None,
                   help="seconds per request for a jsonl: or java: target (default 10)")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where the input is saved")
    p.add_argument("--request", action="append", default=[], metavar="FILE",
                   help="run this saved assign request on both targets (repeatable)")
    p.add_argument("--stories", type=int_at_least(0), default=0, metavar="N",
                   help="feed both targets N of the audit's random chains of rebalances "
                        "(each request built from the first target's answer)")
    p.add_argument("--seed", type=int, default=0, help="--stories: the audit's seed")
    p.add_argument("--start", type=int_at_least(0), default=0,
                   help="--stories: the first scenario id")
    p.add_argument("--workers", type=int_at_least(1), default=1,
                   help="--stories: worker processes (each with its own JVM)")
    from .diff_command import cmd_diff

    p.set_defaults(func=cmd_diff)
