"""``groupcheck check --target T``: the whole battery (codec, prove, vectors with
``--parity``, scenarios, fuzz) on every assignor a target answers, within a budget; one
invariant × engine table per assignor, or ``--json``.

Exit codes: 0 every invariant judged held (or every violation is Kafka's own, labelled), 1
a violation (with ``--strict`` also an invariant left unjudged at an engine's minimum depth),
2 bad arguments (one line; ``--parity`` without golden vectors too).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import engines
from ..targets.offers import close_all
from .progress_view import CommandClock, shown
from .shared import (
    DEFAULT_BUDGET,
    GROUP_KINDS,
    NO_ENVIRONMENT,
    Environment,
    UsageError,
    add_assignor_option,
    add_broker_option,
    add_failures_option,
    add_jobs_option,
    add_json_option,
    add_quiet_option,
    add_reference_option,
    add_seed_option,
    add_strict_option,
    add_target_option,
    add_timeout_option,
    command_parser,
    positive_seconds,
    target_help,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    if args.parity and env.vectors is None:
        raise UsageError("check --parity: no golden vectors; set $GROUPCHECK_VECTORS to their "
                         "folder")
    clock = CommandClock(getattr(args, "started", None))
    engines.check_scope(args.scope)
    with clock.starting(args.target):
        offers = engines.offers_of(args.target, args.assignor, args.timeout, env.settings)
        targets = [o.target for o in offers if o.target is not None]
        engines.started(targets)
    references = engines.References(args.reference, args.timeout, env.settings)
    try:
        with shown(args.quiet) as progress:
            results = engines.run_batteries(
                targets, budget=clock.left(args.budget), parity=args.parity,
                scope=args.scope, failures=args.failures, seed=args.seed, workers=args.jobs,
                strict=args.strict, first=args.first,
                reference=references.of if args.reference else None, vectors=env.vectors,
                progress=progress)
    finally:
        close_all(offers)
        references.close()
    if args.json:
        print(json.dumps(engines.check_json(args.target, offers, results,
                                            budget=args.budget), ensure_ascii=False))
    else:
        print(engines.check_text(args.target, offers, results, budget=args.budget))
    short = engines.shortfall(results, args.budget)
    return 1 if any(r.failed for r in results) or (args.strict and short is not None) else 0


def register(sub: Any) -> None:
    p = command_parser(sub, "check", "run the whole battery against a target",
                       [(0, "every invariant judged held (or every violation Kafka's own, "
                            "labelled)"), (1, "a violation (its counterexample saved); with "
                                              "--strict also an invariant not judged at an "
                                              "engine's minimum depth"),
                        (2, "also: --parity without golden vectors ($GROUPCHECK_VECTORS)")])
    add_target_option(p, target_help(GROUP_KINDS, "the target whose assignors to check"))
    p.add_argument("--budget", metavar="S",
                   type=positive_seconds, default=DEFAULT_BUDGET,
                   help="seconds in all, over every assignor (the searching engines take "
                        "what the fixed ones leave, in slices; default %(default)s)")
    p.add_argument("--parity", action="store_true",
                   help="also hold the target against the golden vectors "
                        "($GROUPCHECK_VECTORS)")
    p.add_argument("--scope", metavar="S", default=None,
                   help="the prover's scope (default: by budget)")
    add_assignor_option(p, "which assignors to check, repeatable or comma-separated "
                           "(default: every assignor the target answers; for "
                           "python:pkg.module an attribute or a name)")
    add_timeout_option(p)
    add_seed_option(p, "the seed of the searching engines (scenarios, fuzz)")
    add_jobs_option(p, "the prover's processes (default: up to 2, one per CPU)", None)
    add_failures_option(p)
    add_json_option(p, help='print the report as one JSON object: {"target", "ok", "seconds", '
                    '"assignors": {name: {"supported", "engines", "delivery", ...}}, '
                    '"delivery", "notJudgedAtDepth"}')
    p.add_argument("--first", action="store_true",
                   help="stop at the first finding (the rest of the budget is not spent)")
    add_reference_option(p, "a target (java: for Kafka's client) asked the requests of the "
                            "prover's violations: identical answers label a violation the "
                            "reference's own, other answers make it the target's own (the "
                            "state machine's findings keep the rules)")
    add_strict_option(p, "fail on violations that are Kafka's own behaviour too (rules "
                         "K1-K4), and on an invariant left unjudged at an engine's minimum "
                         "depth (the verdict line names them)")
    add_broker_option(p)
    add_quiet_option(p)
    p.set_defaults(func=run)
