"""``groupcheck prove``: the exhaustive-scope prover from the command line; ``--bmc`` and
``--matrix``: bounded model checking of the protocol across codec versions
(`engines.bmc`).

    groupcheck prove --target T [--assignor A,...] [--scope members=3,topics=2,partitions=2]
                     [--timeout S] [--failures DIR] [--json] [--jobs N] [--exact]
                     [--reference T] [--strict] [--no-gaps]
    groupcheck prove --bmc --depth K [--target T | --protocol eager|cooperative]
                     [--scope members=3,topics=1,partitions=3] [--codecs ...]
    groupcheck prove --matrix [--depth K] [--scope S] [--out DIR]

``--matrix --out DIR`` writes ``DIR/compat-matrix.json`` (an ``--out`` path ending in
``.json``, the old spelling, is that file). An option of the prover given with ``--bmc`` or
``--matrix``, or one of theirs without them, is refused (exit 2).

Exit codes: 0 every invariant held, or every violation is labelled (a rule of
``kafka_rules``, or the ``--reference`` target answering the same requests identically);
1 another violation (the smallest counterexample per invariant is saved under
``--failures``), or any with ``--strict``; ``--bmc`` 1 on a counterexample, ``--matrix`` 1
when the model found a trace the implementation never reproduced; 2 bad arguments.

``--json``: one report object per assignor, a line each (the prover's own shape); with
``--bmc`` or ``--matrix``, `output.JsonEnvelope` whose ``result`` is ``{}`` (the lines tell it).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import engines
from ..properties.scope.report import ProofReport
from ..properties.scope.space import Scope
from ..targets.offers import close_all
from ..targets.target import Target
from .output import Output
from .progress_view import shown
from .shared import (
    ASSIGN_KINDS,
    NO_ENVIRONMENT,
    Environment,
    add_failures_option,
    add_jobs_option,
    add_json_option,
    add_quiet_option,
    add_strict_option,
    add_timeout_option,
    command_parser,
    int_at_least,
    out_file,
    refuse,
    target_help,
)

__all__ = ["register"]

#: the prover's own options, and those of --bmc and --matrix
PROVER = ("assignor", "timeout", "jobs", "exact", "reference", "no_gaps", "strict")
BMC = ("depth", "codecs", "protocol", "out")

MATRIX_FILE = "compat-matrix.json"
SCOPE_HELP = ("comma-separated key=value: members (max members), topics, partitions (max per "
              "topic; 0 = no metadata), generations, claims (max claimants per partition), "
              "racks, stale (max claims on partitions the leader's metadata lacks), symmetry "
              "(0 checks every configuration one by one; 1, a proof, one per renaming of the "
              "generation values in order; 2 and 3 only sample: 2 also renames topics and "
              "members, 3 also renumbers partitions within a topic), orders (1 keeps every "
              "order of the members at 2 and 3); unset keys keep the default members=3,topics=2,"
              "partitions=1,generations=2,claims=2,racks=0,stale=1,symmetry=1,orders=0")


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    if args.bmc and args.matrix:
        raise engines.EngineInputError("prove: --bmc and --matrix are separate runs; choose one")
    if args.bmc or args.matrix:
        return _model_checked(args, env)
    if args.target is None:
        raise engines.EngineInputError("prove: --target is required (or use --bmc / "
                                       "--matrix)")
    refuse(args, BMC, "without --bmc or --matrix")
    try:
        scope = Scope.parse(args.scope or "")
    except ValueError as exc:
        raise engines.EngineInputError(f"prove: {exc}") from None
    offers = engines.offers_of(args.target, args.assignor, args.timeout, env.settings)
    references = engines.References(args.reference, args.timeout, env.settings)
    ok = True
    try:
        for offer in offers:
            if offer.target is None:  # not in --json's objects, one a line
                print(f"{args.target} [{offer.label}]: not supported: {offer.error}",
                      file=sys.stderr if args.json else sys.stdout)
                continue
            with shown(args.quiet) as progress:
                report = _proved(args, scope, offer.target, references.of(offer.target),
                                 progress)
            ok = _print_report(args, offer.target, report) and ok
    finally:
        close_all(offers)
        references.close()
    return 0 if ok else 1


def _model_checked(args: argparse.Namespace, env: Environment) -> int:
    """``--bmc`` or ``--matrix``: bounded model checking in Z3."""
    refuse(args, PROVER, "to --bmc or --matrix (the model, not a target, is checked)")
    if args.matrix:
        refuse(args, ["target", "codecs", "protocol"], "to --matrix (it checks every mix)")
        with shown(args.quiet) as progress:
            found = engines.run_matrix(
                depth=args.depth, scope=args.scope, failures=args.failures,
                settings=env.settings, progress=progress,
                out_file=str(out_file(args.out, MATRIX_FILE)) if args.out else None)
    else:
        refuse(args, ["out"], "to --bmc (it writes counterexamples to --failures)")
        with shown(args.quiet) as progress:
            found = engines.run_bmc(target=args.target, protocol=args.protocol,
                                    codecs=args.codecs, depth=args.depth, scope=args.scope,
                                    failures=args.failures, settings=env.settings,
                                    progress=progress)
    out = Output("prove", args.json)
    out.block(found.lines)
    return out.finish(1 if found.failed else 0)


def _proved(args: argparse.Namespace, scope: Scope, target: Target,
            reference: Target | None, progress: engines.ProgressFn) -> ProofReport:
    """One assignor through the prover."""
    warning = engines.large_scope_warning(scope, target, not args.no_gaps)
    if warning:
        print(warning, file=sys.stderr)
    return engines.prove_target(target, scope, reference=reference, workers=args.jobs,
                                failures=args.failures, exact=args.exact,
                                gaps=not args.no_gaps, progress=progress)


def _print_report(args: argparse.Namespace, target: Target, report: ProofReport) -> bool:
    """The report of one assignor printed; True when it passed."""
    if args.json:
        print(json.dumps({**report.to_dict(), "balance": target.balance,
                          "stickiness": target.sticky}, ensure_ascii=False))
    else:
        print(report.table())
        print(f"  balance contract: {target.balance} ({target.balance_why})"
              + ("" if target.sticky else "; I4a does not apply (no stickiness promised)"))
    return report.strict_ok if args.strict else report.ok


def register(sub: Any) -> None:
    p = command_parser(sub, "prove", "check every configuration of a small scope; Z3 "
                                     "measures the stickiness gap",
                       [(0, "every invariant held, or every violation labelled Kafka's own"),
                        (1, "another violation (any with --strict); --bmc: a counterexample; "
                            "--matrix: a trace the implementation never reproduced")])
    p.add_argument("--target", metavar="T", default=None, help=target_help(
        ASSIGN_KINDS, "any target with an assign function", " (with --bmc: the replay "
        "target, whose codec versions bound the search)"))
    p.add_argument("--assignor", action="append", default=None, metavar="A",
                   help="which assignors (repeatable or comma-separated; default: every "
                        "assignor the target answers)")
    add_timeout_option(p)
    p.add_argument("--scope", metavar="S", default="", help=SCOPE_HELP + "; with --bmc/--matrix: "
                   "members,topics,partitions (default members=3,topics=1,partitions=3)")
    p.add_argument("--bmc", action="store_true",
                   help="bounded model checking of the protocol (I1, I5, I6) up to --depth")
    p.add_argument("--matrix", action="store_true",
                   help="the codec-version compatibility matrix (I1, I5, I6 per mix)")
    p.add_argument("--depth", metavar="K", type=int_at_least(1), default=None,
                   help="with --bmc or --matrix: depth in steps (default 6)")
    p.add_argument("--codecs", metavar="SPEC", default=None,
                   help="with --bmc: codec versions members may speak, e.g. "
                        "subscription_version=0-3,user_data_version=0-1,"
                        "cooperative_user_data=0-1")
    p.add_argument("--protocol", choices=("eager", "cooperative"), default=None,
                   help="with --bmc: only this protocol (default: both, or the target's)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help=f"with --matrix: write the matrix as JSON to DIR/{MATRIX_FILE}")
    add_failures_option(p, "where counterexample files go")
    add_json_option(p, help="print each assignor's report as one JSON object, a line each "
                    '(with --bmc or --matrix: {"command", "exit", "lines", "result": {}})')
    add_jobs_option(p, "the prover's processes (default: up to 2, one per CPU)", None)
    p.add_argument("--exact", action="store_true",
                   help="ask Z3 for every optimum (no lower-bound shortcut)")
    p.add_argument("--reference", default=None, metavar="T",
                   help="a target (java: for Kafka's client) asked every request of a "
                        "violating configuration: identical answers label the violation "
                        "the reference's own, other answers make it the target's own")
    p.add_argument("--no-gaps", action="store_true",
                   help="skip the I4b stickiness gap; claims a target's leader never sees "
                        "(all of them for range and roundrobin, those on unsubscribed topics "
                        "for cooperative-sticky) are then aggregated: a proof of the same "
                        "scope in a fraction of the time")
    add_strict_option(p)
    add_quiet_option(p)
    p.set_defaults(func=run)
