"""The scope prover's report (``ProofReport``) and its counterexamples: what ``prove``
returns, as a table for people and a dict for ``--json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from ..deviations import EVIDENCE
from ..invariants import judged_by
from ..jsonl_shapes import Answered, AssignRequest
from .space import Config, Scope, TopicPartition, reduction_is_sound, reduction_text

__all__ = ["FORMAT", "Counterexample", "CounterexampleFile", "GapExample", "ProofRecord",
           "ProofReport"]

FORMAT = "groupcheck-prove/1"


class ProverRound(TypedDict):
    request: AssignRequest
    response: Answered


class ProveNote(TypedDict):
    """groupcheck's notes on a prover counterexample: where it was found, what broke, in
    which round, and every round of its configuration."""

    format: str
    target: str
    scope: str
    invariant: str
    violations: list[str]
    inheritedFromKafka: str | None
    round: int
    response: Answered
    rounds: list[ProverRound]


class CounterexampleFile(AssignRequest, total=False):
    """A prover counterexample as saved: the violating round's request, notes under
    ``groupcheck``."""

    groupcheck: ProveNote


class GapExample(TypedDict):
    """The smallest configuration of one I4b gap: its request, the moves of the answer and
    the optimum's, and the settled assignment."""

    request: AssignRequest
    moves: int | None
    optimum: int | None
    assignment: dict[str, list[TopicPartition]]


class InheritedCount(TypedDict):
    configurations: int
    rules: list[str]
    byEvidence: int
    byRule: int


class CounterexampleSummary(TypedDict):
    violations: list[str]
    file: str | None
    inheritedFromKafka: str | None
    request: AssignRequest
    response: Answered
    round: int


class UnitsDone(TypedDict):
    """How many units of work (the scope's tasks) a run finished, of how many."""

    done: int
    of: int


class ProofRecord(TypedDict):
    """A proof report as ``prove --json`` writes it."""

    target: str
    assignor: str
    scope: str
    ok: bool
    proved: bool
    complete: bool
    units: UnitsDone
    reduction: str
    configurations: int
    labelled: int
    symmetrySaved: int
    seconds: float
    configurationsPerSecond: float
    labelledPerSecond: float
    workers: int
    assignCalls: int
    assignSeconds: float
    cpuSeconds: float
    violations: dict[str, int]
    violationsLabelled: dict[str, int]
    reference: str | None
    inheritedFromKafka: dict[str, InheritedCount]
    counterexamples: dict[str, CounterexampleSummary]
    gapHistogram: dict[str, int]
    gapUnjudged: int
    optimumBy: dict[str, int]
    gapExamples: dict[str, GapExample]
    z3: bool
    gapsMeasured: bool
    claimsAggregated: str | None


@dataclass
class Counterexample:
    invariant: str
    violations: list[str]
    config: Config
    rounds: list[tuple[AssignRequest, Answered]]
    round_no: int
    file: str | None = None
    rule: str | None = None  # the kafka_rules rule, when Kafka itself answers this way

    def record(self, target: str, scope: Scope) -> CounterexampleFile:
        request, response = self.rounds[self.round_no]
        return {**request, "groupcheck": {
            "format": FORMAT, "target": target, "scope": scope.text(),
            "invariant": self.invariant, "violations": self.violations,
            "inheritedFromKafka": self.rule, "round": self.round_no, "response": response,
            "rounds": [{"request": q, "response": r} for q, r in self.rounds]}}



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
    gap_examples: dict[int, GapExample] = field(default_factory=dict)
    #: of ``violations``, the configurations whose violation a `kafka_rules` rule explains
    inherited: dict[str, int] = field(default_factory=dict)
    rules: dict[str, list[str]] = field(default_factory=dict)
    #: of ``inherited``, the configurations the ``reference`` target reproduced
    evidence: dict[str, int] = field(default_factory=dict)
    reference: str | None = None
    #: of ``violations``, the labelled configurations the violating representatives stand for
    violations_labelled: dict[str, int] = field(default_factory=dict)
    #: the I4b gap was measured (``prove(gaps=...)``)
    gaps_measured: bool = True
    #: which claims were aggregated (a ``blind`` mode: "all", "unsubscribed"), if any
    claims_hidden: str | None = None
    claims_note: str = ""
    #: more counterexamples: the smallest of each other shape of violation (the
    #: ``counterexamples`` hold the smallest per invariant)
    distinct: list[Counterexample] = field(default_factory=list)
    #: units of work (``enumeration.tasks_of``) run, of ``units``: fewer when the
    #: run stopped at its deadline
    units_done: int = 0
    units: int = 0

    @property
    def complete(self) -> bool:
        """Every unit of work of the scope ran (no deadline stopped the run)."""
        return self.units_done >= self.units

    @property
    def proved(self) -> bool:
        """The run covered every configuration of the scope and the reduction is sound
        (symmetry 0 or 1), so a clean report is a proof; levels 2 and 3 only sample it,
        and a run stopped at its deadline proves nothing."""
        return self.complete and reduction_is_sound(self.scope)

    @property
    def stopped_note(self) -> str:
        """Where a deadline stopped the run, in words; empty when it ran to the end."""
        return ("" if self.complete else
                f"stopped at its deadline after {self.units_done:,} of {self.units:,} units "
                "of work")

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

    def to_dict(self) -> ProofRecord:
        return {
            "target": self.target, "assignor": self.assignor, "scope": self.scope.text(),
            "ok": self.ok, "proved": self.proved, "complete": self.complete,
            "units": {"done": self.units_done, "of": self.units},
            "reduction": reduction_text(self.scope),
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
            "gapsMeasured": self.gaps_measured,
            "claimsAggregated": self.claims_hidden,
        }

    def table(self) -> str:
        """A short human-readable report; it says whether the run is a proof."""
        factor = self.labelled / self.configurations if self.configurations else 1.0
        per_second = self.labelled / self.seconds if self.seconds > 0 else 0.0
        verdict = ("proof" if self.proved else "SAMPLED, NOT PROVED" if self.complete
                   else "STOPPED, NOT PROVED")
        lines = [
            f"prove {self.target}  scope {self.scope.text()}",
            f"  {verdict:<22}  {reduction_text(self.scope)}",
            f"  classes checked         {self.configurations:>10,}  "
            f"(covering {self.labelled:,} configurations of the scope; reductions saved "
            f"x{factor:.1f})",
            f"  time                    {self.seconds:>10.1f} s  "
            f"({self.rate:,.0f} classes/s, {per_second:,.0f} configurations/s "
            f"on {self.workers} worker(s); "
            f"{self.cpu_seconds:.1f} CPU s, {self.assign_seconds:.1f} of them in "
            f"{self.assign_calls:,} assign calls)",
        ]
        lines.append("  invariant     classes  configurations  of them Kafka's own  "
                     "smallest counterexample")
        for inv in judged_by("prove"):
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
        if self.claims_note:
            lines.insert(2, f"  {self.claims_note}")
        if not self.complete:
            lines.insert(2, f"  {self.stopped_note}")
        if not self.gaps_measured:
            lines.append("  I4b gap: not measured (--no-gaps)")
        elif self.z3_available:
            hist = "  ".join(f"{k:+d}: {v:,}" if k else f"0: {v:,}"
                             for k, v in sorted(self.gaps.items())) or "-"
            lines.append(f"  I4b gap (moves - optimum, classes)  {hist}")
            by = ", ".join(f"{k} {v:,}" for k, v in sorted(self.optimum_by.items()))
            lines.append(f"    optimum from: {by or '-'}; not judged (a violation came first): "
                         f"{self.gap_unjudged:,}")
        else:
            lines.append("  I4b gap: not measured (install the z3 extra)")
        scope_word = ("on every configuration of the scope: proved" if self.proved else
                      f"on the {self.configurations:,} sampled classes: sampled, not proved"
                      if self.complete else
                      f"on the {self.configurations:,} classes run before the deadline: "
                      "not proved")
        if not self.ok:
            lines.append(f"VIOLATED: {', '.join(sorted(self.own_violations))}")
        elif self.violations:
            lines.append(f"every violation is Kafka's own behaviour ("
                         f"{', '.join(sorted(self.inherited))}; rules in "
                         "docs/explanation/kafka-rules.md); --strict fails on them; "
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
