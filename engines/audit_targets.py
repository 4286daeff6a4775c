"""The audit's targets as the command line names them, and what it prints of a summary.

``builtin:<assignor>`` is groupcheck's ``impl.assign_op`` (the audit floor never imports
impl), ``<assignor>@java:[CLASSPATH]`` and ``<assignor>@java@<release>:`` are Kafka's own
client (one JVM per Python worker and release,
started when the worker first resolves it; the compiled driver is shared through the
cache; an empty classpath is the settings' ``kafka_classpath``, a release comes from the
settings' Maven repository), ``java:[CLASSPATH]`` and ``java@<release>:`` stand for the four
assignors on it, and ``pyfn:<module or file.py>:<function>`` is a
user's function (`audit.targets.resolve_plugin`). `resolve_audit_target` is shipped to the
executors by reference, with the settings bound (``functools.partial``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..audit.call_timeout import CALL_TIMEOUT
from ..audit.summary_shapes import AuditSummary, LabelEntry, ShrinkDone
from ..audit.targets import ASSIGNOR_FAMILIES, AuditTarget, AuditTargetError, resolve_plugin
from ..impl.assign_op import run_assign_assignment_only
from ..impl.assignors import ASSIGNOR_NAMES
from ..impl.consumer_protocol import decode_subscription, encode_subscription
from ..impl.errors import CodecError
from ..impl.types import Subscription
from ..targets.adapters.codecs import ReleaseCodec
from ..targets.processes import java_runtime
from ..targets.processes.java_process import (
    audit_parts,
    java_classpath,
    java_process,
    java_profile,
)
from ..targets.processes.jsonl_process import TargetAnswerError, TargetFailure
from ..targets.profile import ProfileError
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


def _java(name: str, family: str, spec: str, settings: Settings) -> AuditTarget:
    """``spec`` is ``java:[CLASSPATH]`` or ``java@<release>:``."""
    if family not in ASSIGNOR_NAMES:
        raise AuditTargetError(f"unknown assignor {family!r} in {name}; expected one of "
                               f"{', '.join(ASSIGNOR_NAMES)}")
    try:
        classpath = _classpath(spec, settings)
        assign, codec = audit_parts(classpath, family, CALL_TIMEOUT)
        if not spec.startswith("java@"):
            return AuditTarget(name, family, assign, codec)
        # a release: held to what it implements
        profile = java_profile(java_process(classpath, CALL_TIMEOUT))
    except (java_runtime.JavaUnavailable, TargetFailure, TargetAnswerError,
            ProfileError) as exc:  # no JDK, no JVM starts, or no profile
        raise AuditTargetError(f"cannot run {name} ({exc})") from None
    return AuditTarget(name, family, assign, ReleaseCodec(codec, profile))


def _is_java(spec: str) -> bool:
    return spec.startswith("java:") or spec.startswith("java@")


def _classpath(spec: str, settings: Settings) -> str:
    """The classpath of ``java:[CLASSPATH]`` or ``java@<release>:`` (`JavaUnavailable`)."""
    kind, _, classpath = spec.partition(":")
    release = kind.partition("@")[2]
    return java_classpath(release, "" if release else classpath, settings)


def resolve_audit_target(name: str, settings: Settings = NO_SETTINGS) -> AuditTarget:
    """A target string → an `AuditTarget`: ``builtin:<assignor>`` (our implementation),
    ``<assignor>@java:[CLASSPATH]`` (Kafka's client, each call bounded by the audit's time
    limit) or ``pyfn:<module or file.py>:<function>``."""
    family, at, rest = name.partition("@")
    if at and _is_java(rest):
        return _java(name, family, rest, settings)
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
    """``java:[CLASSPATH]`` and ``java@<release>:`` → one target per assignor
    (``range@java:...``, ``range@java@3.4.0:`` and so on), each checked here, on the driver,
    so that a missing JDK, classpath or release is one line before Spark starts, and the
    executors find the driver compiled in the cache."""
    out: list[str] = []
    for name in targets:
        family, at, rest = name.partition("@")
        spec = rest if at and family in ASSIGNOR_FAMILIES else name
        if _is_java(spec):
            try:
                java_runtime.driver_command(_classpath(spec, settings))
            except java_runtime.JavaUnavailable as exc:
                raise EngineInputError(f"audit: {exc}") from None
        out += _per_assignor(name) if spec is name and _is_java(name) else [name]
    return out


def _per_assignor(spec: str) -> list[str]:
    """``java:CP`` → ``<a>@java:CP`` for the four; ``java@3.4.0:range`` → one of them."""
    kind, _, rest = spec.partition(":")
    if kind.startswith("java@") and rest:
        if rest not in ASSIGNOR_FAMILIES:
            raise EngineInputError(f"audit: {spec}: after a release's colon comes an "
                                   f"assignor ({', '.join(ASSIGNOR_FAMILIES)}), not {rest!r}")
        return [f"{rest}@{kind}:"]
    return [f"{a}@{spec}" for a in ASSIGNOR_FAMILIES]


def _label(entry: LabelEntry) -> str:
    """`` [rule K1]``, or where the reference reproduced the violation which one."""
    if entry.get("label") == "evidence":
        return f" [inherited from {entry['reference']}, which reproduced it]"
    return f" [rule {entry['rule']}]" if "rule" in entry else ""


def _example_lines(summary: AuditSummary, out: str, shrunk: Mapping[str, ShrinkDone]
                   ) -> list[str]:
    """Every smallest counterexample: own violations first, then those a Kafka rule
    explains (never hidden, only labelled), each with its shrunk story where there is one."""
    lines = []
    for label, examples in (("VIOLATION", summary["counterexamples"]),
                            ("INHERITED FROM KAFKA", summary["inherited_examples"])):
        for target, per in examples.items():
            for inv, c in per.items():
                lines.append(f"{label} {target} {inv}{_label(c)}: {c['violation']}")
                lines.append(f"  smallest: scenario {c['scenario']} ({c['members']} members, "
                             f"{c['partitions']} partitions), replay file "
                             f"{os.path.join(out, c['file'])}")
                done = shrunk.get(c["file"])
                if done is not None and "to" in done:
                    lines.append(f"  shrunk to {done['to']['members']} members, "
                                 f"{done['to']['partitions']} partitions: "
                                 f"{os.path.join(out, done['file'])}")
    return lines


def findings_lines(summary: AuditSummary, out: str, shrunk: Mapping[str, ShrinkDone]
                   ) -> list[str]:
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
