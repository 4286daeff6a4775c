"""``groupcheck audit``'s job: its configuration checked before Spark starts, the pipeline
run with the targets resolved on the executors (`audit_targets`, the settings bound), and
what the report says about shrinking."""

from __future__ import annotations

import functools
import json
import os
import shutil
from typing import Any

from ..audit.corpus import corpus_problem
from ..audit.pipeline import AuditConfig, AuditError, AuditOutcome, run_audit
from ..audit.targets import DEFAULT_TARGETS
from ..targets.registry import NO_SETTINGS
from ..targets.settings import Settings
from .audit_targets import expand_targets, resolve_audit_target
from .errors import EngineInputError
from .progress import Meter, ProgressFn, silent

__all__ = ["DEFAULT_SCENARIOS", "audit_config", "run_audit_job", "shrink_timings"]

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


def shrink_timings(out: str) -> dict[str, Any]:
    """The report's shrink timings: which examples were shrunk, and into which file."""
    try:
        with open(os.path.join(out, "timings.json"), encoding="utf-8") as fh:
            found: dict[str, Any] = json.load(fh).get("shrink") or {}
            return found
    except (OSError, ValueError):
        return {}
