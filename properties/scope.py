"""The exhaustive-scope prover: every configuration in a small scope, run through an assignor.

``prove(assign, assignor, scope)`` enumerates every group configuration within ``scope`` up
to symmetry, turns each into an ``assign`` request (the JSON-lines contract), runs the given
``assign(request) -> response`` callable, judges the answer with the Python predicates of
I1–I6, and asks Z3 (``optimal``) for the fewest moves of any balanced complete assignment,
so that stickiness is reported as a gap histogram (moves − optimum; I4b is reported, never
failed). It works on plain data only; the caller hands it the function to check.

The search space (scope bounds) is in ``scope_space``, its classes under symmetry and their
weights in ``scope_orbits``; how one configuration becomes requests and is judged (I1-I6,
I11, the I4b gap) is in ``scope_judge``; this module runs them over the whole scope on
worker processes (units of work: a metadata, a member count and the first member's
skeleton, biggest first) and collects the report. A target may hand over a ``session``
factory — an assign function per worker that keeps what repeats across requests
(``impl.assign_op.AssignSession``, for the deterministic in-tree assignors).

Counterexamples: for each invariant id, the smallest violating configuration (fewest
members, then partitions, claims, generations, subscriptions) is kept and, with
``failures=DIR``, saved as a JSON file whose top level is the failing round's request (so
``groupcheck assign FILE`` replays it) plus a ``groupcheck`` object with the violation.
"""

from __future__ import annotations

import gc
import hashlib
import json
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .deviations import EVIDENCE, agreement, evidence_labels
from .rebalance import assignment_of
from .scope_judge import (
    STICKY_FAMILY,
    Judgement,
    Optimiser,
    build_request,
    judge,
)
from .scope_orbits import (
    Shape,
    Task,
    configs_of_task,
    reduction_is_sound,
    reduction_text,
    skeletons,
    tasks_of,
    upper_bound,
)
from .scope_space import AssignFn, Config, Metadata, Scope, enumerate_scope, parse_bounds

__all__ = ["AssignFn", "Config", "Counterexample", "ProofReport", "Scope", "build_request",
           "enumerate_scope", "judge", "parse_bounds", "prove", "save_counterexample",
           "upper_bound"]

FORMAT = "groupcheck-prove/1"




@dataclass
class Counterexample:
    invariant: str
    violations: list[str]
    config: Config
    rounds: list[tuple[dict[str, Any], Any]]
    round_no: int
    file: str | None = None
    rule: str | None = None  # the kafka_rules rule, when Kafka itself answers this way

    def record(self, target: str, scope: Scope) -> dict[str, Any]:
        request, response = self.rounds[self.round_no]
        return {**request, "groupcheck": {
            "format": FORMAT, "target": target, "scope": scope.text(),
            "invariant": self.invariant, "violations": self.violations,
            "inheritedFromKafka": self.rule, "round": self.round_no, "response": response,
            "rounds": [{"request": q, "response": r} for q, r in self.rounds]}}


@dataclass
class _Partial:
    configs: int = 0
    weight: int = 0
    assign_calls: int = 0
    assign_seconds: float = 0.0
    cpu_seconds: float = 0.0
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
    gap_examples: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = field(
        default_factory=dict)

    def add(self, config: Config, j: Judgement) -> None:
        self.configs += 1
        self.weight += config.weight
        self.assign_calls += len(j.calls)
        self.assign_seconds += j.assign_seconds
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


@dataclass
class ProofReport:
    """The outcome of :func:`prove`."""

    target: str
    assignor: str
    scope: Scope
    configurations: int
    labelled: int
    seconds: float
    workers: int
    assign_calls: int
    assign_seconds: float
    cpu_seconds: float
    violations: dict[str, int]
    counterexamples: dict[str, Counterexample]
    gaps: dict[int, int]
    gap_unjudged: int
    optimum_by: dict[str, int]
    z3_available: bool
    gap_examples: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: of ``violations``, the configurations whose violation a `kafka_rules` rule explains
    inherited: dict[str, int] = field(default_factory=dict)
    rules: dict[str, list[str]] = field(default_factory=dict)
    #: of ``inherited``, the configurations the ``reference`` target reproduced
    evidence: dict[str, int] = field(default_factory=dict)
    reference: str | None = None
    #: of ``violations``, the labelled configurations the violating representatives stand for
    violations_labelled: dict[str, int] = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        """The reduction is sound (symmetry 0 or 1): the run covered every configuration of
        the scope, so a clean report is a proof; levels 2 and 3 only sample it."""
        return reduction_is_sound(self.scope)

    @property
    def own_violations(self) -> dict[str, int]:
        """Violations no `kafka_rules` rule explains (configurations per invariant)."""
        own = {inv: n - self.inherited.get(inv, 0) for inv, n in self.violations.items()}
        return {inv: n for inv, n in own.items() if n}

    @property
    def ok(self) -> bool:
        """No violation but Kafka's own behaviour (`kafka_rules`); see ``strict_ok``."""
        return not self.own_violations

    @property
    def strict_ok(self) -> bool:
        return not self.violations

    @property
    def rate(self) -> float:
        return self.configurations / self.seconds if self.seconds > 0 else 0.0

    @property
    def symmetry_saved(self) -> int:
        return self.labelled - self.configurations

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "assignor": self.assignor, "scope": self.scope.text(),
            "ok": self.ok, "proved": self.proved, "reduction": reduction_text(self.scope),
            "configurations": self.configurations, "labelled": self.labelled,
            "symmetrySaved": self.symmetry_saved, "seconds": round(self.seconds, 3),
            "configurationsPerSecond": round(self.rate, 1),
            "labelledPerSecond": round(self.labelled / self.seconds if self.seconds > 0
                                       else 0.0, 1),
            "workers": self.workers,
            "assignCalls": self.assign_calls,
            "assignSeconds": round(self.assign_seconds, 3),
            "cpuSeconds": round(self.cpu_seconds, 3),
            "violations": dict(sorted(self.violations.items())),
            "violationsLabelled": dict(sorted(self.violations_labelled.items())),
            "reference": self.reference,
            "inheritedFromKafka": {inv: {"configurations": n, "rules": self.rules.get(inv, []),
                                         "byEvidence": self.evidence.get(inv, 0),
                                         "byRule": n - self.evidence.get(inv, 0)}
                                   for inv, n in sorted(self.inherited.items())},
            "counterexamples": {
                inv: {"violations": c.violations, "file": c.file, "inheritedFromKafka": c.rule,
                      "request": c.rounds[c.round_no][0], "response": c.rounds[c.round_no][1],
                      "round": c.round_no}
                for inv, c in sorted(self.counterexamples.items())},
            "gapHistogram": {str(k): v for k, v in sorted(self.gaps.items())},
            "gapUnjudged": self.gap_unjudged,
            "optimumBy": dict(sorted(self.optimum_by.items())),
            "gapExamples": {str(k): v for k, v in sorted(self.gap_examples.items())},
            "z3": self.z3_available,
        }

    def table(self) -> str:
        """A short human-readable report; it says whether the run is a proof."""
        factor = self.labelled / self.configurations if self.configurations else 1.0
        per_second = self.labelled / self.seconds if self.seconds > 0 else 0.0
        verdict = "proof" if self.proved else "SAMPLED, NOT PROVED"
        lines = [
            f"prove {self.target}  scope {self.scope.text()}",
            f"  {verdict:<22}  {reduction_text(self.scope)}",
            f"  classes checked         {self.configurations:>10,}  "
            f"(covering {self.labelled:,} configurations of the scope; symmetry saved "
            f"x{factor:.1f})",
            f"  time                    {self.seconds:>10.1f} s  "
            f"({self.rate:,.0f} classes/s, {per_second:,.0f} configurations/s "
            f"on {self.workers} worker(s); "
            f"{self.cpu_seconds:.1f} CPU s, {self.assign_seconds:.1f} of them in "
            f"{self.assign_calls:,} assign calls)",
        ]
        lines.append("  invariant     classes  configurations  of them Kafka's own  "
                     "smallest counterexample")
        for inv in ("I1", "I2", "I3", "I4a", "I5", "I6", "I11", "ERROR", "TIMEOUT"):
            n = self.violations.get(inv, 0)
            kafka = self.inherited.get(inv, 0)
            rules = ",".join(self._label(r) for r in self.rules.get(inv, []))
            cex = self.counterexamples.get(inv)
            shown = "-" if cex is None else cex.violations[0]
            if cex is not None and cex.rule:
                shown = f"({self._label(cex.rule)}) {shown}"
            if cex is not None and cex.file:
                shown += f"  [{cex.file}]"
            own = f"{kafka:,} {rules}" if kafka else "-"
            lines.append(f"  {inv:<9}  {n:>10,}  {self.violations_labelled.get(inv, 0):>14,}  "
                         f"{own:<18}  {shown}")
        if self.z3_available:
            hist = "  ".join(f"{k:+d}: {v:,}" if k else f"0: {v:,}"
                             for k, v in sorted(self.gaps.items())) or "-"
            lines.append(f"  I4b gap (moves - optimum, classes)  {hist}")
            by = ", ".join(f"{k} {v:,}" for k, v in sorted(self.optimum_by.items()))
            lines.append(f"    optimum from: {by or '-'}; not judged (a violation came first): "
                         f"{self.gap_unjudged:,}")
        else:
            lines.append("  I4b gap: not measured (install the z3 extra)")
        scope_word = ("on every configuration of the scope: proved" if self.proved else
                      f"on the {self.configurations:,} sampled classes: sampled, not proved")
        if not self.ok:
            lines.append(f"VIOLATED: {', '.join(sorted(self.own_violations))}")
        elif self.violations:
            lines.append(f"every violation is Kafka's own behaviour ("
                         f"{', '.join(sorted(self.inherited))}; rules in README, 'Where "
                         "groupcheck differs from Kafka'); --strict fails on them; "
                         f"every other invariant held {scope_word}")
        else:
            lines.append(f"every invariant held {scope_word}")
        if self.reference is not None:
            by_evidence = sum(self.evidence.values())
            lines.append(f"labels: {by_evidence:,} from evidence (the reference "
                         f"{self.reference} answered the same requests identically), "
                         f"{sum(self.inherited.values()) - by_evidence:,} from a rule where "
                         "the reference could not be asked")
        return "\n".join(lines)

    def _label(self, rule: str) -> str:
        """A label as the table shows it: the rule id, or the reference that reproduced."""
        return f"reproduced by {self.reference}" if rule == EVIDENCE else rule


_WORKER: dict[str, Any] = {}


def _init_worker(assign: AssignFn, session: Callable[[], AssignFn] | None, assignor: str,
                 scope: Scope, sticky: bool, exact: bool,
                 reference: AssignFn | None = None) -> None:
    _WORKER.clear()
    _WORKER.update(assign=session() if session is not None else assign, plain=assign,
                   assignor=assignor, scope=scope, sticky=sticky, optimiser=Optimiser(exact),
                   shapes={}, skeletons=skeletons(scope), reference=reference)


def relabel(j: Judgement, assign: AssignFn, reference: AssignFn) -> None:
    """Labels from evidence (`deviations.agreement`): each violation whose round the
    reference answers identically, every earlier round too, is the reference's own."""
    requests = [request for request, _ in j.rounds[:max(j.first_round_of.values()) + 1]]
    evidence_labels(j.first_round_of, j.inherited, *agreement(requests, assign, reference))


def _run_task(item: tuple[Task, int]) -> _Partial:
    task, orbit = item
    scope: Scope = _WORKER["scope"]
    shapes: dict[Metadata, Shape] = _WORKER["shapes"]
    shape = shapes.get(task[0])
    if shape is None:
        shape = shapes[task[0]] = Shape.of(scope, task[0], orbit)
    part = _Partial()
    optimiser: Optimiser = _WORKER["optimiser"]
    assign, assignor, sticky = _WORKER["assign"], _WORKER["assignor"], _WORKER["sticky"]
    started = time.process_time()
    reference = _WORKER["reference"]
    # the cyclic collector is off for a task: the judgements make no cycles worth finding,
    # and its passes over the worker's caches cost a sixth of the time (bench/prove.py)
    collecting = gc.isenabled()
    gc.disable()
    try:
        for config in configs_of_task(scope, task, shape, _WORKER["skeletons"]):
            j = judge(assign, assignor, config, optimiser, sticky)
            if reference is not None and j.first_round_of:
                relabel(j, _WORKER["plain"], reference)
            part.add(config, j)
    finally:
        if collecting:
            gc.enable()
    part.cpu_seconds = time.process_time() - started
    return part


def save_counterexample(directory: str | os.PathLike[str], target: str, scope: Scope,
                        cex: Counterexample) -> Path:
    """Write one counterexample; the name says what broke and is stable for its content."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(cex.record(target, scope), indent=1, ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    path = out / f"prove-{target.replace(':', '-')}-{cex.invariant}-{digest}.json"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def prove(assign: AssignFn, assignor: str, scope: Scope | None = None, *,
          target: str | None = None, workers: int | None = None,
          failures: str | os.PathLike[str] | None = None, sticky: bool | None = None,
          exact: bool = False, session: Callable[[], AssignFn] | None = None,
          progress: Callable[[int, float], None] | None = None,
          reference: AssignFn | None = None, reference_name: str | None = None
          ) -> ProofReport:
    """Check every configuration of ``scope`` against ``assign`` (see the module doc).

    ``workers``: processes (default: the CPUs, at most 2 unless told; 1 runs in-process;
    more than 1 needs the ``fork`` start method, else it runs in-process). ``sticky``:
    judge I3 and I4a (default: the assignor is ``sticky`` or ``cooperative-sticky``). ``exact``:
    ask Z3 for every optimum instead of accepting the lower bound when it is met.
    ``session``: a factory of assign functions that answer like ``assign`` but keep what
    repeats across requests (``impl.assign_op.AssignSession``); each worker makes one.
    ``reference``: ask it every request of a violating configuration (`relabel`), under
    the name ``reference_name``.
    """
    scope = scope or Scope()
    target = target or f"python:{assignor}"
    sticky = assignor in STICKY_FAMILY if sticky is None else sticky
    if workers is None:
        workers = max(1, min(2, os.cpu_count() or 1))
    if "fork" not in multiprocessing.get_all_start_methods():
        workers = 1
    tasks = tasks_of(scope)
    total = _Partial()
    started = time.perf_counter()

    def collect(parts: Iterator[_Partial]) -> None:
        for part in parts:
            total.merge(part)
            if progress is not None:
                progress(total.configs, time.perf_counter() - started)

    args = (assign, session, assignor, scope, sticky, exact, reference)
    if workers == 1:
        _init_worker(*args)
        collect(_run_task(t) for t in tasks)
        z3_ok = bool(_WORKER["optimiser"].available)
    else:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers, initializer=_init_worker, initargs=args) as pool:
            collect(pool.imap_unordered(_run_task, tasks, chunksize=4))
        z3_ok = Optimiser(exact).available
    seconds = time.perf_counter() - started
    counterexamples = {inv: cex for inv, (_, cex) in total.smallest.items()}
    if failures is not None:
        for cex in counterexamples.values():
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
        gap_examples={g: ex for g, (_, ex) in total.gap_examples.items()})
