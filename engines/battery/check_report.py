"""What ``groupcheck check`` prints: one invariant × engine table per assignor with a summary
line each, or the same as one JSON object (``--json``)."""

from __future__ import annotations

import math
from typing import Literal, TypedDict, final

from ...targets.offers import Offer
from ..delivery_line import DeliveryJson
from .depth import shortfall
from .results import (
    INVARIANT_ROWS,
    BatteryResult,
    CostFigures,
    EngineResult,
    Figures,
    batteries_delivery_json,
)

__all__ = ["AssignorJson", "BatteryJson", "CheckJson", "EngineJson", "FiguresJson", "ShortfallJson",
           "battery_json", "check_json", "check_text", "engine_json", "figures_json"]

Histogram = Literal["imbalance", "moves", "equal_groups", "gap"]
#: the histograms in the order the engines measure them
HISTOGRAMS: tuple[Histogram, ...] = ("imbalance", "moves", "equal_groups", "gap")


class ViolationJson(TypedDict):
    violation: str
    file: str | None
    size: int | None
    afterSeconds: float


class MoreViolationJson(TypedDict):
    invariant: str
    violation: str
    file: str | None
    size: int | None


class InheritedJson(TypedDict):
    violation: str
    file: str | None
    label: str


class FiguresJson(TypedDict, total=False):
    """An engine's `Figures`, a histogram's values as strings (JSON's keys)."""

    imbalance: dict[str, int]
    moves: dict[str, int]
    equal_groups: dict[str, int]
    gap: dict[str, int]
    gap_note: str
    cost: CostFigures


class EngineJson(TypedDict):
    """One engine of one assignor's battery: its verdict per invariant, what it judged, what
    it could not, its figures and its counterexamples."""

    skipped: str | None
    runs: int
    seconds: float
    #: the depth it reached (scopes, ladder shapes, examples, stories), None where unmeasured
    reached: str | None
    checked: list[str]
    note: str
    verdicts: dict[str, str]
    judged: dict[str, int]
    notJudged: dict[str, str]
    absent: dict[str, str]
    figures: FiguresJson
    violations: dict[str, ViolationJson]
    moreViolations: list[MoreViolationJson]
    inheritedFromKafka: dict[str, InheritedJson]


class BatteryJson(TypedDict):
    """One assignor's battery."""

    target: str
    assignor: str | None
    ok: bool
    balance: str
    profile: str | None
    seconds: float
    engines: dict[str, EngineJson]
    delivery: DeliveryJson | None


@final
class SupportedJson(BatteryJson):
    supported: bool


@final
class UnsupportedJson(TypedDict):
    supported: bool
    error: str | None


#: an assignor of the target: its battery, or why the target does not run it
AssignorJson = SupportedJson | UnsupportedJson


class ShortfallJson(TypedDict):
    """The invariants left unjudged at the minimum depth, the budget, the budget estimated
    to reach them (None: no rate measured) and the verdict line."""

    invariants: list[str]
    budget: float
    reaching: float | None
    line: str


class CheckJson(TypedDict):
    """``groupcheck check --json``: every assignor's battery (docs/reference/commands.md)."""

    target: str
    ok: bool
    seconds: float
    assignors: dict[str, AssignorJson]
    delivery: DeliveryJson | None
    notJudgedAtDepth: ShortfallJson | None


def check_text(text: str, offers: list[Offer], results: list[BatteryResult],
               budget: float | None = None) -> str:
    """One table per assignor, the assignors not supported, a summary line each, and the
    invariants left unjudged at depth at ``budget`` (the --budget asked; default: the
    budget the run was given)."""
    parts = [r.table() for r in results]
    summary = [f"{len(results)} assignor(s) of {text} checked"]
    by_label = iter(results)
    for offer in offers:
        if not offer.supported:
            summary.append(f"  {offer.label:<20} not supported: {offer.error}")
            continue
        r = next(by_label)
        first = r.first()
        verdict = r.verdict if first is None else (
            f"VIOLATED {', '.join(sorted({i for e in r.engines for i in e.findings}))}; "
            f"first after {r.after(first[1]):.1f}s ({first[0].engine})")
        shallow = sorted({i for e in r.engines for i in e.shallow})
        if shallow:
            verdict += f"; not judged at depth: {', '.join(shallow)}"
        summary.append(f"  {offer.label:<20} {verdict}")
        delivered = r.delivery_line()
        if delivered is not None:
            summary.append(f"  {'':<20} {delivered}")
    short = shortfall(results, _asked(results, budget))
    if short is not None:
        summary.append(short.line())
    out = "\n\n".join(parts) + "\n\n" + "\n".join(summary)
    failing = [(r, r.first()) for r in results if r.first() is not None]
    if failing:
        r, first = failing[0]
        assert first is not None  # failing holds the results with a first finding only
        engine, finding = first
        out += (f"\n\nfirst counterexample ({r.assignor}, {engine.engine}):\n"
                f"{finding.detail}")
    return out


def battery_json(result: BatteryResult) -> BatteryJson:
    return {"target": result.target, "assignor": result.assignor, "ok": not result.failed,
            "balance": result.balance, "profile": result.profile or None,
            "seconds": round(result.seconds, 3),
            "engines": {e.engine: engine_json(result, e) for e in result.engines},
            "delivery": batteries_delivery_json([result])}


def engine_json(result: BatteryResult, e: EngineResult) -> EngineJson:
    return {"skipped": e.skipped or None, "runs": e.runs, "seconds": round(e.seconds, 3),
            "reached": e.depth or None, "checked": list(e.checked), "note": e.note,
            "verdicts": {inv: e.verdict(inv) for inv in INVARIANT_ROWS
                         if e.verdict(inv) != "-"},
            "judged": {inv: n for inv, n in sorted(e.judged.items()) if n},
            "notJudged": {inv: e.why_not(inv) for inv in e.checked
                          if e.verdict(inv) in ("not judged", "absent")},
            "absent": dict(e.absent),
            "figures": figures_json(e.figures),
            "violations": {inv: {"violation": f.violation, "file": f.file, "size": f.size,
                                 "afterSeconds": round(result.after(f), 3)}
                           for inv, f in e.findings.items()},
            "moreViolations": [{"invariant": f.invariant, "violation": f.violation,
                                "file": f.file, "size": f.size} for f in e.more],
            "inheritedFromKafka": {inv: {"violation": f.violation, "file": f.file,
                                         "label": f.label}
                                   for inv, f in e.inherited.items()}}


def figures_json(figures: Figures) -> FiguresJson:
    """``figures`` as JSON holds them, the empty ones left out."""
    out: FiguresJson = {}
    for name in HISTOGRAMS:
        counts = figures.get(name)
        if counts:
            out[name] = {str(value): n for value, n in counts.items()}
    if figures.get("gap_note"):
        out["gap_note"] = figures["gap_note"]
    if figures.get("cost"):
        out["cost"] = figures["cost"]
    return out


def _asked(results: list[BatteryResult], budget: float | None) -> float:
    return budget if budget is not None else max((r.budget for r in results), default=0.0)


def check_json(text: str, offers: list[Offer], results: list[BatteryResult],
               budget: float | None = None) -> CheckJson:
    """Every assignor's battery as data, with the assignors the target does not support."""
    by_label = iter(results)
    assignors: dict[str, AssignorJson] = {}
    for offer in offers:
        assignors[offer.label] = ({"supported": False, "error": offer.error}
                                  if not offer.supported else
                                  {"supported": True, **battery_json(next(by_label))})
    short = shortfall(results, _asked(results, budget))
    return {"target": text, "ok": not any(r.failed for r in results),
            "seconds": round(max((r.seconds for r in results), default=0.0), 3),
            "assignors": assignors, "delivery": batteries_delivery_json(results),
            "notJudgedAtDepth": None if short is None else {
                "invariants": list(short.invariants), "budget": short.budget,
                "reaching": None if math.isinf(short.reaching) else short.reaching,
                "line": short.line()}}
