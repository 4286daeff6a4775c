"""The ``faults`` engine: every fault point of a scope played on a wire target, several at
once in the scope's order, each a short story on a fresh group judged as every wire story is.

What lives here: `run_faults` and `play_scope` (the engine), `coverage` (its line: how
many of the scope's points it played) and `FaultTally` (what became of each point).

Theory of operation: the points come from `faults.points.fault_points`, each story from
`faults.stories.story`. A point the target cannot play — its protocol's assignor is not among
the client's, the client's request timeouts are not modelled, or the broker refuses its error at
the version the member speaks — is counted as not applicable, never as played. The engine plays
a point only when the slowest point so far and the point's late answers fit what is left of its
budget (a point under way finishes, unless it outlasts the budget by more than the slowest point
so far took: then it is abandoned, not played), to its first finding (or, asked, to the scope's
end: then the points with the longest late answers first, so that the last ones under way are
short), saved as a replay file (`groupcheck replay`). A violation before the point's fault is
armed, or one its story shows with no fault too, is the story's, not the fault's: once enough
points of one step and protocol failed so, its other points are not reached (`faults.own`;
counted apart: their story fails on its own); the full scope takes one point of each step and
protocol in turn, so that each has its first plays ended before the others are taken.
``workers`` points are under way at once, each on a group of its own of one broker, every member
placed by one driver pool (`faults.concurrent`); the tally lists the points in the scope's order
whatever order they ended in. A target whose backend cannot aim a fault at one member (the mock)
is skipped, as is any target that is not a wire target. """

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ...model.replay import Outcome, save
from ...model.stats import Stats
from ...properties.invariants import judged_by
from ...targets.target import Target
from ..faults.concurrent import PointRun, SharedRun, delayed, play_points
from ..faults.own import OwnFailures, before_fault
from ..faults.points import FULL, FaultPoint, FaultScope, Protocol, Step, fault_points
from ..progress import Meter, ProgressFn, silent
from .results import EngineResult, Finding, file_safe, invariant_id

__all__ = ["FAULTS_SHARE", "GRACE", "SHARED_DRIVER_WORKERS", "WORKERS", "FaultTally", "coverage",
           "in_turn", "play_scope", "run_faults"]

#: of a ``check`` run's budget, for the fault engine on each wire target (the state
#: machine's minimum and slices keep the rest)
FAULTS_SHARE = 0.3
#: points played at once, each on its own group of one broker (`faults.concurrent`), when
#: every client crashes by kill (librdkafka, kafka-python, Java: a crashed member's driver is
#: its point's own; Java's other consumers live in the run's one JVM, eight points' side by
#: side on a quiet machine, though at load 17–19 a starved JVM lost partitions the same
#: points alone kept); a target of a client that crashes by command shares one pool of
#: drivers across points and plays one point at a time (`SHARED_DRIVER_WORKERS`)
WORKERS = 8
SHARED_DRIVER_WORKERS = 1
#: seconds a point under way may outlast the budget, at least (`play_scope`)
GRACE = 1.0


@dataclass
class FaultTally:
    """The scope's points: played, not applicable (with the reason), not reached."""

    total: int
    played: list[FaultPoint] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)  # point name → why
    #: point name → why it was not reached: its step and protocol's story fails on its own
    unreached: dict[str, str] = field(default_factory=dict)


def coverage(tally: FaultTally) -> str:
    """``12 of 624 fault points played (40 not applicable)``, and how many were not
    reached because their story fails on its own."""
    unreached = (f"; {len(tally.unreached)} not reached: their story fails on its own"
                 if tally.unreached else "")
    return (f"{len(tally.played)} of {tally.total} fault points played "
            f"({len(tally.not_applicable)} not applicable{unreached})")


def in_turn(points: list[FaultPoint], late: Callable[[FaultPoint], float]
            ) -> list[FaultPoint]:
    """The full scope's order: the points with the longest late answers first (the last
    ones under way are then short), and among equals one point of each step and protocol in
    turn (each has its first plays ended before `OwnFailures` decides on the others)."""
    turn: dict[FaultPoint, int] = {}
    taken: Counter[tuple[Step, Protocol]] = Counter()
    for point in points:
        turn[point] = taken[(point.step, point.protocol)]
        taken[(point.step, point.protocol)] += 1
    return sorted(points, key=lambda p: (-late(p), turn[p]))


def _reason(target: Target) -> str:
    hints = target.hints
    if target.group is None or hints is None or not hints.wire:
        return "not a wire target (the fault engine plays real clients on a broker)"
    if not hints.steering:
        return "its backend cannot aim a fault at one member (the groupcheck broker can)"
    return ""


def _found(target: Target, run: PointRun, failures: str) -> list[Finding]:
    """The point's violations, saved as a replay file."""
    assert isinstance(run.outcome, Outcome)
    outcome, events, point = run.outcome, run.events, run.point
    if not outcome.violations:
        return []
    path = save(failures, file_safe(target.name), events, outcome.violations, None,
                extra={"target": target.name, "assignor": target.assignor,
                       "story": outcome.story})
    head = (f"the {point.step} story under {point.protocol} rebalances with no fault"
            if point.kind == "none" else f"fault point {point.name}"
            + (", its story failing before its fault" if before_fault(run) else ""))
    story = "\n".join([head, *outcome.story])
    return [Finding(invariant_id(v), v, str(path), len(events), story)
            for v in outcome.violations]


def run_faults(target: Target, budget: float, failures: str, *, scope: FaultScope = FULL,
               progress: ProgressFn = silent, workers: int | None = None) -> EngineResult:
    """`play_scope`'s result alone."""
    return play_scope(target, budget, failures, scope=scope, progress=progress,
                      workers=workers)[0]


def play_scope(target: Target, budget: float, failures: str, *, scope: FaultScope = FULL,
               progress: ProgressFn = silent, workers: int | None = None,
               every_finding: bool = False) -> tuple[EngineResult, FaultTally]:
    """The scope's points on ``target``, up to ``workers`` at once (None: `WORKERS`, or
    `SHARED_DRIVER_WORKERS` when the target's members share a driver pool), within
    ``budget`` seconds (a point under way finishes, unless it outlasts the budget by more
    than the slowest point so far, `GRACE` at least: it is abandoned), to the first finding
    (``every_finding``: to the scope's end); the result's note is the coverage line."""
    result, stats = EngineResult("faults", skipped=_reason(target)), Stats()
    points = fault_points(scope)
    tally = FaultTally(len(points))
    if result.skipped:
        return result, tally
    result.checked = judged_by("wire", timed=False)
    meter, slowest = Meter(progress, "faults", target.name, budget), [0.0]
    runs: list[PointRun] = []
    own = OwnFailures()

    def fits(late: float) -> bool:  # the slowest point so far, and the late answers
        return time.perf_counter() + slowest[0] + late <= meter.started + budget

    def start(_point: FaultPoint) -> bool:
        return fits(0.0) and (every_finding or not result.failed)

    def overdue() -> bool:  # past the budget by more than the slowest point took
        return time.perf_counter() > meter.started + budget + max(slowest[0], GRACE)

    def done(run: PointRun) -> None:
        if run.outcome is None:
            return
        runs.append(run)
        slowest[0] = max(slowest[0], run.closed - run.began - delayed(run.events))
        if isinstance(run.outcome, Outcome):
            own.hear(run)
            result.runs += run.point.kind != "none"  # a story with no fault is no point
            for finding in _found(target, run, failures):
                result.add(finding)
            meter.tick(result.runs, len(result.findings), run.point.name)

    shared = SharedRun(target)
    at_once = workers or (WORKERS if shared.kills else SHARED_DRIVER_WORKERS)
    try:
        ordered = in_turn(points, shared.late) if every_finding else points
        play_points(shared, own.points(ordered, tally.unreached), at_once, start, fits, done,
                    overdue)
    finally:
        shared.close()
    _count(runs, points, tally, stats)
    result.judged.update(stats.judged)
    result.delivery += stats.delivery
    result.commit_styles.update(stats.commit_styles)
    result.seconds = time.perf_counter() - meter.started
    result.note = coverage(tally)
    return result, tally


def _count(runs: list[PointRun], points: list[FaultPoint], tally: FaultTally,
           stats: Stats) -> None:
    """The tally, in the scope's order, and the judgements, of the points that ended."""
    order = {p: i for i, p in enumerate(points)}
    for run in sorted(runs, key=lambda r: order.get(r.point, len(order))):
        if isinstance(run.outcome, str):
            if run.point.kind != "none":
                tally.not_applicable[run.point.name] = run.outcome
        else:
            if run.point.kind != "none":  # a story with no fault is no point of the scope
                tally.played.append(run.point)
            stats.judged.update(run.stats.judged)
            stats.delivery += run.stats.delivery
            stats.commit_styles.update(run.stats.commit_styles)
