"""What the battery reports: findings, one result per engine, and the invariant × engine
table that ``groupcheck check`` prints.

Every cell is honest: an engine says "holds" for an invariant only where it judged that
invariant at least once (``EngineResult.judged`` counts the judgements); an invariant in
its repertoire it never judged is "not judged", and the reason is printed under the table.
Each finding carries the moment it was made, so a run can say how long finding took.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Required, TypedDict

from ...properties.delivery import DeliveryVerdict
from ...properties.invariants import ROWS, pattern
from ...properties.jsonl_shapes import ProfileJson
from ...properties.saved_json import save_as, steady_text
from ..delivery_line import DeliveryJson, delivery_json, delivery_line

__all__ = ["DEFAULT_SCOPE", "ENGINES", "INVARIANT_ROWS", "SMALL_SCOPE", "Axis", "BatteryResult",
           "CostFigures", "EngineResult", "Figures", "Finding", "LadderFigures",
           "batteries_delivery", "batteries_delivery_json", "figure_lines",
           "file_safe", "invariant_id", "note_profile", "record_profile", "save_json"]

INVARIANT_ROWS = ROWS
ENGINES = ("codec", "prove", "vectors", "scenario", "scenarios", "fuzz", "scale", "faults")
DEFAULT_SCOPE = "members=3,topics=2,partitions=1,generations=2,claims=2"
SMALL_SCOPE = "members=2,topics=2,partitions=2,generations=2,claims=2"
_ID = pattern()


#: the scale engine's ladders: one grows the group, one the partitions
Axis = Literal["members", "partitions"]


class LadderFigures(TypedDict, total=False):
    """The scale engine's figures for one ladder: its largest shape and that shape's
    seconds, each step's (members, partitions, seconds), Kafka's shape; the fitted exponent
    ``k`` with its spread between steps (``k_range``) and the size at which one call
    ``passes`` the ``bound``; Kafka's shape's seconds, measured, at least (a call ``cut`` at
    the engine's share or timed out) or extrapolated (``kafka_range``: from the spread)."""

    axis: Required[Axis]
    largest: Required[str]
    seconds: Required[float]
    timeout: Required[bool]
    steps: Required[list[list[float]]]
    kafka: Required[str]
    k: float
    passes: float
    bound: float
    kafka_seconds: float
    kafka_measured: bool
    kafka_how: str
    kafka_range: list[float]
    k_range: list[float]
    cut: bool


class CostFigures(TypedDict, total=False):
    """The scale engine's ladders, and the builtin assignor's exponent on each
    (``builtin``, where it ran beside the target)."""

    members: LadderFigures
    partitions: LadderFigures
    builtin: dict[str, float]


class Figures(TypedDict, total=False):
    """What an engine measured: histograms (value → count) of the imbalance and the moves
    at settled generations, of one-subscription groups by size and of the I4b gap; a note
    on the gap; the scale engine's cost."""

    imbalance: dict[int, int]
    moves: dict[int, int]
    equal_groups: dict[int, int]
    gap: dict[int, int]
    gap_note: str
    cost: CostFigures


def file_safe(name: str) -> str:
    """A target name fit for a file name (a jsonl: command has spaces and slashes)."""
    return re.sub(r"[^A-Za-z0-9._:-]+", "_", name)[:60]


def invariant_id(violation: str) -> str:
    found = _ID.search(violation)
    return found.group(1) if found else "ERROR"


@dataclass
class Finding:
    invariant: str
    violation: str
    file: str | None = None
    size: int | None = None  # events (fuzz) or members (assign inputs)
    detail: str = ""  # the counterexample, readable
    found_at: float = field(default_factory=time.perf_counter)  # perf_counter() when made
    #: where an inherited finding's label came from: "rule K1" or "evidence <reference>"
    label: str = ""


@dataclass
class EngineResult:
    engine: str
    checked: tuple[str, ...] = ()  # the invariants this engine judges on this target
    seconds: float = 0.0
    runs: int = 0
    findings: dict[str, Finding] = field(default_factory=dict)
    #: violations that are Kafka's own behaviour (properties.kafka_rules): shown, not failed
    inherited: dict[str, Finding] = field(default_factory=dict)
    note: str = ""
    skipped: str = ""  # why the engine did not run
    judged: Counter[str] = field(default_factory=Counter)  # judgements per invariant
    reasons: dict[str, str] = field(default_factory=dict)  # why an invariant was not judged
    figures: Figures = field(default_factory=lambda: Figures())
    #: invariants whose feature the target's client release lacks: never judged on it, so
    #: what the engine found of them is kept here, shown, and never a failure
    absent: dict[str, str] = field(default_factory=dict)
    #: distinct counterexamples beyond the first per invariant in ``findings`` (another
    #: file: the prover's other shapes of violation, another engine pass)
    more: list[Finding] = field(default_factory=list)
    #: the depth the engine reached (scopes, ladder shapes, examples), printed in its line
    depth: str = ""
    #: the invariants its minimum depth judges that this run left unjudged
    shallow: tuple[str, ...] = ()
    #: seconds more its minimum depth needs, estimated from the rates it measured
    needs: float = 0.0
    #: distinct shapes it turned up beyond its histograms (the state machine's small settled
    #: states, the scenarios engine's story outcomes): what the breadth slices count as new
    shapes: set[str] = field(default_factory=set)
    #: the delivery verdict of each story judged for delivery (I17), and the commit styles
    #: the members of those stories took
    delivery: list[DeliveryVerdict] = field(default_factory=list)
    commit_styles: dict[str, None] = field(default_factory=dict)

    def add(self, finding: Finding) -> None:
        first = self.findings.setdefault(finding.invariant, finding)
        if first is not finding and finding.file and finding.file != first.file \
                and all(f.file != finding.file for f in self.more):
            self.more.append(finding)
        self.judged[finding.invariant] = max(self.judged[finding.invariant], 1)

    def every_finding(self) -> list[Finding]:
        """Every distinct counterexample: the first per invariant, then ``more``."""
        return [*self.findings.values(), *self.more]

    @property
    def failed(self) -> bool:
        return bool(self.findings)

    def verdict(self, invariant: str) -> str:
        """VIOLATED, Kafka's (by a rule), reproduced (the reference answered alike), holds,
        absent (the release lacks its feature), not judged, or "-" (not this engine's
        business)."""
        if invariant in self.findings:
            return "VIOLATED"
        if invariant in self.absent and invariant in self.checked:
            return "absent"
        if invariant in self.inherited:
            return ("reproduced" if self.inherited[invariant].label.startswith("evidence")
                    else "Kafka's")
        if invariant not in self.checked:
            return "-"
        return "holds" if self.judged[invariant] else "not judged"

    def why_not(self, invariant: str) -> str:
        if invariant in self.absent:
            return f"not judged ({self.absent[invariant]})"
        return self.reasons.get(invariant) or (
            f"its premise never arose in {self.runs:,} run(s)" if self.runs
            else "the engine ran nothing")


def batteries_delivery(results: Sequence[BatteryResult]) -> str | None:
    """The delivery line over every story of every engine of ``results`` (None: no story
    was judged for delivery)."""
    engines = [e for r in results for e in r.engines]
    return delivery_line([v for e in engines for v in e.delivery],
                         [s for e in engines for s in e.commit_styles])


def batteries_delivery_json(results: Sequence[BatteryResult]) -> DeliveryJson | None:
    """`batteries_delivery` as data."""
    engines = [e for r in results for e in r.engines]
    return delivery_json([v for e in engines for v in e.delivery],
                         [s for e in engines for s in e.commit_styles])


@dataclass
class BatteryResult:
    target: str
    engines: list[EngineResult]
    seconds: float = 0.0
    assignor: str | None = None
    balance: str = ""  # "sticky (Kafka's rule for its sticky assignor)"
    #: what the target's client release implements (one line; '' for none known)
    profile: str = ""
    started: float = 0.0  # perf_counter() when the run began (findings count from here)
    budget: float = 0.0  # the whole run's budget, in seconds

    @property
    def failed(self) -> bool:
        return any(e.failed for e in self.engines)

    @property
    def verdict(self) -> str:
        """``VIOLATED``, ``every invariant judged held``, or, where no engine judged
        anything (every one skipped, a budget too small), that nothing was judged."""
        if self.failed:
            return "VIOLATED"
        if not any(n for e in self.engines for n in e.judged.values()):
            return "nothing judged (no engine ran: see the lines above)"
        return "every invariant judged held"

    def first(self) -> tuple[EngineResult, Finding] | None:
        found = [(f.found_at, e, f) for e in self.engines for f in e.findings.values()]
        if not found:
            return None
        _, engine, finding = min(found, key=lambda x: x[0])
        return engine, finding

    def delivery_line(self) -> str | None:
        """The delivery verdict over every engine's stories (None: none judged)."""
        return batteries_delivery([self])

    def after(self, finding: Finding) -> float:
        """Seconds from the start of the run to ``finding``."""
        return max(0.0, finding.found_at - self.started) if self.started else 0.0

    def table(self) -> str:
        ran = [e for e in self.engines if not e.skipped]
        width = max([12] + [len(e.engine) + 2 for e in ran])
        head = f"check {self.target}" + (f" [{self.assignor}]" if self.assignor else "")
        lines = [f"{head}  ({self.seconds:.1f}s)"]
        if self.profile:
            lines.append(f"client profile: {self.profile}")
        if self.balance:
            lines.append(f"balance contract: {self.balance}")
        lines.append("invariant  " + "".join(f"{e.engine:<{width}}" for e in ran))
        files: list[str] = []
        unjudged: list[str] = []
        for inv in INVARIANT_ROWS:
            cells = [e.verdict(inv) for e in ran]
            for e in ran:
                shown = e.findings.get(inv) or e.inherited.get(inv)
                if shown is not None:
                    files.append(f"  {inv} [{e.engine}]: {shown.violation}"
                                 + (f"\n      {shown.file}" if shown.file else ""))
                elif e.verdict(inv) in ("not judged", "absent"):
                    unjudged.append(f"  {inv} [{e.engine}]: {e.why_not(inv)}")
            if any(c != "-" for c in cells):
                lines.append(f"{inv:<11}" + "".join(f"{c:<{width}}" for c in cells))
        lines.append("")
        for e in self.engines:
            reached = f"; reached {e.depth}" if e.depth else ""
            state = f"skipped: {e.skipped}" if e.skipped else \
                f"{e.runs:,} runs in {e.seconds:.1f}s{reached}" + (f"; {e.note}" if e.note else "")
            lines.append(f"  {e.engine:<9} {state}")
            lines += [f"            {line}" for line in figure_lines(e.figures)]
        if unjudged:
            lines.append("not judged:")
            lines += unjudged
        if files:
            lines.append("counterexamples:")
            lines += files
        kafka = sorted({f"{i} ({f.label})" if f.label else i for e in self.engines
                        for i, f in e.inherited.items()})
        if kafka:
            lines.append(f"Kafka's: {', '.join(kafka)} broken the way Kafka's own client breaks "
                         "it (by a rule, K1-K4 in docs/explanation/kafka-rules.md, or by "
                         "evidence: the reference gave the same requests "
                         "identical answers); --strict fails on them")
        lines.append(self.verdict)
        return "\n".join(lines)


def _histogram(counts: dict[int, int]) -> str:
    return ", ".join(f"{k}: {v:,}" for k, v in sorted(counts.items(), key=lambda x: int(x[0])))


def figure_lines(figures: Figures) -> list[str]:
    """The figures an engine measured, one line each (histograms as value: count)."""
    histograms = (("imbalance (max - min partitions) per settled generation",
                   figures.get("imbalance")),
                  ("partitions moved between settled generations", figures.get("moves")),
                  ("I4b gap (moves - Z3's optimum)", figures.get("gap")),
                  ("settled groups with one subscription, by members",
                   figures.get("equal_groups")))
    out = [f"{label}: {_histogram(value)}" for label, value in histograms if value]
    if figures.get("gap_note"):
        out.append(str(figures["gap_note"]))
    cost = figures.get("cost") or CostFigures()
    builtin = cost.get("builtin") or {}
    for ladder in ladders_of(cost):
        out += _cost_lines(ladder, builtin.get(ladder["axis"]))
    return out


def ladders_of(cost: CostFigures) -> list[LadderFigures]:
    """The ladders the scale engine measured, in the order it ran them."""
    found = {"members": cost.get("members"), "partitions": cost.get("partitions")}
    return [ladder for axis in cost if (ladder := found.get(axis))]


def _cost_lines(ladder: LadderFigures, builtin: float | None) -> list[str]:
    """The scale engine's figures for one ladder: exponent, largest shape, where one call
    passes the bound, and the Kafka shape's seconds."""
    axis = ladder["axis"]
    beside = f"; the builtin n^{builtin:.2f}" if builtin is not None else ""
    grows = (f"time grows as n^{ladder['k']:.2f} ({axis}{beside})" if "k" in ladder
             else f"too few steps to fit ({axis})")
    took = (f"> {ladder['seconds']:g} s ({'cut at its share' if ladder.get('cut') else 'TIMEOUT'})"
            if ladder.get("timeout") else f"in {ladder['seconds']:.3g} s")
    line = f"{grows}; {ladder['largest']} {took}"
    if "passes" in ladder:
        passes = ladder["passes"]
        line += (f"; one call passes {ladder['bound']:g} s at ≈ {passes:.2g} {axis}"
                 if passes != float("inf") else "; its cost does not grow")
    out = [line]
    if "kafka_seconds" in ladder:
        how = ladder.get("kafka_how") or (
            "measured" if ladder["kafka_measured"] else "extrapolated")
        low, high = ladder.get("kafka_range") or (None, None)
        spread = (f" ({low:,.3g}..{high:,.3g} s from the exponent's spread between steps)"
                  if low is not None and high is not None
                  and f"{low:,.3g}" != f"{high:,.3g}" else "")
        out.append(f"  Kafka's {ladder['kafka']}: {ladder['kafka_seconds']:,.3g} s {how}{spread}")
    return out


def save_json(directory: str | os.PathLike[str], stem: str, body: Mapping[str, object],
              meaning: Mapping[str, object]) -> str:
    """Write ``body`` as ``<stem>-<digest of meaning>.json`` (`properties.saved_json`: the
    meaning is the target, the invariant and the request or story; no timing is written)."""
    return str(save_as(directory, file_safe(stem).replace(":", "-"), body, meaning))


def record_profile(result: EngineResult, profile: ProfileJson) -> None:
    """Store the client profile in every counterexample file of ``result``: under the
    ``groupcheck`` notes of a request or codec file, at the top of the others."""
    for finding in [*result.every_finding(), *result.inherited.values()]:
        if finding.file:
            note_profile(finding.file, profile)


def note_profile(file: str | os.PathLike[str], profile: ProfileJson) -> None:
    """Store ``profile`` in one counterexample file (see `record_profile`); a file that is
    not a JSON object is left alone."""
    path = Path(file)
    if path.suffix != ".json":
        return
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(body, dict):
        return
    notes = body.get("groupcheck")
    (notes if isinstance(notes, dict) else body)["clientProfile"] = profile
    path.write_text(steady_text(body), encoding="utf-8")
