"""``groupcheck zoo``: catch every mutant of the bug zoo with the engine its entry names,
within its budget, each check also run on the unmutated builtin (its control).

Exit codes: 0 every mutant caught within budget with a clean control, 1 otherwise, 2 bad
arguments.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from .. import engines
from ..targets.target import TargetError
from ..targets.zoo.entries import PEER_ZOO, ZOO
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    add_failures_option,
    add_quiet_option,
    positive_seconds,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    entries = list(ZOO) + (list(PEER_ZOO) if args.peers else [])
    if args.row:
        entries = [e for e in entries if e.row in args.row]
        if not entries:
            raise engines.EngineInputError(f"zoo: no row {', '.join(args.row)}; rows are "
                                           f"{', '.join(e.row for e in ZOO)}")
    outcomes = []
    for entry in entries:
        if args.budget is not None:
            entry = replace(entry, budget=args.budget)
        try:
            with shown(args.quiet) as progress:
                outcomes.append(engines.run_zoo_entry(entry, args.failures,
                                                      control=not args.no_control,
                                                      progress=progress))
        except TargetError as exc:
            raise engines.EngineInputError(str(exc)) from None
        if args.verbose and outcomes[-1].caught:
            print(f"row {entry.row}: {outcomes[-1].caught.violation}\n"
                  f"  {outcomes[-1].caught.file}")
    print(engines.zoo_table(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


def register(sub: Any) -> None:
    p = sub.add_parser("zoo", help="catch every mutant of the bug zoo")
    p.add_argument("--row", action="append", default=[], help="only these rows (repeatable)")
    p.add_argument("--peers", action="store_true",
                   help="also the real peers behind zoo rows (kafka-python)")
    p.add_argument("--budget", type=positive_seconds, default=None, help="seconds per mutant")
    p.add_argument("--no-control", action="store_true",
                   help="skip running each check on the unmutated builtin")
    add_failures_option(p)
    p.add_argument("-v", "--verbose", action="store_true")
    add_quiet_option(p)
    p.set_defaults(func=run)
