"""The whole battery against one target or several (one per assignor a target answers),
for ``check``, ``zoo`` and the pytest plugin. Engines, each run only where the target has
what it needs, in this order (cheap and high-yield first):

* ``codec`` — I10 over every writer/reader version pair for a fixed set of subscriptions,
  and I12 over the user data written after ``on_assignment`` (golden);
* ``prove`` — the exhaustive scope prover over the target's assign function, on a
  portfolio of small scopes along different axes: first its depth scope (three members
  claiming one partition at three generations) on every assignor, then the rest of the
  portfolio in slices (prove, breadth, slices);
* ``vectors`` — the golden vectors' ``assign`` lines for the target's assignor (with
  ``parity``): I1 and I2 on every answer, and on lines not marked ``kafka_bug`` the same
  partitions per member as Kafka's answer (``PARITY``);
* ``scenarios`` — the audit's seeded random group stories (1–200 members, racks, static
  members, stale claims, chains of rebalances) on the target's assign function
  (scenarios);
* ``fuzz`` — the Hypothesis state machine over the target's group, groups of up to six
  members (fuzz);
* ``scale`` — the target's assign timed on growing groups up to the shapes of Kafka's own
  scale tests, within ``SCALE_SHARE`` of the budget: how its cost grows, and I13 when one
  call at such a shape passes the 300 s rebalance timeout (scale). It runs with the
  fixed engines, before the searching ones;
* ``faults`` — on a wire target alone, every fault point of its scope in order (faults)
  within ``FAULTS_SHARE`` of the budget, with its coverage line.

Depth before breadth (depth, breadth): every engine first reaches its minimum depth on
every assignor — the prover's depth scope within an equal part of the fixed engines' time,
the scale engine's judgement of I13, then the state machine's minimum of examples (each
assignor an equal part of what is left, played until the minimum) — and an engine that
falls short says which invariants it left unjudged, which ``check`` names in its verdict
line. Breadth next (slices): what is left goes in slices to (engine, assignor) pairs — the
prover's widening, the scenarios engine, the state machine — each slice to the pair whose
last slices turned up the most new shapes per second, a pair that never had one first; a
pair that found a violation takes no more.

`ENGINE_LIST` holds them: a ``searching`` engine searches for as long as it is given (its
slices), one without runs to completion or to its own share. The budget is a ceiling: the
run ends by ``started + budget``; the fixed engines stop where they would eat into the
quarter of it kept for the minimums and the slices (`search_reserve`: more when the
state machine's floor on every target needs it), and every engine
watches the clock between its units of work (a unit under way finishes, an assign call
within its timeout). An engine that needs an assign function the target lacks says so first.
An engine whose turn comes with too little time left to do anything useful says so in its
line. With several targets each engine runs on all of them before the next engine starts,
so a defect in one assignor is found as early as in another. Every engine stops at its own
first finding, and the run goes on to the next engine unless ``first``; each finding
records when it was made. The zoo's ``scenario`` engine (fixed inputs) is not in the run.

Every violation comes with a counterexample file: a replay file for ``fuzz`` and ``faults``
(``groupcheck replay``), a request file for ``prove``, ``vectors`` and ``scenario``
(``groupcheck assign``), a JSON record for ``codec``. Each engine reports its progress to the
run's `ProgressFn` after each unit of work; the state machine (Hypothesis) loads as it runs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...properties.invariants import judged_by
from ...targets.target import Target
from ..progress import ProgressFn, silent
from .breadth import FUZZ_FLOOR, breadth_order, deepen, depth_budget, search_reserve
from .contract import watched
from .faults import FAULTS_SHARE, run_faults
from .golden import (
    answer,
    load_assign_vectors,
    partition_sets,
    run_codec,
    run_vectors,
    vectors_dir,
)
from .profile_gaps import absent_invariants, mark_absent
from .prove import (
    PORTFOLIO,
    prover_reasons,
    run_prove,
    run_prove_within,
    run_scenarios,
    scope_size,
    scopes_run,
)
from .results import (
    DEFAULT_SCOPE,
    ENGINES,
    INVARIANT_ROWS,
    SMALL_SCOPE,
    BatteryResult,
    EngineResult,
    Finding,
    figure_lines,
    file_safe,
    invariant_id,
    record_profile,
    save_json,
)
from .scale import run_scale
from .scenarios import run_scenarios_engine
from .slices import EnginePair, spend, start

if TYPE_CHECKING:
    from .fuzz import machine_config, run_fuzz

__all__ = ["DEFAULT_SCOPE", "ENGINES", "ENGINE_LIST", "INVARIANT_ROWS", "SMALL_SCOPE",
           "BatteryResult", "Context", "Engine", "EngineResult", "Finding", "answer",
           "figure_lines", "file_safe", "invariant_id", "load_assign_vectors", "machine_config",
           "partition_sets", "run_batteries", "run_battery", "run_codec", "run_fuzz", "run_prove",
           "run_scale", "run_scenarios", "run_stories", "run_vectors", "save_json", "vectors_dir"]

#: the pytest plugin's split of an item's searching time (``check`` spends it in slices)
SCENARIOS_SHARE = 0.3
SCALE_SHARE = 0.1  # of the budget, for the scale engine's ladders
#: a prover's next scope starts when this many times its time at the rate measured fits
SCOPE_MARGIN = 1.25


def __getattr__(name: str) -> Any:
    """The state machine's names, loaded (with Hypothesis) on first use (PEP 562)."""
    if name in ("machine_config", "run_fuzz"):
        from . import fuzz as state_machine
        return getattr(state_machine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Context:
    """What an engine is given: ``budget`` its seconds on this target (searching engines),
    ``total`` the whole run's budget (it sizes the prover's and the scale engine's shares),
    ``deadline`` the moment (``time.perf_counter``) no engine may pass: the run's end for a
    searching engine, the searching engines' reserve for a fixed one."""

    budget: float
    total: float
    failures: str
    seed: int = 0
    scope: str | None = None
    workers: int | None = None
    strict: bool = False
    parity: bool = False
    targets: int = 1  # how many assignors share the budget
    #: asked the requests of the prover's and the scenarios engine's violations (labels
    #: from evidence); the state machine's and the codec's keep the rules
    reference: Target | None = None
    #: the golden vectors' folder (``parity``)
    vectors: Path | None = None
    deadline: float = float("inf")
    progress: ProgressFn = silent
    after: int = 0  # how many targets this engine runs on after this one
    minimum: bool = False  # the state machine stops at its minimum of examples

    def left(self) -> float:
        """Seconds to ``deadline``."""
        return max(self.deadline - time.perf_counter(), 0.0)


@dataclass(frozen=True)
class Engine:
    name: str
    run: Callable[[Target, Context], EngineResult]
    searching: bool = False  # searches for as long as it is given (in slices)
    assigns: bool = True  # asks the target's assign function (else: "no assign function")


def _prove(target: Target, ctx: Context) -> EngineResult:
    """``--scope`` (until the run's end), else the portfolio's depth scope within an equal
    part of the fixed engines' time (`breadth.depth_budget`); `_widen` runs the rest."""
    if ctx.scope:
        return run_prove(target, ctx.scope, ctx.failures, workers=ctx.workers,
                         strict=ctx.strict, reference=ctx.reference,
                         deadline=ctx.deadline, progress=ctx.progress)
    seconds = depth_budget(ctx.left(), ctx.total * SCALE_SHARE, ctx.after + 1)
    return run_prove_within(target, seconds, ctx.failures, scopes=PORTFOLIO[:1],
                            of=len(PORTFOLIO), workers=ctx.workers, strict=ctx.strict,
                            reference=ctx.reference, progress=ctx.progress)


def _more_scopes(target: Target, done: EngineResult, seconds: float, ctx: Context
                 ) -> EngineResult:
    """A slice of the prover's widening: the next scope of its portfolio after those
    ``done`` ran, to its end (or the run's), started only when its time estimated from the
    rate measured (with `SCOPE_MARGIN`) fits what is left; with no rate yet, the scopes
    after ``done`` within ``seconds``."""
    rest = PORTFOLIO[scopes_run(done):]
    rate = done.runs / done.seconds if done.seconds else 0.0
    if rate and rest:
        needs = SCOPE_MARGIN * scope_size(rest[0]) / rate
        if needs > ctx.left():
            return EngineResult("prove", skipped=(
                f"its next scope needs about {needs:.1f} s, more than the {ctx.left():.1f} s "
                "left"))
        rest, seconds = rest[:1], ctx.left()
    part = run_prove_within(target, min(seconds, ctx.left()), ctx.failures, scopes=rest,
                            workers=ctx.workers, strict=ctx.strict, reference=ctx.reference,
                            progress=ctx.progress)
    if target.profile is not None:
        record_profile(part, target.profile.to_json())
    return mark_absent(part, absent_invariants(target))


def _pairs(chosen: Sequence[Engine], results: Sequence[BatteryResult], scope: str | None
           ) -> list[EnginePair]:
    """The (engine, assignor) pairs the slices go to (`slices`): the provers worth widening
    (`breadth.breadth_order`), the scenarios engine and the state machine on every
    assignor, each started from what its minimum found."""
    names = {e.name for e in chosen}

    def found(name: str, i: int) -> EngineResult | None:
        return next((e for e in results[i].engines if e.engine == name), None)
    pairs: list[EnginePair] = []
    if "prove" in names and not scope:
        provers = [found("prove", i) for i in range(len(results))]
        pairs += [EnginePair("prove", i) for i in breadth_order(provers)]
    pairs += [EnginePair("scenarios", i) for i in range(len(results)) if "scenarios" in names]
    pairs += [EnginePair("fuzz", i) for i in range(len(results)) if found("fuzz", i) is not None]
    for pair in pairs:
        first = found(pair.engine, pair.target)
        if first is not None:
            start(pair, first)
    return pairs


def _deepen_scale(targets: Sequence[Target], results: Sequence[BatteryResult],
                  ctx: Context) -> None:
    """The scale engine again where it left I13 unjudged, within what it needs
    (`breadth.deepen`)."""
    found = [next((e for e in r.engines if e.engine == "scale"), None) for r in results]

    def again(i: int, seconds: float) -> EngineResult:
        target = targets[i]
        out = run_scale(target, seconds, ctx.failures, progress=ctx.progress)
        if target.profile is not None:
            record_profile(out, target.profile.to_json())
        mark_absent(out, absent_invariants(target))
        return out
    for result, old, new in zip(results, found, deepen(found, ctx.deadline, again),
                                strict=True):
        if old is not None and new is not None and new is not old:
            result.engines[result.engines.index(old)] = new


def _vectors(target: Target, ctx: Context) -> EngineResult:
    if not ctx.parity:
        return EngineResult("vectors", skipped="not asked (--parity)")
    return run_vectors(target, ctx.failures, vectors=ctx.vectors, deadline=ctx.deadline,
                       progress=ctx.progress)


def _scale(target: Target, ctx: Context) -> EngineResult:
    return run_scale(target, min(ctx.total * SCALE_SHARE / ctx.targets, ctx.left()),
                     ctx.failures, progress=ctx.progress)


def _fuzz(target: Target, ctx: Context) -> EngineResult:
    """The state machine within its slice (to its minimum, ``ctx.minimum``), loading it (and
    Hypothesis) within the slice; too small a part for its minimum leaves it shallow."""
    if ctx.budget < FUZZ_FLOOR:
        out = EngineResult("fuzz", skipped=(
            f"{ctx.budget:.1f} s of the budget was left for it, less than the "
            f"{FUZZ_FLOOR:g} s the state machine needs to start and play an example"))
        if ctx.minimum and target.group is not None:
            out.shallow, out.needs = judged_by("fuzz", timed=False), math.inf
        return out
    end = time.perf_counter() + ctx.budget
    from .fuzz import run_fuzz  # Hypothesis loads only when the state machine runs
    return run_fuzz(target, end - time.perf_counter(), ctx.failures, seed=ctx.seed,
                    strict=ctx.strict, progress=ctx.progress, to_minimum=ctx.minimum)


def run_stories(target: Target, budget: float, failures: str, seed: int = 0, *,
                strict: bool = False, reference: Target | None = None,
                progress: ProgressFn = silent) -> EngineResult:
    """The scenarios engine, its repertoire stated so that what it never judged shows, and
    a range or roundrobin contract judged on every answer as it passes."""
    watch = None
    if target.assign is not None and target.balance in ("range", "roundrobin"):
        watch = watched(target.assign, target.balance, failures)
        target = replace(target, assign=watch)
    out = run_scenarios_engine(target, budget, failures, seed, strict=strict,
                               reference=reference, progress=progress)
    repertoire = {"I1", "I2", "I5", "I6", "I11", "ERROR"}
    if target.balanced and target.sticky:
        repertoire |= {"I3", "I4a"}
    if watch is not None:
        repertoire.add("I3")
        out.judged["I3"] += out.runs  # every answer of every story passed the watch
        found = watch.first(failures, file_safe(target.name))
        if found is not None:
            out.add(found)
    out.checked = tuple(sorted(set(out.checked) | repertoire))
    out.reasons = {**prover_reasons(target), **out.reasons}
    out.reasons.pop("I3", None)
    return out


ENGINE_LIST: tuple[Engine, ...] = (
    Engine("codec", lambda t, c: run_codec(t, c.failures, deadline=c.deadline), assigns=False),
    Engine("prove", _prove),
    Engine("vectors", _vectors, assigns=False),  # says itself why it was not asked
    Engine("scenarios", lambda t, c: run_stories(t, c.budget, c.failures, c.seed,
                                                 strict=c.strict, reference=c.reference,
                                                 progress=c.progress),
           searching=True),
    Engine("fuzz", _fuzz, searching=True, assigns=False),
    Engine("scale", _scale),
    Engine("faults", lambda t, c: run_faults(t, min(c.total * FAULTS_SHARE / c.targets, c.left()),
                                             c.failures, progress=c.progress), assigns=False),
)


def run_batteries(targets: Sequence[Target], *, budget: float = 120.0, parity: bool = False,
                  scope: str | None = None, failures: str = "groupcheck-failures",
                  seed: int = 0, engines: Iterable[str] | None = None,
                  workers: int | None = None, strict: bool = False,
                  first: bool = False,
                  reference: Callable[[Target], Target | None] | None = None,
                  vectors: Path | None = None,
                  progress: ProgressFn = silent) -> list[BatteryResult]:
    """Every engine on every target within ``budget`` seconds in all (see the module doc);
    ``first`` stops the run at the first finding; ``reference`` gives the reference target
    running a target's assignor (labels from evidence), or None; ``progress`` hears every
    engine's ticks."""
    started = time.perf_counter()
    end = started + budget
    wanted = set(engines) if engines is not None else {e.name for e in ENGINE_LIST}
    chosen = [e for e in ENGINE_LIST if e.name in wanted]
    results = [BatteryResult(t.name, [], assignor=t.assignor, started=started, budget=budget,
                             balance=f"{t.balance} ({t.balance_why})" if t.balance_why else "",
                             profile=t.profile.summary() if t.profile else "")
               for t in targets]
    searching = any(e.searching for e in chosen)
    reserve = (search_reserve(budget, len(targets), fuzz=any(e.name == "fuzz" for e in chosen))
               if searching else 0.0)
    base = Context(budget, budget, failures, seed, scope, workers, strict, parity, len(targets),
                   vectors=vectors, deadline=end - reserve, progress=progress)
    stopped = False

    def play(engine: Engine, i: int, ctx: Context) -> EngineResult:
        nonlocal stopped
        if stopped:
            return EngineResult(engine.name,
                                skipped="the run stopped at its first finding (--first)")
        if engine.assigns and targets[i].assign is None:  # said first, whatever the budget
            return EngineResult(engine.name, skipped="no assign function")
        if ctx.left() <= 0 and (engine.name != "vectors" or ctx.parity):  # else: not asked
            return EngineResult(engine.name,
                                skipped="the budget was spent before its turn came")
        ref = reference(targets[i]) if reference is not None else None
        out = engine.run(targets[i], replace(ctx, reference=ref))
        profile = targets[i].profile
        if profile is not None:  # every file, those of absent invariants too
            record_profile(out, profile.to_json())
        mark_absent(out, absent_invariants(targets[i]))
        stopped = first and out.failed
        return out

    for engine in (e for e in chosen if not e.searching):
        for i in range(len(targets)):
            results[i].engines.append(play(engine, i, replace(base, after=len(targets) - 1 - i)))
    if not stopped and any(e.name == "scale" for e in chosen):
        _deepen_scale(targets, results, base)
        stopped = first and any(r.failed for r in results)
    searching_ctx = replace(base, deadline=end)
    for engine in (e for e in chosen if e.name == "fuzz"):  # its minimum, depth first
        for i in range(len(targets)):
            left = max(end - time.perf_counter(), 0.0)
            results[i].engines.append(play(engine, i, replace(
                searching_ctx, budget=left / (len(targets) - i), minimum=True)))
    by_name = {e.name: e for e in chosen}

    def one_slice(pair: EnginePair, seconds: float, seed: int) -> EngineResult:
        nonlocal stopped
        i = pair.target
        if pair.engine == "prove" and pair.result is not None:
            ref = reference(targets[i]) if reference is not None else None
            out = _more_scopes(targets[i], pair.result, seconds,
                               replace(searching_ctx, reference=ref))
            stopped = first and out.failed
            return out
        return play(by_name[pair.engine], i, replace(searching_ctx, budget=seconds, seed=seed))
    pairs = _pairs(chosen, results, scope)
    spend(pairs, end, seed, one_slice, stop=lambda: stopped)
    for pair in (p for p in pairs if p.engine == "scenarios"):
        results[pair.target].engines.append(pair.result or play(
            by_name["scenarios"], pair.target, replace(searching_ctx, deadline=0.0)))
    order = {e: i for i, e in enumerate(ENGINES)}
    for result in results:
        result.engines.sort(key=lambda e: order.get(e.engine, 99))
        result.seconds = time.perf_counter() - started
    return results


def run_battery(target: Target, **options: Any) -> BatteryResult:
    """`run_batteries` on one target."""
    return run_batteries([target], **options)[0]
