"""What ``groupcheck check`` prints: one invariant × engine table per assignor with a summary
line each, or the same as one JSON object (``--json``)."""

from __future__ import annotations

from typing import Any

from ..targets.offers import Offer
from .battery_results import INVARIANT_ROWS, BatteryResult, EngineResult

__all__ = ["battery_json", "check_json", "check_text", "engine_json"]


def check_text(text: str, offers: list[Offer], results: list[BatteryResult]) -> str:
    """One table per assignor, the assignors not supported, and a summary line each."""
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
        summary.append(f"  {offer.label:<20} {verdict}")
    out = "\n\n".join(parts) + "\n\n" + "\n".join(summary)
    failing = [(r, r.first()) for r in results if r.first() is not None]
    if failing:
        r, first = failing[0]
        assert first is not None  # failing holds the results with a first finding only
        engine, finding = first
        out += (f"\n\nfirst counterexample ({r.assignor}, {engine.engine}):\n"
                f"{finding.detail}")
    return out


def battery_json(result: BatteryResult) -> dict[str, Any]:
    return {"target": result.target, "assignor": result.assignor, "ok": not result.failed,
            "balance": result.balance, "profile": result.profile or None,
            "seconds": round(result.seconds, 3),
            "engines": {e.engine: engine_json(result, e) for e in result.engines}}


def engine_json(result: BatteryResult, e: EngineResult) -> dict[str, Any]:
    return {"skipped": e.skipped or None, "runs": e.runs, "seconds": round(e.seconds, 3),
            "checked": list(e.checked), "note": e.note,
            "verdicts": {inv: e.verdict(inv) for inv in INVARIANT_ROWS
                         if e.verdict(inv) != "-"},
            "judged": {inv: n for inv, n in sorted(e.judged.items()) if n},
            "notJudged": {inv: e.why_not(inv) for inv in e.checked
                          if e.verdict(inv) in ("not judged", "absent")},
            "absent": dict(e.absent),
            "figures": {k: ({str(x): n for x, n in v.items()} if isinstance(v, dict) else v)
                        for k, v in e.figures.items() if v},
            "violations": {inv: {"violation": f.violation, "file": f.file, "size": f.size,
                                 "afterSeconds": round(result.after(f), 3)}
                           for inv, f in e.findings.items()},
            "moreViolations": [{"invariant": f.invariant, "violation": f.violation,
                                "file": f.file, "size": f.size} for f in e.more],
            "inheritedFromKafka": {inv: {"violation": f.violation, "file": f.file,
                                         "label": f.label}
                                   for inv, f in e.inherited.items()}}


def check_json(text: str, offers: list[Offer], results: list[BatteryResult]) -> dict[str, Any]:
    """Every assignor's battery as data, with the assignors the target does not support."""
    by_label = iter(results)
    assignors: dict[str, Any] = {}
    for offer in offers:
        assignors[offer.label] = ({"supported": False, "error": offer.error}
                                  if not offer.supported else
                                  {"supported": True, **battery_json(next(by_label))})
    return {"target": text, "ok": not any(r.failed for r in results),
            "seconds": round(max((r.seconds for r in results), default=0.0), 3),
            "assignors": assignors}
