"""``groupcheck check --target T``: the whole battery (codec, prove, vectors with
``--parity``, scenarios, fuzz) on every assignor a target answers, within a budget; one
invariant × engine table per assignor, or ``--json``.

Exit codes: 0 every invariant judged held (or every violation is Kafka's own, labelled), 1
a violation, 2 bad arguments (one line).
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
    NO_ENVIRONMENT,
    Environment,
    add_assignor_option,
    add_broker_option,
    add_failures_option,
    add_quiet_option,
    add_reference_option,
    add_strict_option,
    add_target_option,
    add_timeout_option,
    int_at_least,
    positive_seconds,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    clock = CommandClock(getattr(args, "started", None))
    engines.check_scope(args.scope)
    with clock.starting(args.target):
        offers = engines.offers_of(args.target, args.assignor, args.timeout, env.settings)
    targets = [o.target for o in offers if o.target is not None]
    references = engines.References(args.reference, args.timeout, env.settings)
    try:
        with shown(args.quiet) as progress:
            results = engines.run_batteries(
                targets, budget=clock.left(args.budget), parity=args.parity,
                scope=args.scope, failures=args.failures, seed=args.seed,
                workers=args.workers, strict=args.strict, first=args.first,
                reference=references.of if args.reference else None, vectors=env.vectors,
                progress=progress)
    finally:
        close_all(offers)
        references.close()
    if args.json:
        print(json.dumps(engines.check_json(args.target, offers, results), ensure_ascii=False))
    else:
        print(engines.check_text(args.target, offers, results))
    return 1 if any(r.failed for r in results) else 0


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="run the whole battery against a target")
    add_target_option(p)
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_BUDGET,
                   help="seconds in all, over every assignor (the searching engines share "
                        "what the fixed ones leave; default %(default)s)")
    p.add_argument("--parity", action="store_true",
                   help="also hold the target against the golden vectors "
                        "($GROUPCHECK_VECTORS)")
    p.add_argument("--scope", default=None, help="the prover's scope (default: by budget)")
    add_assignor_option(p, "which assignors to check, repeatable or comma-separated "
                           "(default: every assignor the target answers; for "
                           "python:pkg.module an attribute or a name)")
    add_timeout_option(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int_at_least(1), default=None, help="prover processes")
    add_failures_option(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--first", action="store_true",
                   help="stop at the first finding (the rest of the budget is not spent)")
    add_reference_option(p, "a target (java: for Kafka's client) asked the requests of the "
                            "prover's violations: identical answers label a violation the "
                            "reference's own, other answers make it the target's own (the "
                            "state machine's findings keep the rules)")
    add_strict_option(p)
    add_broker_option(p)
    add_quiet_option(p)
    p.set_defaults(func=run)
