"""``groupcheck zoo``: every mutant of the bug zoo caught by the engine its entry names,
within its budget, and each check run on the unmutated builtin as its control."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..targets.registry import resolve
from ..targets.target import Target
from ..targets.zoo.entries import ZooEntry
from .battery.fuzz import run_fuzz
from .battery.golden import run_codec, run_vectors
from .battery.prove import run_prove, run_scenarios
from .battery.results import EngineResult, Finding
from .battery.scale import run_scale
from .progress import ProgressFn, silent

__all__ = ["ZooOutcome", "run_zoo_check", "run_zoo_entry", "zoo_table"]


@dataclass
class ZooOutcome:
    row: str
    bug: str
    target: str
    engine: str
    expected: str
    caught: Finding | None
    seconds: float
    budget: float
    control: str  # "passed" | "FAILED: ..." | "not run"

    @property
    def ok(self) -> bool:
        return (self.caught is not None and self.seconds <= self.budget
                and self.control in ("passed", "not run"))


def run_zoo_check(entry: ZooEntry, target: Target, failures: str,
                  progress: ProgressFn = silent, vectors: Path | None = None) -> EngineResult:
    """The one check a zoo entry names, on ``target`` (the prover and the state machine
    tell ``progress`` of their work; ``vectors``: the golden vectors' folder, for the
    ``vectors`` engine)."""
    if entry.engine == "scenario":
        return run_scenarios(target, entry.scenarios, failures, entry.expect)
    if entry.engine == "prove":
        return run_prove(target, entry.scope, failures, progress=progress)
    if entry.engine == "codec":
        return run_codec(target, failures)
    if entry.engine == "fuzz":
        return run_fuzz(target, entry.budget, failures, progress=progress)
    if entry.engine == "scale":
        return run_scale(target, entry.budget, failures)
    if entry.engine == "vectors":
        return run_vectors(target, failures, vectors=vectors)
    raise ValueError(f"unknown engine {entry.engine}")


def run_zoo_entry(entry: ZooEntry, failures: str, control: bool = True,
                  progress: ProgressFn = silent, vectors: Path | None = None) -> ZooOutcome:
    target = resolve(entry.target)
    started = time.perf_counter()
    try:
        result = run_zoo_check(entry, target, failures, progress, vectors)
    finally:
        target.close()
    seconds = time.perf_counter() - started
    caught = None
    if result.findings:
        caught = result.findings.get(entry.invariant) or next(iter(result.findings.values()))
    verdict = "not run"
    if control:
        base = resolve(entry.base)
        try:
            base_result = run_zoo_check(entry, base, failures, progress, vectors)
        finally:
            base.close()
        verdict = "passed" if not base_result.findings else \
            "FAILED: " + next(iter(base_result.findings.values())).violation
    return ZooOutcome(entry.row, entry.bug, entry.target, entry.engine, entry.invariant,
                      caught, seconds, entry.budget, verdict)


def zoo_table(outcomes: list[ZooOutcome]) -> str:
    lines = [f"{'row':<7} {'bug':<20} {'target':<42} {'caught by':<11} {'engine':<9} "
             f"{'time':>7}  {'shrunk':<12} control"]
    for o in outcomes:
        caught = o.caught.invariant if o.caught else "ESCAPED"
        if o.caught and o.caught.invariant != o.expected:
            caught += f" (!{o.expected})"
        size = "-"
        if o.caught and o.caught.size is not None:
            unit = "events" if o.engine == "fuzz" else "members"
            size = f"{o.caught.size} {unit}"
        lines.append(f"{o.row:<7} {o.bug:<20} {o.target:<42} {caught:<11} {o.engine:<9} "
                     f"{o.seconds:>6.2f}s  {size:<12} {o.control}")
    good = sum(o.ok for o in outcomes)
    lines.append(f"{good}/{len(outcomes)} mutants caught within budget with a clean control")
    return "\n".join(lines)
