"""The battery's ``scale`` engine: times an assign function on growing groups, fits how its
cost grows, reports an assignor too slow for a group of Kafka's test sizes (I13, cost).

Why: the group waits for the leader's assignor at most the rebalance timeout
(``max.poll.interval.ms``, 300 s by default): an assignor right on every invariant but
quadratic in the group still stalls a large group; only its cost shows it.

What it runs, each ladder of shapes one call per step (a step under ``REPEAT_BELOW`` seconds
is timed up to three times, a step over ``CONFIRM`` times its prediction twice, the fastest
kept; a tick of progress after each call), growing while the budget holds:

* ``members`` — 10, 20, 50, …, 2,000 members, then 5,000 and 10,000, ten partitions per
  member over ten topics, every member on every topic: it ends at a shape of Kafka's JMH
  ``ClientSideAssignorBenchmark`` (up to 10,000 members, 5 to 50 partitions per member).
* ``partitions`` — 2,000 consumers, 2,000 partitions per topic, 10 topics to 500: the
  million-partition group of ``AbstractStickyAssignorTest``'s
  ``testLargeAssignmentAndGroupWithNonEqualSubscription`` (one consumer on the first topic
  only: the sticky assignors' general path; JUnit limit 60 or 90 s, by version).

Before each step the engine predicts its time from the steps so far (the fitted exponent,
the slope of the last two steps, at least linear, times `SAFETY`; a target with a time limit
answers or fails within it) and stops when the prediction exceeds what is left. A ``TIMEOUT``
is a data point (time > the limit) and ends the ladder.

`fit_power` fits time ≈ c·n^k by least squares on logarithms (steps under ``floor`` seconds,
where fixed overheads flatten the curve, left out while three others remain). The figures:
the exponent per ladder, the largest shape measured and its seconds, the size at which one
call would pass the bound, and the exponent of the same ``builtin:`` assignor beside it. I13
fails when a ladder's Kafka shape took, or is extrapolated to take, longer than the bound;
the largest request measured is saved (``groupcheck assign FILE``, ``groupcheck replay FILE``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...impl.assign_op import run_assign
from ...properties.harness import HarnessError
from ...properties.invariants import judged_by
from ...properties.jsonl_shapes import AssignAnswer, AssignFn, AssignRequest
from ...targets.target import BUILTIN_ASSIGNORS, Target
from ..progress import Meter, ProgressFn, silent
from .results import CostFigures, EngineResult, Finding, LadderFigures, save_json
from .scale_fit import FIT_FLOOR, CutCall, Fit, bounded_call, fit_power
from .scale_ladders import (
    DEFAULT_LADDERS,
    MEMBERS_LADDER,
    PARTITIONS_LADDER,
    Ladder,
    Point,
    Shape,
    scale_request,
)

__all__ = ["COST_BOUND", "DEFAULT_LADDERS", "FIT_FLOOR", "MEMBERS_LADDER", "PARTITIONS_LADDER",
           "SAFETY", "Fit", "Ladder", "Point", "Shape", "fit_power", "run_ladder", "run_scale",
           "scale_request"]

COST_BOUND = 300.0  # seconds: max.poll.interval.ms's default, the rebalance timeout
SAFETY = 1.5  # a step runs only when its predicted time, times this, fits what is left
REPEAT_BELOW = 0.05  # seconds: a step faster than this is timed up to three times
CONFIRM = 4.0  # a step over this many times its prediction is timed again
#: I13 is judged on an extrapolation only this many times past the largest size measured
MAX_REACH = 10.0
BUILTIN_SHARE = 1 / 3  # of the budget, for the builtin assignor beside the target
Clock = Callable[[], float]


@dataclass
class LadderRun:
    """What one ladder measured: its points, the fit, and how it ended."""

    ladder: Ladder
    points: list[Point] = field(default_factory=list)
    fit: Fit | None = None
    calls: int = 0
    error: str = ""
    stopped: str = ""  # why it did not reach the Kafka shape

    def predict(self, shape: Shape, limit: float | None, seed: float = 0.0) -> float:
        """A cautious guess of one call at ``shape`` from the points so far (``seed``
        before the first)."""
        if not self.points:
            return seed
        last = self.points[-1]
        slopes = [1.0] + ([self.fit.k] if self.fit else [])
        if len(self.points) >= 2:
            before = self.points[-2]
            slopes.append(math.log(max(last.seconds, 1e-9) / max(before.seconds, 1e-9))
                          / math.log(last.size / before.size))
        growth = float((self.ladder.size(shape) / last.size) ** max(slopes))
        guess = max(last.seconds, 1e-6) * growth
        return min(guess, limit) if limit is not None else guess


def _timed(assign: AssignFn, request: AssignRequest, clock: Clock, left: float,
           expected: float = math.inf) -> tuple[float, AssignAnswer, bool]:
    """The fastest of up to three calls: repeated while a call is under ``REPEAT_BELOW``,
    and a first call over `CONFIRM` times ``expected`` is timed once more (a call paused by
    a loaded machine would otherwise stop the ladder on its steep slope); repeats only
    while they fit in ``left``. Also whether the time stays doubtful: over `CONFIRM` times
    ``expected`` with no second call to confirm it."""
    best = math.inf
    response: AssignAnswer = {"assignment": {}}
    doubtful = False
    for calls in (1, 2, 3):
        began = clock()
        response = assign(request)
        best = min(best, clock() - began)
        doubtful = calls == 1 and best > CONFIRM * expected
        if not (best < REPEAT_BELOW or doubtful) or 3 * best > left:
            break
    return best, response, doubtful


def run_ladder(assign: AssignFn, assignor: str, ladder: Ladder, deadline: float, *,
               clock: Clock = time.perf_counter, limit: float | None = None,
               floor: float = FIT_FLOOR, seed: float = 0.0, bounded: bool = False
               ) -> tuple[LadderRun, AssignRequest | None]:
    """The ladder's steps while each predicted step fits before ``deadline`` (on ``clock``;
    ``seed`` guesses the first step); also the request of the largest shape measured. With
    ``bounded``, the first step (nothing predicts it) is first probed by a `bounded_call` cut
    at ``deadline``: a cut call's time is more than what was left."""
    run = LadderRun(ladder)
    largest: AssignRequest | None = None
    for shape in ladder.steps:
        left = deadline - clock()
        predicted = run.predict(shape, limit, seed)
        if predicted * SAFETY > left:
            run.stopped = f"the budget would not hold {shape.label}"
            break
        request, run.calls = scale_request(assignor, shape), run.calls + 1
        cut = bounded and not run.points
        try:
            if cut:  # a probe in a child: the timed calls below are known to end
                left -= bounded_call(assign, request, left)[0]
            seconds, response, doubtful = _timed(assign, request, clock, left,
                                                 predicted if run.points else math.inf)
        except TimeoutError as exc:
            used = exc.cpu if isinstance(exc, CutCall) else limit or 0.0
            run.points.append(Point(shape, ladder.size(shape), used, timeout=True, cut=cut))
            largest, run.stopped = request, (
                f"one call at {shape.label} outlasted the engine's share: cut after "
                f"{left:.3g} s, {used:.3g} s of CPU" if cut else f"TIMEOUT at {shape.label}")
            run.fit = fit_power([(p.size, p.seconds) for p in run.points], floor)
            break
        except HarnessError:  # groupcheck's own failure: never a finding
            raise
        except Exception as exc:  # noqa: BLE001 - a failing target is a finding
            run.error, largest = f"{type(exc).__name__}: {exc}", request
            break
        if error := dict(response).get("error"):  # a process may answer one, whatever its type
            run.error, largest = str(error), request
            break
        run.points.append(Point(shape, ladder.size(shape), seconds, doubtful=doubtful))
        largest = request
        run.fit = fit_power([(p.size, p.seconds) for p in run.points], floor)
    return run, largest


def _expected(run: LadderRun, bound: float) -> tuple[float, str] | None:
    """Seconds at the ladder's Kafka shape and how they are known: "measured" (at the shape,
    or a call past the bound), "at least" (a call cut or timed out short of the shape, grown
    no slower than linearly, past the bound), "extrapolated" (the fit); None when nothing
    fits."""
    kafka = run.ladder.steps[-1]
    hit = [p for p in run.points if p.shape == kafka and not p.timeout]
    if hit:
        return hit[0].seconds, "measured"
    for late in (p for p in run.points if p.timeout):
        if late.seconds >= bound:
            return late.seconds, "measured"
        least = late.seconds * run.ladder.size(kafka) / late.size
        if least > bound:
            return least, "at least"
    if run.fit is None:
        return None
    return run.fit.seconds(run.ladder.size(kafka)), "extrapolated"


def _out_of_reach(run: LadderRun, reach: float, floor: float = FIT_FLOOR,
                  bound: float = COST_BOUND) -> str:
    """Why I13 cannot be judged on this ladder ("" when it can): within ``reach`` times the
    Kafka shape's size the fit judges; further, a fit over three steps of at least ``floor``
    seconds judges when the whole range its exponent's spread gives is on one side of
    ``bound``."""
    kafka, axis = run.ladder.steps[-1], run.ladder.axis
    if not run.points:
        return f"{axis}: no step measured"
    if run.points[-1].size * reach >= run.ladder.size(kafka):
        return ""
    timed = [p for p in run.points if not p.timeout and p.seconds >= floor]
    if run.fit is not None and len(timed) >= 3:
        low, _, high = run.fit.extrapolate(run.ladder.size(kafka))
        if low > bound or high <= bound:
            return ""
        return (f"{axis}: the exponent's spread between steps ({run.fit.low:.2f}.."
                f"{run.fit.high:.2f}) gives {_seconds(low)}..{_seconds(high)} s at Kafka's "
                f"{kafka.label}, on both sides of the {bound:g} s bound (a larger --budget "
                "narrows it)")
    return (f"{axis}: {len(timed)} step(s) of at least {floor:g} s to fit (three needed), "
            f"and the largest shape measured, {run.points[-1].shape.label}, is more than "
            f"{reach:g}x short of Kafka's {kafka.label} (a larger --budget reaches further)")


def _unconfirmed(run: LadderRun, bound: float) -> str:
    """Why an extrapolation past ``bound`` does not judge ("" when it may): a step it rests
    on took over `CONFIRM` times its prediction and left no time to be timed again (a
    loaded machine's pause, as likely as a steeper cost)."""
    expected = _expected(run, bound)
    shaky = [p for p in run.points if p.doubtful]
    if expected is None or expected[1] != "extrapolated" or expected[0] <= bound or not shaky:
        return ""
    return (f"{run.ladder.axis}: one call at {shaky[-1].shape.label} took "
            f"{_seconds(shaky[-1].seconds)} s, over {CONFIRM:g} times its prediction, with no "
            "time left to time it again (a larger --budget confirms it)")


def ladder_figures(run: LadderRun, bound: float) -> LadderFigures:
    """One ladder's figures (``figure_lines`` prints them); the run measured a step."""
    last = run.points[-1]
    out: LadderFigures = {
        "axis": run.ladder.axis, "largest": last.shape.label,
        "seconds": round(last.seconds, 4), "timeout": last.timeout, "cut": last.cut,
        "steps": [[p.shape.members, p.shape.partitions, round(p.seconds, 5)]
                  for p in run.points],
        "kafka": f"{run.ladder.steps[-1].label} ({run.ladder.kafka})"}
    if run.fit is not None:
        out.update({"k": round(run.fit.k, 2), "passes": run.fit.size_at(bound), "bound": bound,
                    "k_range": [round(run.fit.low, 2), round(run.fit.high, 2)]})
    expected = _expected(run, bound)
    if expected is not None:
        out.update({"kafka_seconds": round(expected[0], 3),
                    "kafka_measured": expected[1] == "measured", "kafka_how": expected[1]})
        if expected[1] == "extrapolated" and run.fit is not None:
            low, _, high = run.fit.extrapolate(run.ladder.size(run.ladder.steps[-1]))
            out["kafka_range"] = [round(low, 3), round(high, 3)]
    return out


def _seconds(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _finding(target: Target, run: LadderRun, request: AssignRequest | None, bound: float,
             failures: str, reach: float, floor: float = FIT_FLOOR) -> Finding | None:
    """I13 when the ladder's Kafka shape passes ``bound`` (measured, at least, or
    extrapolated where `_out_of_reach` allows), the largest request saved."""
    expected = _expected(run, bound)
    if expected is None or expected[0] <= bound or request is None:
        return None
    if expected[1] == "extrapolated" and (_out_of_reach(run, reach, floor, bound)
                                          or _unconfirmed(run, bound)):
        return None
    kafka = run.ladder.steps[-1]
    when = expected[1]
    head = f"I13: one assign call at {kafka.label} (Kafka's {run.ladder.kafka})"
    violation = (f"{head} takes {_seconds(expected[0])} s ({_how(run, when)}), past the "
                 f"{bound:g} s rebalance timeout")
    largest = run.points[-1] if run.points else None
    path = save_json(failures, f"scale-{target.name}-I13", {  # the times are printed only
        **request, "groupcheck": {"format": "groupcheck-scale/1", "target": target.name,
                                  "invariant": "I13", "violations": [
                                      f"{head} passes the {bound:g} s rebalance timeout "
                                      f"({when})"],
                                  "axis": run.ladder.axis}},
        {"target": target.name, "invariant": "I13", "request": request})
    shown = largest.shape.label if largest else "the first shape"
    return Finding("I13", violation, path, len(request["members"]),
                   f"largest shape measured: {shown}; steps (members, partitions, s): "
                   f"{ladder_figures(run, bound)['steps'] if run.points else None}")


def _how(run: LadderRun, how: str) -> str:
    """How the Kafka shape's seconds are known, with the fit's error where extrapolated."""
    fit, kafka = run.fit, run.ladder.steps[-1]
    if how == "at least":
        late = next(p for p in run.points if p.timeout)
        spent = "of CPU before it was cut" if late.cut else "(TIMEOUT)"
        return (f"at least: one call at {late.shape.label} took more than {late.seconds:.3g} s "
                f"{spent}, grown no slower than linearly")
    if how == "measured" or fit is None:
        return how
    low, _, high = fit.extrapolate(run.ladder.size(kafka))
    return (f"extrapolated from time ~ {run.ladder.axis}^{fit.k:.2f}, exponents "
            f"{fit.low:.2f}..{fit.high:.2f} between steps: {_seconds(low)}..{_seconds(high)} s")


def _ladders(assign: AssignFn, assignor: str, ladders: Sequence[Ladder], deadline: float,
             clock: Clock, limit: float | None, floor: float, bounded: bool = False
             ) -> list[tuple[LadderRun, AssignRequest | None]]:
    """Every ladder in turn after one untimed call on the smallest shape (a process or a
    JVM starts, caches fill; not when ``bounded``: each ladder's first call is then cut at
    the deadline), each ladder's first step guessed from the ladder before; the ladders
    after one that failed are not run."""
    out: list[tuple[LadderRun, AssignRequest | None]] = []
    if ladders and ladders[0].steps and not bounded:
        try:
            assign(scale_request(assignor, ladders[0].steps[0]))
        except Exception:  # noqa: BLE001 - the timed call that follows reports it
            pass
    for ladder in ladders:
        seed = 0.0
        if out:
            before = out[-1][0]
            seed = before.predict(ladder.steps[0], limit) if before.points else math.inf
        run, request = run_ladder(assign, assignor, ladder, deadline, clock=clock,
                                  limit=limit, floor=floor, seed=seed, bounded=bounded)
        out.append((run, request))
        if run.error:
            break
    return out


def run_scale(target: Target, budget: float, failures: str, *,
              ladders: Sequence[Ladder] = DEFAULT_LADDERS, bound: float = COST_BOUND,
              clock: Clock = time.perf_counter, compare: bool = True,
              floor: float = FIT_FLOOR, reach: float = MAX_REACH,
              bounded: bool | None = None, progress: ProgressFn = silent) -> EngineResult:
    """Every ladder on the target within ``budget`` seconds (on ``clock``), then, with
    ``compare`` and time left, the builtin assignor of the same name (at most
    ``BUILTIN_SHARE`` of the budget); I13 against ``bound`` (`_out_of_reach` says where an
    extrapolation judges). ``bounded``: each ladder's first call is cut at the budget
    (default: on the real clock, for a target that may fork). ``progress`` hears of every
    call."""
    result = EngineResult("scale", judged_by("scale"))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    started = clock()
    meter = Meter(progress, "scale", target.name, budget, clock)
    beside = (compare and target.assignor in BUILTIN_ASSIGNORS
              and not target.name.startswith("builtin:"))
    mine = started + budget * ((1 - BUILTIN_SHARE) if beside else 1.0)
    if bounded is None:
        bounded = clock is time.perf_counter and target.fork_safe and target.timeout is None
    runs = _ladders(meter.counting(target.assign), target.assignor, ladders, mine, clock,
                    target.timeout, floor, bounded)
    unjudged: list[str] = []
    for run, request in runs:
        result.runs += run.calls
        result.judged["ERROR"] += len(run.points)
        if run.error:
            result.add(Finding("ERROR", f"ERROR: the target raised at {run.ladder.axis} scale:"
                               f" {run.error}", _save_error(target, request, run, failures),
                               len(request["members"]) if request else None))
            break
        found = _finding(target, run, request, bound, failures, reach, floor)
        far = _out_of_reach(run, reach, floor, bound) or _unconfirmed(run, bound)
        if found is not None:
            result.add(found)
        elif far:
            unjudged.append(far)
        else:
            result.judged["I13"] += 1
    cost = CostFigures()
    for r, _ in runs:
        if r.points:
            cost[r.ladder.axis] = ladder_figures(r, bound)
    if beside and not result.failed:
        builtin = _ladders(run_assign, target.assignor, ladders, started + budget, clock,
                           None, floor)
        cost["builtin"] = {r.ladder.axis: round(r.fit.k, 2) for r, _ in builtin
                           if r.fit is not None}
    result.figures["cost"] = cost
    if unjudged:
        result.reasons["I13"] = "; ".join(unjudged)
    if not result.judged["I13"] and not result.failed:
        result.shallow = ("I13",)
        result.needs = sum(_needs(r, target.timeout, floor) for r, _ in runs)
    result.depth = ", ".join(f"{r.ladder.axis} to {r.points[-1].shape.label}"
                             for r, _ in runs if r.points) or "no step"
    result.seconds = clock() - started
    result.note = "; ".join(f"{r.ladder.axis}: {r.stopped}" for r, _ in runs if r.stopped)
    return result


def _needs(run: LadderRun, limit: float | None, floor: float) -> float:
    """Seconds more the ladder would take, predicted from its steps, to fit three steps of
    at least ``floor`` seconds, or two steps more where it has them (they narrow the fit's
    error)."""
    timed = sum(1 for p in run.points if not p.timeout and p.seconds >= floor)
    ahead = [s for s in run.ladder.steps if not run.points or run.ladder.size(s)
             > run.points[-1].size][:max(3 - timed, 2)]
    return sum(run.predict(shape, limit, floor) * SAFETY for shape in ahead)


def _save_error(target: Target, request: AssignRequest | None, run: LadderRun,
                failures: str) -> str | None:
    if request is None:
        return None
    return save_json(failures, f"scale-{target.name}-ERROR", {
        **request, "groupcheck": {"format": "groupcheck-scale/1", "target": target.name,
                                  "invariant": "ERROR", "violations": [run.error],
                                  "axis": run.ladder.axis}},
        {"target": target.name, "invariant": "ERROR", "request": request})
