"""``groupcheck matrix``: the battery on every cell of targets × assignors (Kafka's releases
× Kafka's four assignors, typically), each cell within its own budget, a few cells at a
time, then every counterexample bisected over the other targets of its assignor.

Theory of operation. A *cell* is one target string and one assignor label. Cells run in
worker processes (``jobs`` of them, spawned, so no engine state is shared: the prover's
in-process worker state and Hypothesis are per process). A worker keeps the offers of the
target it last ran, so the cells of one release that land on one worker share its JVM (the
shared process per classpath), and closes them when it moves to another target. With more
than one job the prover runs in its worker's process (``workers=1``), so ``jobs`` is the
number of busy cores. Each cell's counterexamples go to ``<out>/failures/<target>/<assignor>``.

What a cell shows per invariant comes from its engines' verdicts as they are
(`EngineResult.verdict`): VIOLATED where any engine found a violation, then Kafka's own,
then held, then not judged (with the engines' reasons), else ``-``; nothing here knows what a
release implements. Afterwards each counterexample is replayed on every target of the
matrix that offers its assignor (`bisection`): present in, absent in, first seen in, gone in.

`parse_versions` turns ``--versions A..B`` into the ``java@V:`` targets of the Maven
repository within that inclusive range; a named wire template (``wire:java:range``) is put
at each of them (``wire:java@V:range``), so each cell plays real clients of that release.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.util import Finalize
from pathlib import Path
from typing import Required, TypedDict

from ...targets.offers import Offer, close_all
from ...targets.processes.maven_repo import release_order, releases
from ...targets.registry import NO_SETTINGS, resolve
from ...targets.settings import Settings
from ...targets.target import TargetError
from ..battery.check_report import BatteryJson, battery_json
from ..battery.results import (
    INVARIANT_ROWS,
    BatteryResult,
    CostFigures,
    EngineResult,
    file_safe,
)
from ..battery.runner import run_batteries
from ..errors import EngineInputError
from ..progress import Meter, ProgressFn, silent
from ..resolving import offers_of
from ..worker_pools import worker_pool
from .bisection import Bisection, bisect_many
from .wire_stories import at_release, is_wire_template

__all__ = ["Cell", "CellJob", "CellJson", "CellOptions", "MatrixRun", "cell_verdict",
           "named_and_released",
           "parse_versions", "plan_cells", "run_cell", "run_matrix"]

#: a cell's verdict per invariant, most telling first
SHORT = {"VIOLATED": "VIOLATED", "Kafka's": "Kafka's", "reproduced": "Kafka's",
         "holds": "ok", "absent": "absent"}
#: a cell shows its engines' most telling verdict: a violation first; ``absent`` (the
#: release lacks the feature) before "not judged"
RANK = ("VIOLATED", "Kafka's", "ok", "absent", "n/j", "-")


def parse_versions(text: str, repo: str) -> list[str]:
    """``A..B`` (inclusive) or ``A`` → the ``java@V:`` targets of the releases ``repo``
    holds in that range, oldest first (`EngineInputError`: one line)."""
    held = releases(repo)
    if not held:
        raise EngineInputError(f"--versions: no Kafka release in the Maven repository "
                               f"{repo or '~/.m2/repository'} (set GROUPCHECK_MAVEN_REPO)")
    low, sep, high = text.partition("..")
    low, high = low.strip(), (high.strip() if sep else low.strip())
    for end in (low, high):
        if end and end not in held:
            raise EngineInputError(f"--versions: {end} is not in the repository (it holds "
                                   f"{', '.join(held)})")
    ordered = sorted(held, key=release_order)
    first = ordered.index(low) if low else 0
    last = ordered.index(high) if high else len(ordered) - 1
    if first > last:
        raise EngineInputError(f"--versions: {text} runs backwards ({low} is newer than "
                               f"{high})")
    return [f"java@{v}:" for v in ordered[first:last + 1]]


def named_and_released(named: Sequence[str], versions: str | None, repo: str) -> list[str]:
    """The targets of a run over releases (``matrix``, ``bisect``): those ``named``, in
    order, then the releases of ``versions`` (`parse_versions`) not already named; but
    when a wire template is named (``wire:java:range``), each is put at every release in
    its place instead (`wire_stories.at_release`: ``wire:java@V:range``)."""
    targets = list(named)
    if not versions:
        return targets
    released = parse_versions(versions, repo)
    if any(is_wire_template(t) for t in targets):
        wired = [[at_release(t, r.removeprefix("java@").removesuffix(":")) for r in released]
                 if is_wire_template(t) else [t] for t in targets]
        return list(dict.fromkeys(t for group in wired for t in group))
    return targets + [t for t in released if t not in targets]


def plan_cells(targets: Sequence[str], assignors: Sequence[str],
               settings: Settings = NO_SETTINGS) -> list[tuple[str, str]]:
    """(target, assignor) per cell: the assignors asked for, else every one each target
    offers (its choices, not probed: a cell the target does not support says so)."""
    cells: list[tuple[str, str]] = []
    for text in targets:
        try:
            base = resolve(text, settings=settings)
        except TargetError as exc:
            raise EngineInputError(str(exc)) from None
        try:
            if assignors:
                labels = list(assignors)
            elif base.choices is not None:
                labels = list(base.choices())
            else:
                labels = [base.assignor or text]
        finally:
            base.close()
        cells += [(text, label) for label in labels]
    return cells


@dataclass(frozen=True)
class CellJob:
    """What a worker needs to run one cell (plain data: it crosses to another process)."""

    target: str
    assignor: str
    budget: float
    seed: int
    failures: str
    settings: Settings = NO_SETTINGS
    timeout: float | None = None
    workers: int | None = None
    parity: bool = False
    vectors: str | None = None


class CellOptions(TypedDict):
    """What every cell of one matrix run shares (a `CellJob`'s settings)."""

    settings: Settings
    timeout: float | None
    workers: int | None
    parity: bool
    vectors: str | None


class CellJson(TypedDict, total=False):
    """One cell of ``matrix --json``: the verdict per invariant, the scale engine's cost on
    the members ladder, the depth it reached (`Cell.reached`), the release's profile, why
    invariants were not judged, and the battery; or, unsupported, why."""

    target: Required[str]
    assignor: Required[str]
    seconds: Required[float]
    supported: Required[bool]
    error: str
    verdicts: dict[str, str]
    cost: str
    reached: str
    profile: str | None
    notJudged: dict[str, list[str]]
    result: BatteryJson


@dataclass
class Cell:
    """One cell's outcome: the battery's result, or why the target does not support it."""

    target: str
    assignor: str
    seconds: float
    result: BatteryResult | None = None
    error: str = ""

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.failed

    def verdicts(self) -> dict[str, str]:
        if self.result is None:
            return {}
        return {inv: cell_verdict(self.result.engines, inv) for inv in INVARIANT_ROWS}

    def cost(self) -> str:
        """The scale engine's growth on the members ladder and its largest time (``n^1.21
        0.44s``), or '' when it measured none."""
        scale = [e for e in self.result.engines if e.engine == "scale"] if self.result else []
        cost = (scale[0].figures.get("cost") or CostFigures()) if scale else CostFigures()
        members = cost.get("members")
        if members is None or "k" not in members:
            return ""
        return f"n^{members['k']:.2f} {members['seconds']:.2g}s"

    def reached(self) -> str:
        """How deep the cell went within its budget: the prover's scopes, the state
        machine's examples and the random stories (``3/6 scopes, 57 examples, 1,027
        stories``), '' when none ran."""
        engines = [e for e in self.result.engines if not e.skipped] if self.result else []
        parts = [e.depth.replace(" of ", "/") for e in engines
                 if e.engine == "prove" and e.depth]
        parts += [f"{e.runs:,} examples" for e in engines if e.engine == "fuzz"]
        parts += [f"{e.runs:,} stories" for e in engines if e.engine == "scenarios"]
        return ", ".join(parts)

    def to_json(self) -> CellJson:
        body: CellJson = {"target": self.target, "assignor": self.assignor,
                          "seconds": round(self.seconds, 3),
                          "supported": self.result is not None}
        if self.result is None:
            body["error"] = self.error
        else:
            body["verdicts"] = self.verdicts()
            body["cost"] = self.cost()
            body["reached"] = self.reached()
            body["profile"] = self.result.profile or None
            body["notJudged"] = not_judged(self.result.engines)
            body["result"] = battery_json(self.result)
        return body


def cell_verdict(engines: Sequence[EngineResult], invariant: str) -> str:
    """The short verdict of one invariant over a cell's engines (see the module doc)."""
    shown = [SHORT.get(v, "n/j" if v.startswith("not judged") else "-")
             for v in (e.verdict(invariant) for e in engines if not e.skipped)]
    return min(shown, key=RANK.index, default="-")


def not_judged(engines: Sequence[EngineResult]) -> dict[str, list[str]]:
    """Per invariant no engine judged: each engine's verdict and reason, as it gave them."""
    out: dict[str, list[str]] = {}
    for inv in INVARIANT_ROWS:
        if cell_verdict(engines, inv) not in ("n/j", "absent"):
            continue
        out[inv] = [f"{e.engine}: {e.verdict(inv)}: {e.why_not(inv)}" for e in engines
                    if not e.skipped and e.verdict(inv) in ("not judged", "absent")]
    return out


_HELD: dict[str, list[Offer]] = {}  # a worker's offers of the target it ran last
_FINAL: Finalize | None = None


def _offer(job: CellJob) -> Offer:
    """The cell's offer; the worker's offers of other targets are closed first."""
    global _FINAL
    if _FINAL is None:  # a pool worker exits through os._exit: no atexit, but finalizers
        _FINAL = Finalize(None, _release, exitpriority=10)
    for text in [t for t in _HELD if t != job.target]:
        close_all(_HELD.pop(text))
    offers = _HELD.setdefault(job.target, [])
    found = next((o for o in offers if o.label == job.assignor), None)
    if found is None:
        try:
            made = offers_of(job.target, [job.assignor], job.timeout, job.settings)
        except EngineInputError as exc:
            made = [Offer(job.assignor, None, str(exc))]
        offers += made
        found = next((o for o in made if o.label == job.assignor), made[0])
    return found


def run_cell(job: CellJob) -> Cell:
    """One cell: the battery on the target's assignor within the cell's budget."""
    started = time.perf_counter()
    offer = _offer(job)
    if offer.target is None:
        return Cell(job.target, job.assignor, time.perf_counter() - started,
                    error=offer.error or "not supported")
    result = run_batteries([offer.target], budget=job.budget, failures=job.failures,
                           seed=job.seed, workers=job.workers, parity=job.parity,
                           vectors=Path(job.vectors) if job.vectors else None)[0]
    return Cell(job.target, job.assignor, time.perf_counter() - started, result)


def _release() -> None:
    for offers in _HELD.values():
        close_all(offers)
    _HELD.clear()


@dataclass
class MatrixRun:
    """The whole matrix: its cells (in plan order), the bisections, the settings."""

    cells: list[Cell]
    budget: float
    seed: int
    jobs: int
    seconds: float = 0.0
    bisections: dict[str, Bisection] = field(default_factory=dict)  # by file

    @property
    def failed(self) -> bool:
        return any(c.failed for c in self.cells)


def _jobs(plan: Sequence[tuple[str, str]], budget: float, seed: int, out: Path,
          options: CellOptions) -> list[CellJob]:
    return [CellJob(t, a, budget, seed,
                    str(out / "failures" / file_safe(t).replace(":", "-") / file_safe(a)),
                    **options) for t, a in plan]


def run_matrix(plan: Sequence[tuple[str, str]], *, budget: float, seed: int = 0,
               jobs: int = 2, out: Path = Path("matrix-out"),
               settings: Settings = NO_SETTINGS, timeout: float | None = None,
               parity: bool = False, vectors: Path | None = None,
               progress: ProgressFn = silent) -> MatrixRun:
    """Every cell of ``plan`` (`plan_cells`), ``jobs`` at a time, then the bisections;
    ``progress`` hears of every cell done (its findings: the cells violated so far)."""
    started = time.perf_counter()
    workers = 1 if jobs > 1 else None
    options: CellOptions = {"settings": settings, "timeout": timeout, "workers": workers,
                            "parity": parity, "vectors": str(vectors) if vectors else None}
    todo = _jobs(plan, budget, seed, out, options)
    cells = _run_cells(todo, jobs, Meter(progress, "matrix", f"{len(todo)} cell(s)"))
    run = MatrixRun(cells, budget, seed, jobs)
    run.bisections = bisect_cells(cells, settings=settings, timeout=timeout)
    run.seconds = time.perf_counter() - started
    return run


def _run_cells(todo: Sequence[CellJob], jobs: int, meter: Meter) -> list[Cell]:
    done: list[Cell] = []

    def told(cell: Cell) -> Cell:
        done.append(cell)
        state = ("not supported" if cell.result is None
                 else "VIOLATED" if cell.failed else "held")
        meter.tick(len(done), sum(c.failed for c in done),
                   f"{cell.target} {cell.assignor}: {state}")
        return cell

    if jobs <= 1 or len(todo) <= 1:
        try:
            return [told(run_cell(j)) for j in todo]
        finally:
            _release()
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
        else "spawn"
    with worker_pool(min(jobs, len(todo)), method) as pool:
        futures = [pool.submit(run_cell, j) for j in todo]
        return [told(f.result()) for f in futures]


def bisect_cells(cells: Sequence[Cell], *, settings: Settings = NO_SETTINGS,
                 timeout: float | None = None) -> dict[str, Bisection]:
    """Every replayable counterexample of every cell, on every target of its assignor."""
    by_assignor: dict[str, list[str]] = {}
    files: dict[str, list[str]] = {}
    for cell in cells:
        if cell.result is None:
            continue
        by_assignor.setdefault(cell.assignor, []).append(cell.target)
        for engine in cell.result.engines:
            for finding in engine.every_finding():
                if finding.file and os.path.exists(finding.file):
                    files.setdefault(cell.assignor, []).append(finding.file)
    out: dict[str, Bisection] = {}
    for assignor, paths in files.items():
        unique = list(dict.fromkeys(paths))
        for b in bisect_many(unique, by_assignor[assignor], assignor=assignor,
                             timeout=timeout, settings=settings):
            out[b.file] = b
    return out
