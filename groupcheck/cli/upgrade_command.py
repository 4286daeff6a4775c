"""``groupcheck upgrade FROM TO``: a rolling upgrade played on the wire, on a fresh cluster of
groupcheck's broker, on every path it has (KIP-429's two bounces where the rebalance
protocol changes, and the one-bounce shortcut beside them); ``groupcheck upgrade --matrix
FILE`` plays every pair of a list (``default``: the one shipped) and writes the
certification table to the terminal, ``upgrades.json`` and ``index.html`` in ``--out``.

Exit codes: 0 every prescribed path certified (or not supported by a release, in a table),
1 a prescribed path failed (its replay file is in ``--failures``), 2 bad arguments, a
malformed pair list, a release that cannot run here or lacks what the path asks (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import engines
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    UsageError,
    add_failures_option,
    add_quiet_option,
    folder_problem,
    int_between,
    seconds_or_zero,
)

__all__ = ["register"]


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability from 0 to 1, not {text!r}")
    return value


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    if (args.matrix is None) == (args.source is None):
        raise UsageError("upgrade: give FROM TO, or --matrix FILE (not both)")
    if args.source is not None and args.dest is None:
        raise UsageError("upgrade: give both FROM and TO")
    problem = folder_problem(args.out, "--out") if args.matrix is not None else None
    if problem:
        raise UsageError(problem)
    options: dict[str, Any] = {
        "members": args.members, "seed": args.seed, "faults": args.faults,
        "failures": Path(args.failures)}
    with shown(args.quiet) as progress:
        table = (engines.run_table(engines.read_pairs(args.matrix), env.settings,
                                   shrink_seconds=args.shrink_seconds or 120.0,
                                   progress=progress, **options)
                 if args.matrix is not None else
                 engines.run_upgrade(engines.parse_side(args.source),
                                     engines.parse_side(args.dest), env.settings,
                                     shrink_seconds=args.shrink_seconds or 240.0,
                                     progress=progress, **options))
    print(engines.table_text(table))
    if args.matrix is not None:
        data, page = engines.write_upgrade_table(table, Path(args.out))
        print(f"wrote {data} and {page}")
    else:
        for outcome in table.outcomes:
            if outcome.verdict == "fails":
                print("\n".join(engines.distinct(outcome.story)[-12:]))
                if outcome.replay:
                    print(f"saved {outcome.replay}")
    return 1 if table.failed else 0


def register(sub: Any) -> None:
    p = sub.add_parser("upgrade", help="a rolling upgrade on the wire (KIP-429's paths), or "
                                       "a certification table of them (--matrix)")
    p.add_argument("source", nargs="?", metavar="FROM",
                   help="the release the group runs, e.g. wire:java@3.4.0:range")
    p.add_argument("dest", nargs="?", metavar="TO",
                   help="the release it moves to, e.g. wire:java@4.0.0-SNAPSHOT:"
                        "cooperative-sticky (an assignor list: a,b in preference order)")
    p.add_argument("--matrix", metavar="FILE",
                   help="a list of FROM TO pairs, one a line ('default': the shipped list)")
    p.add_argument("--members", type=int_between(1, 50), default=4,
                   help="members in the group (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="the faults' and exits' seed")
    p.add_argument("--faults", type=_probability, default=0.3,
                   help="chance of a fault after each restart (default %(default)s)")
    p.add_argument("--shrink-seconds", type=seconds_or_zero, default=None,
                   help="time to shrink a failure (default 240, 120 per path in a table)")
    add_failures_option(p, "where replay files of failed upgrades go")
    p.add_argument("--out", default="upgrades-out",
                   help="where upgrades.json and index.html go (default %(default)s)")
    add_quiet_option(p)
    p.set_defaults(func=run)
