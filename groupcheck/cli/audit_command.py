"""``groupcheck audit``: the PySpark audit pipeline from the command line.

    groupcheck audit [--target T ...] [--scenarios N] [--seed S] [--master URL]
                     [--out DIR] [--chunk-size K] [--corpus DIR] [--reference T]
                     [--strict] [--fresh] [--shrink-seconds S]

Exit codes: 0 every invariant held, or every violation is Kafka's own behaviour (a rule of
``properties.kafka_rules``, or with ``--reference`` the reference reproducing it: counted,
shown and saved under ``DIR/inherited``, but failing the run only with ``--strict``); 1 any
other violation (the smallest counterexample per (target, invariant) is saved under
``DIR/counterexamples``); 2 bad arguments (one line). The targets are
`engines.audit_targets`'s; `main` runs this command alone (``audit/submit.py``, for
``spark-submit``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from .. import engines
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    Parser,
    add_quiet_option,
    folder_problem,
    input_error,
    int_at_least,
    seconds_or_zero,
)

__all__ = ["main", "register"]

DEFAULT_OUT = "audit-out"


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    config = engines.audit_config(
        targets=args.target, scenarios=args.scenarios, seed=args.seed, master=args.master,
        out=args.out, chunk_size=args.chunk_size, slices=args.slices, corpus=args.corpus,
        reference=args.reference, shrink_seconds=args.shrink_seconds,
        out_problem=folder_problem(args.out, "--out"), settings=env.settings)
    with shown(args.quiet) as progress:  # Spark's own console progress is off (audit.session)
        outcome = engines.run_audit_job(config, fresh=args.fresh, settings=env.settings,
                                        progress=progress)
    summary, out = outcome.summary, str(outcome.out)
    print(f"{summary['scenarios']:,} scenarios x {len(config.targets)} target(s) in "
          f"{outcome.seconds:.1f}s ({outcome.chunks_run} of {summary['chunks']} chunk(s) run "
          "now)")
    print("\n".join(engines.findings_lines(summary, out, engines.shrink_timings(out))))
    print(f"report: {os.path.abspath(os.path.join(out, 'index.html'))}")
    if not outcome.ok:
        return 1
    return 1 if args.strict and summary["violations"] else 0


def register(sub: Any) -> None:
    p = sub.add_parser("audit", help="run targets over many scenarios on Spark; write a "
                                     "report (Parquet, summary.json, index.html)")
    p.add_argument("--target", action="append", default=None,
                   help="builtin:<assignor>, java:[CLASSPATH] (Kafka's client, all four "
                        "assignors; <assignor>@java:[CLASSPATH] for one), java@<release>: "
                        "(a release from $GROUPCHECK_MAVEN_REPO; java@<release>:<assignor> "
                        "for one) or pyfn:<module or file.py>:<function>; repeatable "
                        "(default: the four builtin assignors)")
    p.add_argument("--scenarios", type=int_at_least(1), default=None,
                   help="random scenarios to run (default 100,000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--master", default=None,
                   help="Spark master URL (default local[*], or spark-submit's)")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--chunk-size", type=int_at_least(1), default=None,
                   help="scenarios per resumable chunk (default: about 20 chunks)")
    p.add_argument("--slices", type=int_at_least(1), default=None,
                   help="Spark partitions per chunk (default: one per core, at least 2)")
    p.add_argument("--corpus", default=None,
                   help="run the replay files (*.json) in this folder instead of random "
                        "scenarios")
    p.add_argument("--reference", default=None, metavar="T",
                   help="a target whose answers decide what is inherited: a violated story "
                        "is run again on it (java:[CLASSPATH] runs each target's assignor on "
                        "Kafka's client), and when every answer is identical the violation "
                        "is labelled the reference's own")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 also on violations that are Kafka's own behaviour "
                        "(inherited from Kafka, see the report)")
    p.add_argument("--shrink-seconds", type=seconds_or_zero, default=60.0,
                   help="seconds to shrink the smallest examples in, all together, before "
                        "the report is written (0: do not shrink; default %(default)s)")
    p.add_argument("--fresh", action="store_true",
                   help="delete --out first instead of resuming the audit in it")
    add_quiet_option(p)
    p.set_defaults(func=run)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``audit`` alone (``audit/submit.py`` under ``spark-submit``): the environment is
    read here, its edge."""
    parser = Parser(prog="groupcheck")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    register(sub)
    try:
        args = parser.parse_args(["audit", *(sys.argv[1:] if argv is None else argv)])
        return run(args, Environment.read(os.environ))
    except Exception as exc:
        if not input_error(exc):
            raise
        print(str(exc).splitlines()[0], file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
