"""``groupcheck audit``: the PySpark audit pipeline from the command line.

    groupcheck audit [--target T ...] [--scenarios N] [--seed S] [--master URL]
                     [--out DIR] [--chunk-size K] [--corpus DIR] [--reference T]
                     [--strict] [--fresh] [--shrink-seconds S]

Exit codes: 0 every invariant held, or every violation is Kafka's own behaviour (a rule of
``properties.kafka_rules``, or with ``--reference`` the reference reproducing it: counted,
shown and saved under ``DIR/inherited``, but failing the run only with ``--strict``); 1 any
other violation (the smallest counterexample per (target, invariant) is saved under
``DIR/counterexamples``); 2 bad arguments (one line). The targets are
`engines.resolving`'s; `main` runs this command alone (``audit/submit.py``, for
``spark-submit``), ending as the command line does (`exits`).

``--json``: `output.JsonEnvelope` whose ``result`` is ``summary.json``'s object.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from .. import engines
from .exits import Run, guarded
from .output import Output
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    Parser,
    add_json_option,
    add_quiet_option,
    add_seed_option,
    command_parser,
    folder_problem,
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
    summary, folder = outcome.summary, str(outcome.out)
    out = Output("audit", args.json)
    out.line(f"{summary['scenarios']:,} scenarios x {len(config.targets)} target(s) in "
             f"{outcome.seconds:.1f}s ({outcome.chunks_run} of {summary['chunks']} chunk(s) "
             "run now)")
    out.block(engines.findings_lines(summary, folder, engines.shrink_timings(folder)))
    out.line(f"report: {os.path.abspath(os.path.join(folder, 'index.html'))}")
    failed = not outcome.ok or (args.strict and summary["violations"])
    return out.finish(1 if failed else 0, summary)


def register(sub: Any) -> None:
    p = command_parser(sub, "audit", "run targets over many scenarios on Spark; write a "
                                     "report (Parquet, summary.json, index.html)",
                       [(0, "every invariant held, or every violation Kafka's own (labelled)"),
                        (1, "another violation (any with --strict); the smallest "
                            "counterexamples saved")])
    p.add_argument("--target", metavar="T", action="append", default=None,
                   help="builtin:<assignor>, java:[CLASSPATH] (Kafka's client, all four "
                        "assignors; <assignor>@java:[CLASSPATH] for one), java@<release>: "
                        "(a release from $GROUPCHECK_MAVEN_REPO; java@<release>:<assignor> "
                        "for one) or pyfn:<module or file.py>:<function>; repeatable "
                        "(default: the four builtin assignors)")
    p.add_argument("--scenarios", metavar="N", type=int_at_least(1), default=None,
                   help="random scenarios to run (default 100,000)")
    add_seed_option(p, "the seed of the random scenarios")
    p.add_argument("--master", metavar="URL", default=None,
                   help="Spark master URL (default local[*], or spark-submit's)")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                   help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--chunk-size", metavar="K", type=int_at_least(1), default=None,
                   help="scenarios per resumable chunk (default: about 20 chunks)")
    p.add_argument("--slices", metavar="N", type=int_at_least(1), default=None,
                   help="Spark partitions per chunk (default: one per core, at least 2)")
    p.add_argument("--corpus", metavar="DIR", default=None,
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
    p.add_argument("--shrink-seconds", metavar="S", type=seconds_or_zero, default=60.0,
                   help="seconds to shrink the smallest examples in, all together, before "
                        "the report is written (0: do not shrink; default %(default)s)")
    p.add_argument("--fresh", action="store_true",
                   help="delete --out first instead of resuming the audit in it")
    add_json_option(p, "summary.json's object")
    add_quiet_option(p)
    p.set_defaults(func=run)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``audit`` alone (``audit/submit.py`` under ``spark-submit``): the environment is
    read here, its edge."""
    parser = Parser(prog="groupcheck")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    register(sub)

    def body() -> int:
        args = parser.parse_args(["audit", *(sys.argv[1:] if argv is None else argv)])
        return run(args, Environment.read(os.environ))

    return guarded(Run("audit"), body)


if __name__ == "__main__":
    sys.exit(main())
