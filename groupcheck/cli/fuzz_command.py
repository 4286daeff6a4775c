"""``groupcheck fuzz --target T``: the state machine against every assignor of a target (or
those ``--assignor`` names); a violation is shrunk, saved as a replay file and told as a
story. Exit codes: 0 every invariant held, 1 a violation, 2 bad arguments."""

from __future__ import annotations

import argparse
from typing import Any

from .. import engines
from ..targets.offers import close_all
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    add_assignor_option,
    add_broker_option,
    add_failures_option,
    add_quiet_option,
    add_target_option,
    add_timeout_option,
    int_at_least,
)

__all__ = ["register"]

#: the state machine's settings profiles (``model.fuzz.PROFILES``; the engine checks)
SETTINGS = ("ci", "dev", "deep", "wire")


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    offers = engines.offers_of(args.target, args.assignor, args.timeout, env.settings)
    code = 0
    try:
        for offer in offers:
            if offer.target is None:
                print(f"{args.target} [{offer.label}]: not supported: {offer.error}")
                continue
            with shown(args.quiet) as progress:
                lines, failed = engines.fuzz_one(
                    offer.target, saved_as=args.target, settings=args.settings,
                    max_examples=args.max_examples, seed=args.seed, failures=args.failures,
                    progress=progress)
            print("\n".join(lines))
            code = max(code, int(failed))
    finally:
        close_all(offers)
    return code


def register(sub: Any) -> None:
    p = sub.add_parser("fuzz", help="run the stateful model against a target")
    add_target_option(p, "any target with a group (an assignor): builtin:<assignor>, "
                         "mutant:<name>, python:pkg.module[:attr], jsonl:<command>, "
                         "java:[CLASSPATH], wire:<client>:<assignor>, …")
    add_assignor_option(p)
    add_timeout_option(p)
    p.add_argument("--max-examples", type=int_at_least(1), default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--settings", choices=SETTINGS, default="ci",
                   help="ci (default; wire for librdkafka: targets), dev, deep, wire")
    add_failures_option(p, "where replay files go")
    add_broker_option(p)
    add_quiet_option(p)
    p.set_defaults(func=run)
