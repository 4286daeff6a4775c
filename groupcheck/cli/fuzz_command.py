"""``groupcheck fuzz --target T``: the state machine against every assignor of a target (or
those ``--assignor`` names); a violation is shrunk, saved as a replay file and told as a
story. Exit codes: 0 every invariant held, 1 a violation, 2 bad arguments.

``--json``: `output.JsonEnvelope` whose ``result`` is ``{"target": T, "assignors": [{"assignor",
"supported", "failed"}]}``.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import engines
from ..targets.offers import close_all
from .output import Output
from .progress_view import shown
from .shared import (
    GROUP_KINDS,
    NO_ENVIRONMENT,
    Environment,
    add_assignor_option,
    add_broker_option,
    add_failures_option,
    add_json_option,
    add_quiet_option,
    add_seed_option,
    add_target_option,
    add_timeout_option,
    command_parser,
    int_at_least,
    target_help,
)

__all__ = ["register"]

#: the state machine's settings profiles (``model.fuzz.PROFILES``; the engine checks)
SETTINGS = ("ci", "dev", "deep", "wire")


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    offers = engines.offers_of(args.target, args.assignor, args.timeout, env.settings)
    out = Output("fuzz", args.json)
    assignors: list[dict[str, object]] = []
    code = 0
    try:
        for offer in offers:
            if offer.target is None:
                out.line(f"{args.target} [{offer.label}]: not supported: {offer.error}")
                assignors.append({"assignor": offer.label, "supported": False,
                                  "failed": False})
                continue
            with shown(args.quiet) as progress:
                lines, failed = engines.fuzz_one(
                    offer.target, saved_as=args.target, settings=args.settings,
                    max_examples=args.max_examples, seed=args.seed, failures=args.failures,
                    progress=progress)
            out.block(lines)
            assignors.append({"assignor": offer.label, "supported": True, "failed": failed})
            code = max(code, int(failed))
    finally:
        close_all(offers)
    return out.finish(code, {"target": args.target, "assignors": assignors})


def register(sub: Any) -> None:
    p = command_parser(sub, "fuzz", "run the stateful model against a target",
                       [(0, "every invariant held"), (1, "a violation (its replay file saved)")])
    add_target_option(p, target_help(GROUP_KINDS, "any target with a group (an assignor)"))
    add_assignor_option(p)
    add_timeout_option(p)
    p.add_argument("--max-examples", metavar="N", type=int_at_least(1), default=None,
                   help="examples to run (default: the --settings profile's count)")
    add_seed_option(p)
    p.add_argument("--settings", choices=SETTINGS, default="ci",
                   help="examples x steps: ci (default; wire for wire: and librdkafka: "
                        "targets), dev, deep, wire")
    add_failures_option(p, "where replay files go")
    add_broker_option(p)
    add_json_option(p, '{"target", "assignors": [{"assignor", "supported", "failed"}]}')
    add_quiet_option(p)
    p.set_defaults(func=run)
