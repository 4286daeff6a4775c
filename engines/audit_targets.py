"""The audit's targets as the command line names them, and what it prints of a summary.

``builtin:<assignor>`` is groupcheck's ``impl.assign_op`` (the audit floor never imports
impl), ``<assignor>@java:[CLASSPATH]`` is Kafka's own client (one JVM per Python worker,
started when the worker first resolves it; the compiled driver is shared through the
cache; an empty classpath is the settings' ``kafka_classpath``), ``java:[CLASSPATH]``
stands for the four assignors on it, and ``pyfn:<module or file.py>:<function>`` is a
user's function (`audit.targets.resolve_plugin`). `resolve_audit_target` is shipped to the
executors by reference, with the settings bound (``functools.partial``).
"""

from __future__ import annotations

import os
from typing import Any

from ..audit.call_timeout import CALL_TIMEOUT
from ..audit.targets import ASSIGNOR_FAMILIES, AuditTarget, AuditTargetError, resolve_plugin
from ..impl.assign_op import run_assign_assignment_only
from ..impl.assignors import ASSIGNOR_NAMES
from ..impl.consumer_protocol import decode_subscription, encode_subscription
from ..impl.errors import CodecError
from ..impl.types import Subscription
from ..targets.processes import java_runtime
from ..targets.processes.java_process import audit_parts
from ..targets.processes.jsonl_process import TargetFailure
from ..targets.registry import NO_SETTINGS
from ..targets.settings import Settings
from .errors import EngineInputError

__all__ = ["BuiltinCodec", "expand_targets", "findings_lines", "resolve_audit_target"]


class BuiltinCodec:
    """Our consumer-protocol codec as an I10 codec (plain-data messages)."""

    #: the instance every builtin target shares (the codec holds no state); kept on the
    #: class, which Spark's workers rebuild when this module runs as ``__main__``
    _shared: BuiltinCodec | None = None

    def __init__(self) -> None:
        self.error: type[Exception] = CodecError

    @classmethod
    def shared(cls) -> BuiltinCodec:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    def encode_subscription(self, x: dict[str, Any], version: int) -> bytes:
        gen = x["generation"]
        return encode_subscription(
            Subscription(list(x["topics"]), x["userData"], [(t, p) for t, p in x["owned"]],
                         None if gen is None or gen < 0 else gen, x["rack"]), version)

    def decode_subscription(self, data: bytes) -> dict[str, Any]:
        d = decode_subscription(data)
        return {"topics": d.topics, "userData": d.user_data,
                "ownedPartitions": d.owned_partitions, "generationId": d.generation_id,
                "rackId": d.rack_id, "version": d.version, "remaining": d.remaining}


def _java(name: str, family: str, classpath: str, settings: Settings) -> AuditTarget:
    if family not in ASSIGNOR_NAMES:
        raise AuditTargetError(f"unknown assignor {family!r} in {name}; expected one of "
                               f"{', '.join(ASSIGNOR_NAMES)}")
    try:
        assign, codec = audit_parts(classpath, family, CALL_TIMEOUT, settings.kafka_classpath)
    except (java_runtime.JavaUnavailable, TargetFailure) as exc:  # no JDK, or no JVM starts
        raise AuditTargetError(f"cannot run {name} ({exc})") from None
    return AuditTarget(name, family, assign, codec)


def resolve_audit_target(name: str, settings: Settings = NO_SETTINGS) -> AuditTarget:
    """A target string → an `AuditTarget`: ``builtin:<assignor>`` (our implementation),
    ``<assignor>@java:[CLASSPATH]`` (Kafka's client, each call bounded by the audit's time
    limit) or ``pyfn:<module or file.py>:<function>``."""
    family, at, rest = name.partition("@")
    if at and rest.startswith("java:"):
        return _java(name, family, rest.removeprefix("java:"), settings)
    kind, _, assignor = name.partition(":")
    if kind == "builtin":
        if assignor not in ASSIGNOR_NAMES:
            raise AuditTargetError(f"unknown assignor {assignor!r}; expected one of "
                                   f"{', '.join(ASSIGNOR_NAMES)}")
        # the chains read only the assignment: the members' next user data is left out
        # one codec for every builtin target: I10 is then checked once per scenario
        return AuditTarget(name, assignor, run_assign_assignment_only, BuiltinCodec.shared())
    return resolve_plugin(name)


def expand_targets(targets: list[str], settings: Settings = NO_SETTINGS) -> list[str]:
    """``java:[CLASSPATH]`` → one target per assignor (``range@java:...`` and so on), each
    checked here, on the driver, so that a missing JDK or classpath is one line before Spark
    starts, and the executors find the driver compiled in the cache."""
    out: list[str] = []
    for name in targets:
        spec = name.partition("@")[2] or name
        if spec.startswith("java:"):
            try:
                java_runtime.driver_command(spec.removeprefix("java:"),
                                            settings.kafka_classpath)
            except java_runtime.JavaUnavailable as exc:
                raise EngineInputError(f"audit: {exc}") from None
        out += [f"{a}@{name}" for a in ASSIGNOR_FAMILIES] if name.startswith("java:") \
            else [name]
    return out


def _label(entry: dict[str, Any]) -> str:
    """`` [rule K1]``, or where the reference reproduced the violation which one."""
    if entry.get("label") == "evidence":
        return f" [inherited from {entry['reference']}, which reproduced it]"
    return f" [rule {entry['rule']}]" if "rule" in entry else ""


def _example_lines(summary: dict[str, Any], out: str, shrunk: dict[str, Any]) -> list[str]:
    """Every smallest counterexample: own violations first, then those a Kafka rule
    explains (never hidden, only labelled), each with its shrunk story where there is one."""
    lines = []
    for label, key in (("VIOLATION", "counterexamples"),
                       ("INHERITED FROM KAFKA", "inherited_examples")):
        for target, per in summary[key].items():
            for inv, c in per.items():
                lines.append(f"{label} {target} {inv}{_label(c)}: {c['violation']}")
                lines.append(f"  smallest: scenario {c['scenario']} ({c['members']} members, "
                             f"{c['partitions']} partitions), replay file "
                             f"{os.path.join(out, c['file'])}")
                done = shrunk.get(c["file"]) or {}
                if "to" in done:
                    lines.append(f"  shrunk to {done['to']['members']} members, "
                                 f"{done['to']['partitions']} partitions: "
                                 f"{os.path.join(out, done['file'])}")
    return lines


def findings_lines(summary: dict[str, Any], out: str, shrunk: dict[str, Any]) -> list[str]:
    """Per target the violated invariants, then every smallest counterexample, then the
    Kafka rules that label what is inherited (``shrunk``: the report's shrink timings)."""
    lines = []
    for target, per in summary["invariants"].items():
        shown = ", ".join(
            f"{inv} {c['violated']}" + (f" ({c['inherited']} inherited from Kafka)"
                                        if c["inherited"] else "")
            for inv, c in per.items() if c["violated"]) or "every invariant held"
        lines.append(f"  {target} — {shown}")
    lines += _example_lines(summary, out, shrunk)
    if summary["inherited_from_kafka"]:
        for rule, text in summary["kafka_rules"].items():
            lines.append(f"rule {rule}: {text}")
        evidence = summary.get("inherited_by_evidence", 0)
        lines.append(f"{summary['inherited_from_kafka']:,} violation(s) are Kafka's own "
                     f"behaviour ({summary['inherited_from_kafka'] - evidence:,} by a rule "
                     "above"
                     + (f", {evidence:,} reproduced by the reference {summary['reference']}"
                        if summary.get("reference") else "")
                     + "); they fail the run only with --strict")
    return lines
