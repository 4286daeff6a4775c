"""The ``faults`` engine: every fault point of a scope played, in order, on a wire target,
each a short story on a fresh group judged as every wire story is.

What lives here: `run_faults` and `play_scope` (the engine), `coverage` (its line: how
many of the scope's points it played) and `FaultTally` (what became of each point).

Theory of operation: the points come from `faults.points.fault_points`, each story from
`faults.stories.story`. A point the target cannot play — its protocol's assignor is not among
the client's, the client's request timeouts are not modelled, no event plays its kind, or
the broker refuses its error at the version the member speaks — is counted as not
applicable, never as played. The engine plays a point only when the slowest point so far
and the point's late answers fit what is left of its budget (a point under way finishes),
to its first finding, saved as a replay file (`groupcheck replay`). A target
whose backend cannot aim a fault at one member (the mock) is skipped, as is any target
that is not a wire target.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ...model.events import DomainEvent
from ...model.group_events import Delay
from ...model.machine_config import wire_config
from ...model.replay import Outcome, replay_events, save
from ...model.stats import Stats
from ...properties.harness import HarnessError
from ...properties.invariants import judged_by
from ...targets.target import Target
from ...targets.wire.wire_group import WireGroup
from ..faults.points import FULL, FaultPoint, FaultScope, fault_points
from ..faults.stories import MEMBERS, protocol_assignor, story
from ..progress import Meter, ProgressFn, silent
from .results import EngineResult, Finding, file_safe, invariant_id

__all__ = ["FAULTS_SHARE", "FaultTally", "coverage", "play_scope", "run_faults"]

#: of a ``check`` run's budget, for the fault engine on each wire target (the state
#: machine's minimum and slices keep the rest)
FAULTS_SHARE = 0.3


@dataclass
class FaultTally:
    """The scope's points: played, not applicable (with the reason), not reached."""

    total: int
    played: list[FaultPoint] = field(default_factory=list)
    not_applicable: dict[str, str] = field(default_factory=dict)  # point name → why


def coverage(tally: FaultTally) -> str:
    """``12 of 624 fault points played (40 not applicable)``."""
    return (f"{len(tally.played)} of {tally.total} fault points played "
            f"({len(tally.not_applicable)} not applicable)")


def _reason(target: Target) -> str:
    hints = target.hints
    if target.group is None or hints is None or not hints.wire:
        return "not a wire target (the fault engine plays real clients on a broker)"
    if not hints.steering:
        return "its backend cannot aim a fault at one member (the groupcheck broker can)"
    return ""


def _delayed(events: list[DomainEvent]) -> float:
    """Seconds the story's late answers add."""
    return sum(e.ms for e in events if isinstance(e, Delay)) / 1000


def _play(target: Target, point: FaultPoint, stats: Stats, fits: Callable[[float], bool]
          ) -> tuple[list[DomainEvent], Outcome | str | None]:
    """The point's story and its outcome on a fresh group, why it is not applicable, or
    None: its late answers do not ``fit`` the time left (not reached)."""
    assert target.group is not None and target.hints is not None and target.assignor
    group = target.group()
    if not isinstance(group, WireGroup):
        group.close()
        return [], "not a wire group"
    info = group.client_of(MEMBERS[0])
    assignor = protocol_assignor(point.protocol, target.assignor)
    if assignor not in info.assignors:
        group.close()
        return [], f"{info.name} has no {assignor} assignor ({point.protocol} rebalances)"
    events = story(point, info.name, assignor)
    if isinstance(events, str) or not fits(_delayed(events)):
        group.close()
        return [], events if isinstance(events, str) else None
    config = wire_config(target.hints.assignor, steering=True, profiles=target.hints.profiles)
    try:
        return events, replay_events(group, events, config.promises,
                                     target.hints.generations, stats=stats)
    except (ValueError, HarnessError) as exc:  # the broker refused the fault at the
        if "refused" not in str(exc):          # version the member speaks
            raise
        return events, str(exc).splitlines()[0]


def _found(target: Target, events: list[DomainEvent], outcome: Outcome, point: FaultPoint,
           failures: str) -> list[Finding]:
    """The point's violations, saved as a replay file."""
    path = save(failures, file_safe(target.name), events, outcome.violations, None,
                extra={"target": target.name, "assignor": target.assignor,
                       "story": outcome.story})
    story = "\n".join([f"fault point {point.name}", *outcome.story])
    return [Finding(invariant_id(v), v, str(path), len(events), story)
            for v in outcome.violations]


def run_faults(target: Target, budget: float, failures: str, *, scope: FaultScope = FULL,
               progress: ProgressFn = silent) -> EngineResult:
    """`play_scope`'s result alone."""
    return play_scope(target, budget, failures, scope=scope, progress=progress)[0]


def play_scope(target: Target, budget: float, failures: str, *, scope: FaultScope = FULL,
               progress: ProgressFn = silent) -> tuple[EngineResult, FaultTally]:
    """The scope's points in order on ``target`` within ``budget`` seconds (a point under
    way finishes), to the first finding; the result's note is the coverage line."""
    result, stats = EngineResult("faults", skipped=_reason(target)), Stats()
    points = fault_points(scope)
    tally = FaultTally(len(points))
    if result.skipped:
        return result, tally
    result.checked = judged_by("wire", timed=False)
    meter, slowest = Meter(progress, "faults", target.name, budget), 0.0

    def fits(delayed: float) -> bool:  # the slowest point so far, and the late answers
        return time.perf_counter() + slowest + delayed <= meter.started + budget
    for point in points:
        if not fits(0.0) or result.failed:
            break
        began = time.perf_counter()
        events, outcome = _play(target, point, stats, fits)
        if outcome is None:
            continue
        slowest = max(slowest, time.perf_counter() - began - _delayed(events))
        if isinstance(outcome, str):
            tally.not_applicable[point.name] = outcome
            continue
        tally.played.append(point)
        result.runs += 1
        if outcome.violations:
            for finding in _found(target, events, outcome, point, failures):
                result.add(finding)
        meter.tick(result.runs, len(result.findings), point.name)
    result.judged.update(stats.judged)
    result.delivery += stats.delivery
    result.commit_styles.update(stats.commit_styles)
    result.seconds = time.perf_counter() - meter.started
    result.note = coverage(tally)
    return result, tally
