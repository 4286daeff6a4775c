"""``groupcheck scenarios --target T``: ``check``'s scenarios engine alone — the audit's
seeded random group stories played on a target in this process; ``--count`` replays
exactly the stories a check reported. Exit codes: 0 every invariant held, 1 a violation,
2 bad arguments.

``--json``: `output.JsonEnvelope` whose ``result`` is ``check --json``'s object, of one assignor.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import engines
from ..targets.offers import Offer
from .output import Output
from .progress_view import CommandClock, shown
from .shared import (
    ASSIGN_KINDS,
    NO_ENVIRONMENT,
    Environment,
    add_assignor_option,
    add_failures_option,
    add_json_option,
    add_quiet_option,
    add_seed_option,
    add_strict_option,
    add_target_option,
    add_timeout_option,
    command_parser,
    int_at_least,
    positive_seconds,
    target_help,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    clock = CommandClock(getattr(args, "started", None))
    with clock.starting(args.target):
        target = engines.resolved(args.target, args.assignor, args.timeout, env.settings)
        engines.started([target])
    try:
        if target.assign is None:
            raise engines.EngineInputError(f"scenarios: {args.target} has no assign function")
        if args.assignor and target.assignor not in (None, args.assignor):
            raise engines.EngineInputError(f"{args.target} runs {target.assignor} only; "
                                           f"--assignor {args.assignor} names none of it")
        with shown(args.quiet) as progress:
            result = engines.run_scenarios_engine(
                target, clock.left(args.budget), args.failures, args.seed, count=args.count,
                strict=args.strict, progress=progress)
    finally:
        target.close()
    battery = engines.BatteryResult(target.name, [result], result.seconds)
    out = Output("scenarios", args.json)
    out.line(battery.table())
    first = battery.first()
    if first is not None:
        out.line(f"\nfirst counterexample:\n{first[1].detail}")
    offer = Offer(target.assignor or args.target, target)
    return out.finish(1 if battery.failed else 0,
                      engines.check_json(args.target, [offer], [battery]))


def register(sub: Any) -> None:
    p = command_parser(sub, "scenarios", "play the audit's random group stories on a target "
                                         "in this process (check's scenarios engine)",
                       [(0, "every invariant held (or Kafka's own, labelled)"),
                        (1, "a violation (its counterexample saved)")])
    add_target_option(p, target_help(ASSIGN_KINDS, "any target with an assign function"))
    add_seed_option(p, "the audit's seed: the same seed plays the same stories")
    p.add_argument("--count", metavar="N", type=int_at_least(1), default=None,
                   help="play exactly this many stories (default: as many as --budget allows)")
    p.add_argument("--budget", metavar="S", type=positive_seconds, default=30.0,
                   help="seconds (default %(default)s)")
    add_assignor_option(p, "which assignor a target of several runs (jsonl:, java:, "
                           "python:pkg.module); one the target does not run is refused",
                        repeat=False)
    add_timeout_option(p)
    add_strict_option(p)
    add_failures_option(p)
    add_json_option(p, "check --json's object, of one assignor")
    add_quiet_option(p)
    p.set_defaults(func=run)
