"""The exhaustive-scope prover: every configuration in a small scope, run through an assignor.

``prove(assign, assignor, scope)`` enumerates every group configuration within ``scope`` up
to symmetry, turns each into an ``assign`` request (the JSON-lines contract), runs the given
``assign(request) -> response`` callable, judges the answer with the Python predicates of
I1–I6, and asks Z3 (``optimal``) for the fewest moves of any balanced complete assignment,
so that stickiness is reported as a gap histogram (moves − optimum; I4b is reported, never
failed). It works on plain data only; the caller hands it the function to check.

The search space (scope bounds) is in ``space``, its classes under symmetry and their
weights in ``orbits``, the enumeration's units of work (a metadata, a member count and
the first member's skeleton, biggest first) in ``enumeration``; how one configuration
becomes requests and is judged (I1-I6, I11, the I4b gap) is in ``judgement``; this module
runs them over the whole scope on worker processes and collects the report. A target may
hand over a ``session`` factory — an assign function per worker that keeps what repeats
across requests (``impl.assign_session.AssignSession``, for the deterministic in-tree
assignors). Without the gap (``gaps=False``), claims such a session's leader never sees are
aggregated: one judgement per projection (``blind``, still a proof). A target without a
session may hand over a batch assign function (``assign_many``: a process's window of
requests in flight), judged in batches (``batch``); the report: ``report``.

Counterexamples: per invariant, the smallest violating configuration (fewest members, then
partitions, claims, generations, subscriptions); with ``failures=DIR`` saved as the failing
round's request (``groupcheck assign FILE`` replays it) plus a ``groupcheck`` object.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import re
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import takewhile
from pathlib import Path
from typing import Any

from ..deviations import EVIDENCE, agreement, evidence_labels
from ..optimal import Optimiser
from ..rebalance import assignment_of
from ..saved_json import file_stem, save_as
from .batch import AssignManyFn, judged
from .blind import check_eager, claim_mode, projections
from .enumeration import tasks_of
from .judgement import (
    STICKY_FAMILY,
    Judgement,
    judge,
)
from .orbits import MetadataShape, Skeleton, Task, configs_of_task, skeletons
from .report import Counterexample, GapExample, ProofReport
from .space import (
    AssignFn,
    Config,
    Metadata,
    Scope,
)

__all__ = ["claim_mode", "prove", "save_counterexample", "violation_shape"]


@dataclass
class _Partial:
    configs: int = 0
    weight: int = 0
    assign_calls: int = 0
    assign_seconds: float = 0.0
    cpu_seconds: float = 0.0
    cut: bool = False  # the deadline came before the unit of work was done
    gaps: Counter[int] = field(default_factory=Counter)
    unjudged: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    weighted: Counter[str] = field(default_factory=Counter)  # labelled configurations
    inherited: Counter[str] = field(default_factory=Counter)
    evidence: Counter[str] = field(default_factory=Counter)  # of inherited: reproduced
    rules: dict[str, set[str]] = field(default_factory=dict)
    # the key starts with "inherited?", so a violation no Kafka rule explains is kept first
    smallest: dict[str, tuple[tuple[Any, ...], Counterexample]] = field(default_factory=dict)
    optimum_by: Counter[str] = field(default_factory=Counter)
    gap_examples: dict[int, tuple[tuple[Any, ...], GapExample]] = field(
        default_factory=dict)
    #: the smallest counterexample of each shape of violation (`violation_shape`), at most
    #: `MAX_SHAPES` shapes per invariant: the distinct ways the target breaks it
    shapes: dict[tuple[str, str], tuple[tuple[Any, ...], Counterexample]] = field(
        default_factory=dict)

    def add(self, config: Config, j: Judgement, fresh: bool = True) -> None:
        """``fresh=False``: more configurations of a class already counted."""
        self.configs += fresh
        self.weight += config.weight
        self.assign_calls += len(j.calls) if fresh else 0
        self.assign_seconds += j.assign_seconds if fresh else 0.0
        if j.optimum is not None and j.moves is not None:
            gap = j.moves - j.optimum
            self.gaps[gap] += 1
            self.optimum_by[j.optimum_by] += 1
            if gap:
                key = config.size_key()
                best_gap = self.gap_examples.get(gap)
                if best_gap is None or key < best_gap[0]:
                    rounds = j.rounds
                    self.gap_examples[gap] = (key, {
                        "request": rounds[0][0], "moves": j.moves, "optimum": j.optimum,
                        "assignment": assignment_of(rounds[-1][1])})
        else:
            self.unjudged += 1
        for inv, round_no in j.first_round_of.items():
            self.counts[inv] += 1
            self.weighted[inv] += config.weight
            rule = j.inherited.get(inv)
            if rule is not None:
                self.inherited[inv] += 1
                if rule == EVIDENCE:
                    self.evidence[inv] += 1
                self.rules.setdefault(inv, set()).add(rule)
            key = (rule is not None, *config.size_key())
            best = self.smallest.get(inv)
            if best is None or key < best[0]:
                mine = [v for v in j.violations if v.split(":")[0] == inv]
                self.smallest[inv] = (key, Counterexample(inv, mine, config, j.rounds,
                                                          round_no, rule=rule))

    def merge(self, other: _Partial) -> None:
        self.configs += other.configs
        self.weight += other.weight
        self.assign_calls += other.assign_calls
        self.assign_seconds += other.assign_seconds
        self.cpu_seconds += other.cpu_seconds
        self.gaps.update(other.gaps)
        self.unjudged += other.unjudged
        self.counts.update(other.counts)
        self.weighted.update(other.weighted)
        self.inherited.update(other.inherited)
        self.evidence.update(other.evidence)
        for inv, rules in other.rules.items():
            self.rules.setdefault(inv, set()).update(rules)
        self.optimum_by.update(other.optimum_by)
        for gap, (key, example) in other.gap_examples.items():
            if gap not in self.gap_examples or key < self.gap_examples[gap][0]:
                self.gap_examples[gap] = (key, example)
        for inv, (key, cex) in other.smallest.items():
            best = self.smallest.get(inv)
            if best is None or key < best[0]:
                self.smallest[inv] = (key, cex)
        for shape, (key, cex) in other.shapes.items():
            best = self.shapes.get(shape)
            known = sum(1 for i, _ in self.shapes if i == shape[0])
            if (best is None and known < MAX_SHAPES) or (best is not None and key < best[0]):
                self.shapes[shape] = (key, cex)


MAX_SHAPES = 6  # distinct counterexamples kept per invariant
_NAMES = re.compile(r"\b(?:[A-Za-z_][A-Za-z_.]*\d*-\d+|m\d+|c\d+|[A-Za-z]*\d+)\b")


def violation_shape(violation: str, words: int = 6) -> str:
    """The first ``words`` words of a violation with member, topic and partition names and
    numbers normalised: two violations of one shape are one defect met twice."""
    return " ".join(_NAMES.sub("#", violation).split()[:words])


@dataclass
class _Worker:
    """What a worker process judges with (the caller's process, without workers): the
    assign function (a session's, where the target has one; ``plain``: the target's own),
    the scope and its member skeletons, the optimiser, the claim-blind mode, the reference,
    and the shapes of the metadata met so far."""

    assign: AssignFn
    plain: AssignFn
    assignor: str
    scope: Scope
    sticky: bool
    optimiser: Optimiser | None
    claim_mode: str | None
    skeletons: list[Skeleton]
    reference: AssignFn | None
    assign_many: AssignManyFn | None = None  # a process target's batch form of ``assign``
    shapes: dict[Metadata, MetadataShape] = field(default_factory=dict)
    deadline: float = float("inf")  # on ``time.perf_counter``: the work stops there


_WORKER: list[_Worker] = []  # this process's worker, once `_init_worker` has run


def _init_forked_worker(*args: Any) -> None:
    """`_init_worker` in a pool's worker: a terminal's Ctrl-C is the parent's to answer."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init_worker(*args)


def _init_worker(assign: AssignFn, session: Callable[[], AssignFn] | None, assignor: str,
                 scope: Scope, sticky: bool, exact: bool,
                 reference: AssignFn | None = None, gaps: bool = True,
                 claim_mode: str | None = None, deadline: float | None = None,
                 assign_many: AssignManyFn | None = None) -> None:
    _WORKER[:] = [_Worker(session() if session is not None else assign, assign, assignor,
                          scope, sticky, Optimiser(exact) if gaps else None, claim_mode,
                          skeletons(scope), reference,
                          assign_many if session is None else None,
                          deadline=float("inf") if deadline is None else deadline)]


def _late(part: _Partial) -> bool:
    """The deadline has come (``time.perf_counter`` is one clock across the workers): the
    unit of work is cut short there."""
    part.cut = time.perf_counter() >= _WORKER[0].deadline
    return part.cut


def _relabel(j: Judgement, assign: AssignFn, reference: AssignFn) -> None:
    """Labels from evidence (`deviations.agreement`): each violation whose round the
    reference answers identically, every earlier round too, is the reference's own."""
    requests = [request for request, _ in j.rounds[:max(j.first_round_of.values()) + 1]]
    evidence_labels(j.first_round_of, j.inherited, *agreement(requests, assign, reference))


def _run_task(item: tuple[Task, int]) -> _Partial:
    task, orbit = item
    worker = _WORKER[0]
    scope, shapes = worker.scope, worker.shapes
    shape = shapes.get(task[0])
    if shape is None:
        shape = shapes[task[0]] = MetadataShape.of(scope, task[0], orbit)
    part = _Partial()
    optimiser, mode = worker.optimiser, worker.claim_mode
    assign, assignor, sticky = worker.assign, worker.assignor, worker.sticky
    started = time.process_time()
    reference = worker.reference
    # the cyclic collector is off for a task: the judgements make no cycles worth finding,
    # and its passes over the worker's caches cost a sixth of the time (bench/prove.py)
    collecting = gc.isenabled()
    gc.disable()
    try:
        if mode is not None:
            _judge_projections(part, task, shape, mode)
        else:
            configs = takewhile(lambda _: not _late(part),
                                configs_of_task(scope, task, shape, worker.skeletons))
            for config, j in judged(assign, worker.assign_many, assignor, configs, optimiser,
                                    sticky):
                if reference is not None and j.first_round_of:
                    _relabel(j, worker.plain, reference)
                part.add(config, j)
    finally:
        if collecting:
            gc.enable()
    part.cpu_seconds = time.process_time() - started
    return part


def _judge_projections(part: _Partial, task: Task, shape: MetadataShape, mode: str) -> None:
    """A task in claim-blind mode (``blind``): each projection judged for itself and,
    without I4a when its premise held, for the configurations that add hidden claims."""
    worker = _WORKER[0]
    assign, assignor, sticky = worker.assign, worker.assignor, worker.sticky
    reference = worker.reference

    def run(config: Config, i4a: bool) -> Judgement:
        j = judge(assign, assignor, config, None, sticky, i4a)
        if mode == "all":
            check_eager(config, j)
        if reference is not None and j.first_round_of:
            _relabel(j, worker.plain, reference)
        return j

    for config, more in projections(worker.scope, task, shape, worker.skeletons, mode):
        if _late(part):
            break
        j = run(config, True)
        part.add(config, j)
        if more:
            again = j.i4a_judged
            part.add(replace(config, weight=more), run(config, False) if again else j,
                     fresh=False)


def save_counterexample(directory: str | os.PathLike[str], target: str, scope: Scope,
                        cex: Counterexample) -> Path:
    """Write one counterexample; its name says what broke, its digest is of the target,
    the invariant and the requests of the rounds (`saved_json`)."""
    meaning = {"target": target, "invariant": cex.invariant,
               "requests": [request for request, _ in cex.rounds]}
    return save_as(directory, f"prove-{file_stem(target)}-{cex.invariant}",
                   cex.record(target, scope), meaning)


def prove(assign: AssignFn, assignor: str, scope: Scope | None = None, *,
          target: str | None = None, workers: int | None = None,
          failures: str | os.PathLike[str] | None = None, sticky: bool | None = None,
          exact: bool = False, session: Callable[[], AssignFn] | None = None,
          progress: Callable[[int, float, int], None] | None = None,
          reference: AssignFn | None = None, reference_name: str | None = None,
          gaps: bool = True, aggregate: bool = True, deadline: float | None = None,
          assign_many: AssignManyFn | None = None) -> ProofReport:
    """Check every configuration of ``scope`` against ``assign`` (see the module doc).

    ``workers``: processes (default: the CPUs, at most 2 unless told; 1 runs in-process;
    more than 1 needs the ``fork`` start method, else it runs in-process). ``sticky``:
    judge I3 and I4a (default: the assignor is ``sticky`` or ``cooperative-sticky``). ``exact``:
    ask Z3 for every optimum instead of accepting the lower bound when it is met.
    ``session``: a factory of assign functions that answer like ``assign`` but keep what
    repeats across requests (``impl.assign_session.AssignSession``); each worker makes one.
    ``reference``: ask it every request of a violating configuration (`_relabel`), under
    the name ``reference_name``. ``gaps=False``: no I4b gap, which lets a keyed session
    whose leader does not see some claims be judged once for every way to add them
    (``blind``; ``aggregate=False`` enumerates them all the same). ``deadline``
    (``time.perf_counter``): the run and its workers stop there (`_ordered`); the report is
    then incomplete. ``progress(configurations, seconds, violating)`` after each unit."""
    scope = scope or Scope()
    target = target or f"python:{assignor}"
    sticky = assignor in STICKY_FAMILY if sticky is None else sticky
    workers = (1 if "fork" not in multiprocessing.get_all_start_methods()
               else max(1, min(2, os.cpu_count() or 1)) if workers is None else workers)
    tasks = _ordered(tasks_of(scope), deadline)
    total = _Partial()
    started = time.perf_counter()
    mode, claims_note = claim_mode(scope, assignor, gaps or not aggregate, session, sticky)
    done = 0  # units of work

    def collect(parts: Iterator[_Partial], drain: bool = False) -> None:  # `_until`
        nonlocal done
        for part in parts:
            total.merge(part)
            done += not part.cut
            if progress is not None:
                progress(total.configs, time.perf_counter() - started,
                         sum(total.counts.values()))
            if not drain and time.perf_counter() >= (deadline or float("inf")):
                return

    args = (assign, session, assignor, scope, sticky, exact, reference, gaps, mode, deadline,
            assign_many)
    if workers == 1:
        _init_worker(*args)
        if deadline is None or time.perf_counter() < deadline:
            collect(_run_task(t) for t in tasks)
        z3_ok = _WORKER[0].optimiser is not None and bool(_WORKER[0].optimiser.available)
    else:  # its workers stop mid-unit when the deadline came first; the rest is drained
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers, initializer=_init_forked_worker, initargs=args) as pool:
            collect(pool.imap_unordered(_run_task, _until(tasks, deadline),
                                        chunksize=4 if deadline is None else 1), drain=True)
        z3_ok = gaps and Optimiser(exact).available
    seconds = time.perf_counter() - started
    counterexamples = {inv: cex for inv, (_, cex) in total.smallest.items()}
    chosen = {id(c) for c in counterexamples.values()}
    distinct = [cex for _, (_, cex) in sorted(total.shapes.items(), key=lambda x: x[1][0])
                if id(cex) not in chosen and not _same(cex, counterexamples[cex.invariant])]
    if failures is not None:
        for cex in [*counterexamples.values(), *distinct]:
            cex.file = str(save_counterexample(failures, target, scope, cex))
    return ProofReport(
        target=target, assignor=assignor, scope=scope, configurations=total.configs,
        labelled=total.weight, seconds=seconds, workers=workers,
        assign_calls=total.assign_calls, assign_seconds=total.assign_seconds,
        cpu_seconds=total.cpu_seconds, violations=dict(total.counts),
        counterexamples=counterexamples,
        gaps=dict(total.gaps), gap_unjudged=total.unjudged,
        optimum_by=dict(total.optimum_by), z3_available=z3_ok,
        inherited=dict(total.inherited), evidence=dict(total.evidence),
        reference=reference_name or (None if reference is None else "the reference"),
        rules={inv: sorted(r) for inv, r in total.rules.items()},
        violations_labelled=dict(total.weighted),
        gap_examples={g: ex for g, (_, ex) in total.gap_examples.items()},
        gaps_measured=gaps, claims_hidden=mode, claims_note=claims_note, distinct=distinct,
        units_done=done, units=len(tasks))


def _ordered(tasks: list[tuple[Task, int]], deadline: float | None
             ) -> list[tuple[Task, int]]:
    """Against a deadline the smallest units first: what a cut run covers, and the smallest
    counterexample it finds, are then the same from run to run; else the biggest first,
    which keeps the workers busy together."""
    return tasks[::-1] if deadline is not None else tasks


def _until(tasks: list[tuple[Task, int]], deadline: float | None
           ) -> Iterator[tuple[Task, int]]:
    """The tasks a pool is fed: none once the deadline has come; the queued ones are then
    drained (they answer at once, cut). A pool left with tasks still queued can hang in its
    terminate, its task feeder blocked on a pipe no worker reads."""
    for task in tasks:
        if deadline is not None and time.perf_counter() >= deadline:
            return
        yield task


def _same(a: Counterexample, b: Counterexample) -> bool:
    return bool(a.rounds[a.round_no][0] == b.rounds[b.round_no][0])
