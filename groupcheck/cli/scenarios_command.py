"""``groupcheck scenarios --target T``: ``check``'s scenarios engine alone — the audit's
seeded random group stories played on a target in this process; ``--count`` replays
exactly the stories a check reported. Exit codes: 0 every invariant held, 1 a violation,
2 bad arguments."""

from __future__ import annotations

import argparse
from typing import Any

from .. import engines
from .progress_view import CommandClock, shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    add_failures_option,
    add_quiet_option,
    add_strict_option,
    int_at_least,
    positive_seconds,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    clock = CommandClock(getattr(args, "started", None))
    with clock.starting(args.target):
        target = engines.resolved(args.target, args.assignor, args.timeout, env.settings)
    try:
        if target.assign is None:
            raise engines.EngineInputError(f"scenarios: {args.target} has no assign function")
        if args.assignor and target.assignor not in (None, args.assignor):
            raise engines.EngineInputError(f"{args.target} runs {target.assignor} only; --assignor "
                                           f"{args.assignor} names none of it")
        with shown(args.quiet) as progress:
            result = engines.run_scenarios_engine(
                target, clock.left(args.budget), args.failures, args.seed, count=args.count,
                strict=args.strict, progress=progress)
    finally:
        target.close()
    battery = engines.BatteryResult(target.name, [result], result.seconds)
    print(battery.table())
    first = battery.first()
    if first is not None:
        print(f"\nfirst counterexample:\n{first[1].detail}")
    return 1 if battery.failed else 0


def register(sub: Any) -> None:
    p = sub.add_parser("scenarios", help="play the audit's random group stories on a target "
                                         "in this process (check's scenarios engine)")
    p.add_argument("--target", required=True,
                   help="any target with an assign function (builtin:, mutant:, python:, "
                        "kafka-python:, jsonl:)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int_at_least(1), default=None,
                   help="play exactly this many stories (default: as many as --budget allows)")
    p.add_argument("--budget", type=positive_seconds, default=30.0,
                   help="seconds (default %(default)s)")
    p.add_argument("--assignor", default=None, help="which assignor a jsonl: target runs")
    p.add_argument("--timeout", type=positive_seconds, default=None,
                   help="seconds per request for a jsonl: target")
    add_strict_option(p)
    add_failures_option(p)
    add_quiet_option(p)
    p.set_defaults(func=run)
