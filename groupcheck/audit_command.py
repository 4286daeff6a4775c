"""``groupcheck audit``: the PySpark audit pipeline from the command line.

    groupcheck audit [--target T ...] [--scenarios N] [--seed S] [--master URL]
                     [--out DIR] [--chunk-size K] [--corpus DIR] [--reference T]
                     [--strict] [--fresh] [--shrink-seconds S]

Exit codes: 0 every invariant held, or every violation is Kafka's own behaviour (a rule of
``properties.kafka_rules``, or with ``--reference`` the reference reproducing it: counted,
shown and saved under ``DIR/inherited``, but failing the run only with ``--strict``); 1 any
other violation (the smallest counterexample per (target, invariant) is saved under
``DIR/counterexamples``); 2 bad arguments (one line).

This floor resolves ``builtin:<assignor>`` to our ``impl.assign_op`` (audit/
never imports impl) and ``<assignor>@java:[CLASSPATH]`` to Kafka's own client (one JVM per
Python worker, started when the worker first resolves it; the compiled driver is shared
through the cache); ``--target java:[CLASSPATH]`` stands for the four assignors on it.
`resolve_audit_target` is shipped to the executors by reference.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from typing import Any

from .cli_values import folder_problem, int_at_least, seconds_or_zero
from .membership_commands import CommandError

DEFAULT_OUT = "audit-out"
DEFAULT_SCENARIOS = 100_000


class BuiltinCodec:
    """Our consumer-protocol codec as an I10 codec (plain-data messages)."""

    #: the instance every builtin target shares (the codec holds no state); kept on the
    #: class, which Spark's workers rebuild when this module runs as ``__main__``
    _shared: BuiltinCodec | None = None

    def __init__(self) -> None:
        from .impl.errors import CodecError

        self.error: type[Exception] = CodecError

    @classmethod
    def shared(cls) -> BuiltinCodec:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def encode_subscription(self, x: dict[str, Any], version: int) -> bytes:
        from .impl.consumer_protocol import encode_subscription
        from .impl.types import Subscription

        gen = x["generation"]
        return encode_subscription(
            Subscription(list(x["topics"]), x["userData"], [(t, p) for t, p in x["owned"]],
                         None if gen is None or gen < 0 else gen, x["rack"]), version)

    def decode_subscription(self, data: bytes) -> dict[str, Any]:
        from .impl.consumer_protocol import decode_subscription

        d = decode_subscription(data)
        return {"topics": d.topics, "userData": d.user_data,
                "ownedPartitions": d.owned_partitions, "generationId": d.generation_id,
                "rackId": d.rack_id, "version": d.version, "remaining": d.remaining}


def resolve_audit_target(name: str) -> Any:
    """A target string → an ``audit.targets.AuditTarget``: ``builtin:<assignor>`` (our
    implementation), ``<assignor>@java:[CLASSPATH]`` (Kafka's client, each call bounded by
    the audit's time limit) or ``pyfn:<module or file.py>:<function>``."""
    from .audit.targets import AuditTarget, AuditTargetError, resolve_plugin

    family, at, rest = name.partition("@")
    if at and rest.startswith("java:"):
        from .audit.call_timeout import CALL_TIMEOUT
        from .impl.assignors import ASSIGNOR_NAMES
        from .targets.processes.java_runtime import JavaUnavailable
        from .targets.processes.java_process import audit_parts
        from .targets.processes.jsonl_process import TargetFailure

        if family not in ASSIGNOR_NAMES:
            raise AuditTargetError(f"unknown assignor {family!r} in {name}; expected one of "
                                   f"{', '.join(ASSIGNOR_NAMES)}")
        try:
            assign, codec = audit_parts(rest.removeprefix("java:"), family, CALL_TIMEOUT)
        except (JavaUnavailable, TargetFailure) as exc:  # no JDK here, or no JVM starts
            raise AuditTargetError(f"cannot run {name} ({exc})") from None
        return AuditTarget(name, family, assign, codec)
    kind, _, assignor = name.partition(":")
    if kind == "builtin":
        from .impl.assign_op import run_assign_assignment_only
        from .impl.assignors import ASSIGNOR_NAMES

        if assignor not in ASSIGNOR_NAMES:
            raise AuditTargetError(f"unknown assignor {assignor!r}; expected one of "
                                   f"{', '.join(ASSIGNOR_NAMES)}")
        # the chains read only the assignment: the members' next user data is left out
        # one codec for every builtin target: I10 is then checked once per scenario
        return AuditTarget(name, assignor, run_assign_assignment_only, BuiltinCodec.shared())
    return resolve_plugin(name)


def cmd_audit(args: argparse.Namespace) -> int:
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise CommandError(f"audit needs PySpark and PyArrow (pip install "
                           f"'groupcheck[spark]'): {exc}") from None
    from .audit.corpus import corpus_problem
    from .audit.pipeline import AuditConfig, AuditError, run_audit
    from .audit.targets import DEFAULT_TARGETS

    problem = folder_problem(args.out, "--out")
    if not problem and args.corpus and "://" not in args.corpus:
        problem = corpus_problem(args.corpus)
    if problem:
        raise CommandError(f"audit: {problem}")
    targets = expand_targets(list(args.target or DEFAULT_TARGETS))
    if args.reference:
        expand_targets([args.reference])  # a java: reference is checked like a target
    if args.fresh and os.path.isdir(args.out):
        shutil.rmtree(args.out)
    config = AuditConfig(targets=targets,
                         scenarios=args.scenarios or DEFAULT_SCENARIOS, seed=args.seed,
                         master=args.master, out=args.out, chunk_size=args.chunk_size or 0,
                         slices=args.slices or 0, corpus=args.corpus,
                         reference=args.reference, shrink_seconds=args.shrink_seconds)
    try:
        outcome = run_audit(config, resolve_audit_target)
    except AuditError as exc:
        raise CommandError(f"audit: {exc}") from None
    summary = outcome.summary
    print(f"{summary['scenarios']:,} scenarios x {len(config.targets)} target(s) in "
          f"{outcome.seconds:.1f}s ({outcome.chunks_run} of {summary['chunks']} chunk(s) run "
          "now)")
    _print_findings(summary, str(outcome.out))
    print(f"report: {os.path.abspath(os.path.join(str(outcome.out), 'index.html'))}")
    if not outcome.ok:
        return 1
    return 1 if args.strict and summary["violations"] else 0


def expand_targets(targets: list[str]) -> list[str]:
    """``java:[CLASSPATH]`` → one target per assignor (``range@java:...`` and so on), each
    checked here, on the driver, so that a missing JDK or classpath is one line and exit 2
    before Spark starts, and the executors find the driver compiled in the cache. An empty
    classpath is pinned through ``$GROUPCHECK_KAFKA_CLASSPATH`` for the local workers."""
    from .audit.targets import ASSIGNOR_FAMILIES

    out: list[str] = []
    for name in targets:
        spec = name.partition("@")[2] or name
        if spec.startswith("java:"):
            from .targets.processes import java_runtime

            classpath = spec.removeprefix("java:")
            try:
                java_runtime.driver_command(classpath)
            except java_runtime.JavaUnavailable as exc:
                raise CommandError(f"audit: {exc}") from None
            default = java_runtime.default_classpath()
            if not classpath and default:
                os.environ.setdefault(java_runtime.ENV_CLASSPATH, default)
        out += [f"{a}@{name}" for a in ASSIGNOR_FAMILIES] if name.startswith("java:") \
            else [name]
    return out


def _label(entry: dict[str, Any]) -> str:
    """`` [rule K1]``, or where the reference reproduced the violation which one."""
    if entry.get("label") == "evidence":
        return f" [inherited from {entry['reference']}, which reproduced it]"
    return f" [rule {entry['rule']}]" if "rule" in entry else ""


def _print_findings(summary: dict[str, Any], out: str) -> None:
    """Per target the violated invariants, then every smallest counterexample: own
    violations first, then those a Kafka rule explains (never hidden, only labelled), each
    with its shrunk story where there is one."""
    import json

    try:
        with open(os.path.join(out, "timings.json"), encoding="utf-8") as fh:
            shrunk: dict[str, Any] = json.load(fh).get("shrink") or {}
    except (OSError, ValueError):
        shrunk = {}
    for target, per in summary["invariants"].items():
        shown = ", ".join(
            f"{inv} {c['violated']}" + (f" ({c['inherited']} inherited from Kafka)"
                                        if c["inherited"] else "")
            for inv, c in per.items() if c["violated"]) or "every invariant held"
        print(f"  {target} — {shown}")
    for label, key in (("VIOLATION", "counterexamples"),
                       ("INHERITED FROM KAFKA", "inherited_examples")):
        for target, per in summary[key].items():
            for inv, c in per.items():
                print(f"{label} {target} {inv}{_label(c)}: {c['violation']}")
                print(f"  smallest: scenario {c['scenario']} ({c['members']} members, "
                      f"{c['partitions']} partitions), replay file "
                      f"{os.path.join(out, c['file'])}")
                done = shrunk.get(c["file"]) or {}
                if "to" in done:
                    print(f"  shrunk to {done['to']['members']} members, "
                          f"{done['to']['partitions']} partitions: "
                          f"{os.path.join(out, done['file'])}")
    if summary["inherited_from_kafka"]:
        for rule, text in summary["kafka_rules"].items():
            print(f"rule {rule}: {text}")
        evidence = summary.get("inherited_by_evidence", 0)
        print(f"{summary['inherited_from_kafka']:,} violation(s) are Kafka's own behaviour "
              f"({summary['inherited_from_kafka'] - evidence:,} by a rule above"
              + (f", {evidence:,} reproduced by the reference {summary['reference']}"
                 if summary.get("reference") else "")
              + "); they fail the run only with --strict")


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("audit", help="run targets over many scenarios on Spark; write a "
                                     "report (Parquet, summary.json, index.html)")
    p.add_argument("--target", action="append", default=None,
                   help="builtin:<assignor>, java:[CLASSPATH] (Kafka's client, all four "
                        "assignors; <assignor>@java:[CLASSPATH] for one) or pyfn:<module or "
                        "file.py>:<function>; repeatable (default: the four builtin "
                        "assignors)")
    p.add_argument("--scenarios", type=int_at_least(1), default=None,
                   help=f"random scenarios to run (default {DEFAULT_SCENARIOS:,})")
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
    p.set_defaults(func=cmd_audit)


def main(argv: list[str] | None = None) -> int:
    """Run ``audit`` alone (``python -m groupcheck.audit_command``, or spark-submit)."""
    from .cli import UsageError, _Parser

    parser = _Parser(prog="groupcheck")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_commands(sub)
    try:
        args = parser.parse_args(["audit", *(sys.argv[1:] if argv is None else argv)])
        code: int = args.func(args)
        return code
    except (UsageError, CommandError) as exc:
        print(str(exc).splitlines()[0], file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
