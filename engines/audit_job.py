"""``groupcheck audit``'s job: its configuration checked before Spark starts, the pipeline
run with the targets resolved on the executors (`resolving.resolve_audit_target`, the
settings bound), what the report says about shrinking, and what the command prints of a
summary."""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Mapping

from ..audit.corpus import corpus_problem
from ..audit.pipeline import AuditConfig, AuditError, AuditOutcome, run_audit
from ..audit.summary_shapes import AuditSummary, LabelEntry, ShrinkDone
from ..audit.targets import DEFAULT_TARGETS
from ..targets.registry import NO_SETTINGS
from ..targets.settings import Settings
from .errors import EngineInputError
from .progress import Meter, ProgressFn, silent
from .resolving import expand_targets, resolve_audit_target

__all__ = ["DEFAULT_SCENARIOS", "audit_config", "findings_lines", "run_audit_job",
           "shrink_timings"]

DEFAULT_SCENARIOS = 100_000


def _spark_problem() -> str | None:
    try:  # the spark extra is optional: say what to install instead of an ImportError
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        return f"audit needs PySpark and PyArrow (pip install 'groupcheck[spark]'): {exc}"
    return None


def audit_config(*, targets: list[str], scenarios: int | None, seed: int,
                 master: str | None, out: str, chunk_size: int | None, slices: int | None,
                 corpus: str | None, reference: str | None, shrink_seconds: float,
                 out_problem: str | None = None,
                 settings: Settings = NO_SETTINGS) -> AuditConfig:
    """The audit's configuration, checked before Spark starts: Spark is here, the output
    folder and the corpus can be used (``out_problem``: the caller's finding about the
    folder), every ``java:`` target (the reference too) runs."""
    problem = _spark_problem() or out_problem
    if problem is None and corpus and "://" not in corpus:
        problem = corpus_problem(corpus)
    if problem:
        raise EngineInputError(problem if problem.startswith("audit") else f"audit: {problem}")
    expanded = expand_targets(list(targets or DEFAULT_TARGETS), settings)
    if reference:
        expand_targets([reference], settings)
    return AuditConfig(targets=expanded, scenarios=scenarios or DEFAULT_SCENARIOS, seed=seed,
                       master=master, out=out, chunk_size=chunk_size or 0,
                       slices=slices or 0, corpus=corpus, reference=reference,
                       shrink_seconds=shrink_seconds)


def run_audit_job(config: AuditConfig, *, fresh: bool = False,
                  settings: Settings = NO_SETTINGS,
                  progress: ProgressFn = silent) -> AuditOutcome:
    """Run the pipeline (``fresh``: over a new output folder, else resuming the one there);
    ``progress`` hears of every chunk (its runs: the scenarios run so far, this time)."""
    if fresh and os.path.isdir(config.out):
        shutil.rmtree(config.out)
    meter = Meter(progress, "audit", ", ".join(config.targets))
    done = 0

    def chunk(scenarios: int) -> None:
        nonlocal done
        done += scenarios
        meter.tick(done, note=f"of {config.scenarios:,} scenarios")

    try:
        return run_audit(config, functools.partial(resolve_audit_target, settings=settings),
                         progress=chunk)
    except AuditError as exc:
        raise EngineInputError(f"audit: {exc}") from None


def shrink_timings(out: str) -> dict[str, ShrinkDone]:
    """The report's shrink timings: which examples were shrunk, and into which file."""
    try:
        with open(os.path.join(out, "timings.json"), encoding="utf-8") as fh:
            found: dict[str, ShrinkDone] = json.load(fh).get("shrink") or {}
            return found
    except (OSError, ValueError):
        return {}


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
