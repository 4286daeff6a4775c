"""``groupcheck zoo``: catch every mutant of the bug zoo with the engine its entry names,
within its budget, each check also run on the unmutated builtin (its control).

Exit codes: 0 every mutant caught within budget with a clean control, 1 otherwise, 2 bad
arguments.

``--json``: `output.JsonEnvelope` whose ``result`` is ``{"rows": [{"row", "bug", "target",
"engine", "caught", "file", "seconds", "budget", "control", "ok"}]}`` (``caught``: the
violation, or null).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from .. import engines
from ..targets.target import TargetError
from ..targets.zoo.entries import PEER_ZOO, ZOO
from .output import Output
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    add_failures_option,
    add_json_option,
    add_quiet_option,
    command_parser,
    positive_seconds,
)

__all__ = ["register"]


def _row(o: engines.ZooOutcome) -> dict[str, object]:
    return {"row": o.row, "bug": o.bug, "target": o.target, "engine": o.engine,
            "caught": o.caught.violation if o.caught else None,
            "file": o.caught.file if o.caught else None, "seconds": round(o.seconds, 3),
            "budget": o.budget, "control": o.control, "ok": o.ok}


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    entries = list(ZOO) + (list(PEER_ZOO) if args.peers else [])
    if args.row:
        entries = [e for e in entries if e.row in args.row]
        if not entries:
            raise engines.EngineInputError(f"zoo: no row {', '.join(args.row)}; rows are "
                                           f"{', '.join(e.row for e in ZOO)}")
    out = Output("zoo", args.json)
    outcomes = []
    for entry in entries:
        if args.budget is not None:
            entry = replace(entry, budget=args.budget)
        try:
            with shown(args.quiet) as progress:
                outcomes.append(engines.run_zoo_entry(entry, args.failures,
                                                      control=not args.no_control,
                                                      progress=progress,
                                                      vectors=env.vectors))
        except TargetError as exc:
            raise engines.EngineInputError(str(exc)) from None
        if args.verbose and outcomes[-1].caught:
            out.line(f"row {entry.row}: {outcomes[-1].caught.violation}\n"
                     f"  {outcomes[-1].caught.file}")
    out.line(engines.zoo_table(outcomes))
    return out.finish(0 if all(o.ok for o in outcomes) else 1,
                      {"rows": [_row(o) for o in outcomes]})


def register(sub: Any) -> None:
    p = command_parser(sub, "zoo", "catch every mutant of the bug zoo",
                       [(0, "every mutant caught within budget, every control clean"),
                        (1, "a mutant escaped, or a control failed")])
    p.add_argument("--row", metavar="ROW", action="append", default=[],
                   help="only these rows (repeatable)")
    p.add_argument("--peers", action="store_true",
                   help="also the real peers behind zoo rows (kafka-python)")
    p.add_argument("--budget", metavar="S",
                   type=positive_seconds, default=None,
                   help="seconds per mutant (default: each entry's own)")
    p.add_argument("--no-control", action="store_true",
                   help="skip running each check on the unmutated builtin")
    add_failures_option(p)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print each caught violation and its file as it is found")
    add_json_option(p, '{"rows": [{"row", "bug", "target", "engine", "caught", "file", '
                       '"seconds", "budget", "control", "ok"}]}')
    add_quiet_option(p)
    p.set_defaults(func=run)
