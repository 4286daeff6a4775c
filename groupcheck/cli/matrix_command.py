"""``groupcheck matrix TARGET… [--versions A..B]``: the battery on every cell of targets ×
assignors (each cell within ``--budget`` seconds, ``--jobs`` cells at a time), every
counterexample bisected over the targets of its assignor; the table on the terminal,
``matrix.json`` and ``index.html`` in ``--out``.

Exit codes: 0 every invariant judged held (or Kafka's own, labelled), 1 a violation,
2 bad arguments (one line).
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
    add_assignor_option,
    add_quiet_option,
    add_timeout_option,
    add_versions_option,
    folder_problem,
    int_at_least,
    positive_seconds,
    with_releases,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    targets = with_releases(args.targets, args.versions, env,
                            "matrix: name at least one target, or --versions A..B")
    problem = folder_problem(args.out, "--out")
    if problem:
        raise UsageError(problem)
    plan = engines.plan_cells(targets, engines.parse_assignors(args.assignor), env.settings)
    out = Path(args.out)
    with shown(args.quiet) as progress:
        result = engines.run_release_matrix(
            plan, budget=args.budget, seed=args.seed, jobs=args.jobs, out=out,
            settings=env.settings, timeout=args.timeout, parity=args.parity,
            vectors=env.vectors, progress=progress)
    data, page = engines.write_matrix(result, targets, out)
    print(engines.matrix_text(result))
    print(f"wrote {data} and {page}")
    return 1 if result.failed else 0


def register(sub: Any) -> None:
    p = sub.add_parser("matrix", help="the battery on every target × assignor (Kafka's "
                                      "releases), counterexamples bisected over them")
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help="targets, e.g. java@2.8.0: java@3.4.0: (in the order to bisect)")
    add_versions_option(p)
    add_assignor_option(p)
    p.add_argument("--budget", type=positive_seconds, default=30.0,
                   help="seconds per cell (target × assignor; default %(default)s)")
    p.add_argument("--jobs", type=int_at_least(1), default=2,
                   help="cells at a time, each in its own process (default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--parity", action="store_true",
                   help="also hold each cell against the golden vectors ($GROUPCHECK_VECTORS)")
    add_timeout_option(p)
    p.add_argument("--out", default="matrix-out",
                   help="where matrix.json, index.html and the counterexamples go "
                        "(default %(default)s)")
    add_quiet_option(p)
    p.set_defaults(func=run)
