"""``groupcheck upgrade --target FROM --target TO``: a rolling upgrade played on the wire, on a
fresh cluster of groupcheck's broker, on every path it has (KIP-429's two bounces where the
rebalance protocol changes, and the one-bounce shortcut beside them); ``groupcheck upgrade
--matrix FILE`` plays every pair of a list (``default``: the one shipped) and writes the
certification table to the terminal, ``upgrades.json`` and ``index.html`` in ``--out``.
``upgrade FROM TO`` (positional) is the old spelling.

Exit codes: 0 every prescribed path certified (or not supported by a release, in a table),
1 a prescribed path failed (its replay file is in ``--failures``), 2 bad arguments, a
malformed pair list, a release that cannot run here or lacks what the path asks (one line).

``--json``: `output.JsonEnvelope` whose ``result`` is ``{"members", "seed", "rows"}``, a row per
path as in ``upgrades.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TypedDict

from .. import engines
from .output import Output, written
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    UsageError,
    add_failures_option,
    add_json_option,
    add_quiet_option,
    add_seed_option,
    command_parser,
    deprecated,
    folder_problem,
    int_between,
    refuse,
    seconds_or_zero,
)

__all__ = ["register"]

DEFAULT_OUT = "upgrades-out"


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability from 0 to 1, not {text!r}")
    return value


def _sides(args: argparse.Namespace) -> list[str]:
    """FROM and TO: ``--target`` twice, or the old positional FROM TO; none with --matrix."""
    old = [s for s in (args.source, args.dest) if s is not None]
    if old:
        deprecated("upgrade FROM TO (positional)", "--target FROM --target TO")
    sides = [*args.target, *old]
    if (args.matrix is None) == (not sides):
        raise UsageError("upgrade: give --target FROM --target TO, or --matrix FILE (not both)")
    if sides and len(sides) != 2:
        raise UsageError(f"upgrade: give two targets, FROM then TO (got {len(sides)})")
    return sides


class _Options(TypedDict):
    """What `engines.run_table` and `engines.run_upgrade` take from the flags."""

    members: int
    seed: int
    faults: float
    failures: Path


def _rows(table: engines.UpgradeTable) -> dict[str, object]:
    return {"members": table.members, "seed": table.seed,
            "rows": [o.to_json() for o in table.outcomes]}


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    sides = _sides(args)
    out = Output("upgrade", args.json)
    options: _Options = {
        "members": args.members, "seed": args.seed, "faults": args.faults,
        "failures": Path(args.failures)}
    if args.matrix is not None:
        folder = args.out or DEFAULT_OUT
        problem = folder_problem(folder, "--out")
        if problem:
            raise UsageError(problem)
        with shown(args.quiet) as progress:
            table = engines.run_table(engines.read_pairs(args.matrix), env.settings,
                                      shrink_seconds=args.shrink_seconds or 120.0,
                                      progress=progress, **options)
        files = engines.write_upgrade_table(table, Path(folder))
        return written(out, engines.table_text(table), files, table.failed, _rows(table))
    refuse(args, ["out"], "without --matrix (one upgrade writes no table)")
    source, dest = engines.parse_side(sides[0]), engines.parse_side(sides[1])
    with shown(args.quiet) as progress:
        table = engines.run_upgrade(source, dest, env.settings,
                                    shrink_seconds=args.shrink_seconds or 240.0,
                                    progress=progress, **options)
    out.line(engines.table_text(table))
    for outcome in table.outcomes:
        if outcome.verdict == "fails":
            out.block(engines.distinct(outcome.story)[-12:])
            if outcome.replay:
                out.line(f"saved {outcome.replay}")
    return out.finish(1 if table.failed else 0, _rows(table))


def register(sub: Any) -> None:
    p = command_parser(sub, "upgrade", "a rolling upgrade on the wire (KIP-429's paths), or "
                                       "a certification table of them (--matrix)",
                       [(0, "every prescribed path certified (or unsupported, in a table)"),
                        (1, "a prescribed path failed (its replay file saved)")])
    p.add_argument("source", nargs="?", metavar="FROM", help=argparse.SUPPRESS)
    p.add_argument("dest", nargs="?", metavar="TO", help=argparse.SUPPRESS)
    p.add_argument("--target", metavar="T", action="append", default=[],
                   help="twice: the release the group runs, e.g. wire:java@3.4.0:range, then "
                        "the one it moves to, e.g. wire:java@4.0.0-SNAPSHOT:cooperative-sticky "
                        "(an assignor list: a,b in preference order)")
    p.add_argument("--matrix", metavar="FILE",
                   help="a list of FROM TO pairs, one a line ('default': the shipped list)")
    p.add_argument("--members", metavar="N", type=int_between(1, 50), default=4,
                   help="members in the group (default %(default)s)")
    add_seed_option(p, "the faults' and exits' seed")
    p.add_argument("--faults", metavar="P", type=_probability, default=0.3,
                   help="chance of a fault after each restart (default %(default)s)")
    p.add_argument("--shrink-seconds", metavar="S", type=seconds_or_zero, default=None,
                   help="time to shrink a failure (default 240, 120 per path in a table)")
    add_failures_option(p, "where replay files of failed upgrades go")
    p.add_argument("--out", default=None, metavar="DIR",
                   help=f"with --matrix: where upgrades.json and index.html go (default "
                        f"{DEFAULT_OUT})")
    add_json_option(p, '{"members", "seed", "rows": a row per path, as in upgrades.json}')
    add_quiet_option(p)
    p.set_defaults(func=run)
