"""``groupcheck matrix --target T… [--versions A..B]``: the battery on every cell of targets ×
assignors (each cell within ``--budget`` seconds, ``--jobs`` cells at a time), every
counterexample bisected over the targets of its assignor; the table on the terminal,
``matrix.json`` and ``index.html`` in ``--out``. Targets given positionally (the old
spelling) still count, after those of ``--target``.

Exit codes: 0 every invariant judged held (or Kafka's own, labelled), 1 a violation,
2 bad arguments (one line; ``--parity`` without golden vectors too).

``--json``: `output.JsonEnvelope` whose ``result`` is ``matrix.json``'s object.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import engines
from .output import Output, written
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    UsageError,
    add_assignor_option,
    add_jobs_option,
    add_json_option,
    add_quiet_option,
    add_release_options,
    add_seed_option,
    command_parser,
    folder_problem,
    positional_targets,
    positive_seconds,
    releases_of,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    named = positional_targets(args, "--target T (repeatable)")
    targets = releases_of(named, args.versions, env,
                          "matrix: name at least one --target, or --versions A..B")
    problem = folder_problem(args.out, "--out")
    if problem:
        raise UsageError(problem)
    if args.parity and env.vectors is None:
        raise UsageError("matrix --parity: no golden vectors; set $GROUPCHECK_VECTORS to "
                         "their folder")
    plan = engines.plan_cells(targets, engines.parse_assignors(args.assignor), env.settings)
    out = Path(args.out)
    with shown(args.quiet) as progress:
        result = engines.run_release_matrix(
            plan, budget=args.budget, seed=args.seed, jobs=args.jobs, out=out,
            settings=env.settings, timeout=args.timeout, parity=args.parity,
            vectors=env.vectors, progress=progress)
    data, page = engines.write_matrix(result, targets, out)
    return written(Output("matrix", args.json), engines.matrix_text(result), (data, page),
                   result.failed, engines.matrix_json(result, targets))


def register(sub: Any) -> None:
    p = command_parser(sub, "matrix", "the battery on every target × assignor (Kafka's "
                                      "releases), counterexamples bisected over them",
                       [(0, "every invariant judged held (or Kafka's own, labelled)"),
                        (1, "a violation")])
    p.add_argument("targets", nargs="*", metavar="TARGET", help=argparse.SUPPRESS)
    add_release_options(p, "a target, e.g. java@2.8.0: (in the order to bisect)")
    add_assignor_option(p)
    p.add_argument("--budget", metavar="S", type=positive_seconds, default=30.0,
                   help="seconds per cell (target × assignor; default %(default)s)")
    add_jobs_option(p, "cells at a time, each in its own process (default %(default)s)", 2)
    add_seed_option(p)
    p.add_argument("--parity", action="store_true",
                   help="also hold each cell against the golden vectors ($GROUPCHECK_VECTORS)")
    p.add_argument("--out", default="matrix-out", metavar="DIR",
                   help="where matrix.json, index.html and the counterexamples go "
                        "(default %(default)s)")
    add_json_option(p, "matrix.json's object")
    add_quiet_option(p)
    p.set_defaults(func=run)
