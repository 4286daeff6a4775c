"""What ``groupcheck matrix`` writes: the distinct behaviours of its bisections (one row per
invariant and verdict per release, `behaviours`), the terminal table (one compact row per
cell, a short verdict per invariant), the bisection lines, ``matrix.json`` and
``index.html``.

The HTML page has the audit report's look (`audit.report_html.CSS`) and draws each failing
cell's smallest counterexample as an ownership timeline (`audit.picture`) where the file is
something the picture code draws without running a target — the prover's rounds, a request
and its answer, an audit story — else it shows the finding's own text in a ``pre`` block.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TypedDict, cast

from ...audit.picture import chain_timeline, svg
from ...audit.report_html import CSS
from ...properties.jsonl_shapes import Answered, AssignRequest
from ...properties.saved_json import steady_text, without_times
from ..battery.results import (
    INVARIANT_ROWS,
    Finding,
    batteries_delivery,
    batteries_delivery_json,
)
from ..delivery_line import DeliveryJson
from .behaviours import (
    Behaviour,
    BehaviourJson,
    behaviours,
    behaviours_text,
    column_label,
    release_columns,
)
from .bisection import Bisection, BisectionJson
from .matrix import Cell, CellJson, MatrixRun
from .windows import windows_text

__all__ = ["columns", "matrix_json", "matrix_text", "smallest", "write_matrix"]

_CLASS = {"VIOLATED": "bad", "ok": "ok", "Kafka's": "kafka", "absent": "na", "n/j": "na",
          "-": "na"}


def columns(cells: list[Cell]) -> list[str]:
    """The invariants some cell has a verdict on."""
    return [inv for inv in INVARIANT_ROWS
            if any(c.verdicts().get(inv, "-") != "-" for c in cells)]


def smallest(cell: Cell) -> Finding | None:
    """The cell's smallest counterexample (fewest members or events, then earliest)."""
    if cell.result is None:
        return None
    found = [f for e in cell.result.engines for f in e.every_finding()]
    return min(found, key=lambda f: (f.size if f.size is not None else 10**9, f.found_at),
               default=None)


def _row_head(cell: Cell, width: int, awidth: int) -> str:
    return f"{cell.target:<{width}} {cell.assignor:<{awidth}} {cell.seconds:>6.1f}s "


def _behaviour_lines(run: MatrixRun) -> list[str]:
    found = behaviours(list(run.bisections.values()))
    if not found:
        return []
    return [f"distinct behaviours over the targets ({sum(b.count for b in found)} "
            f"counterexample(s) in {len(found)} row(s); each one's bisection is below):",
            *behaviours_text(found), ""]


def matrix_text(run: MatrixRun) -> str:
    """The distinct behaviours, the table, each cell's counterexamples with their bisection,
    and a verdict line."""
    cells = run.cells
    invs = columns(cells)
    width = max([6] + [len(c.target) for c in cells])
    awidth = max([8] + [len(c.assignor) for c in cells])
    rwidth = max([7] + [len(c.reached()) for c in cells])
    lines = _behaviour_lines(run)
    lines += [f"{'target':<{width}} {'assignor':<{awidth}} {'secs':>7} "
             + " ".join(f"{inv:<8}" for inv in invs) + f" {'reached':<{rwidth}} cost (members)"]
    for cell in cells:
        if cell.result is None:
            lines.append(_row_head(cell, width, awidth) + f"not supported: {cell.error}")
            continue
        verdicts = cell.verdicts()
        lines.append((_row_head(cell, width, awidth)
                      + " ".join(f"{verdicts[inv]:<8}" for inv in invs)
                      + f" {cell.reached():<{rwidth}} " + cell.cost()).rstrip())
    profiles = _profiles(run)
    if profiles:
        lines += ["", "client profiles:", *(f"  {t}  {p}" for t, p in profiles.items())]
    found = _finding_lines(run)
    if found:
        lines += ["", "counterexamples (bisected over the targets of their assignor):", *found]
    delivered = batteries_delivery([c.result for c in cells if c.result is not None])
    if delivered is not None:
        lines += ["", delivered]
    held = sum(1 for c in cells if c.result is not None and not c.failed)
    bad = sum(1 for c in cells if c.failed)
    lines += ["", f"{len(cells)} cell(s) in {run.seconds:.1f}s (budget {run.budget:g}s a "
                  f"cell, {run.jobs} at a time, seed {run.seed}): {bad} VIOLATED, {held} held, "
                  f"{len(cells) - bad - held} not supported",
              "VIOLATED" if run.failed else "every invariant judged held"]
    return "\n".join(lines)


def _profiles(run: MatrixRun) -> dict[str, str]:
    """Each target's client profile (those that have one), in the table's order."""
    return {c.target: c.result.profile for c in run.cells
            if c.result is not None and c.result.profile}


def _finding_lines(run: MatrixRun) -> list[str]:
    lines: list[str] = []
    for cell in run.cells:
        if cell.result is None:
            continue
        for engine in cell.result.engines:
            for f in engine.every_finding():
                shown = f.violation if len(f.violation) <= 110 else f.violation[:107] + "..."
                lines.append(f"  {cell.target} {cell.assignor} [{engine.engine}] {shown}")
                if f.file:
                    lines.append(f"      {f.file}")
                b = run.bisections.get(f.file or "")
                if b is not None:
                    lines.append(f"      {b.summary()}")
    return lines


class MatrixSeeds(TypedDict):
    battery: int
    fuzz: str
    scenarios: int


class MatrixJson(TypedDict):
    """``matrix --json`` and the run's JSON file: the plan, every cell, the distinct
    behaviours (a verdict per target of ``releases``), every bisection."""

    targets: list[str]
    budget: float
    seed: int
    jobs: int
    seeds: MatrixSeeds
    ok: bool
    invariants: list[str]
    cells: list[CellJson]
    releases: list[str]
    behaviours: list[BehaviourJson]
    bisections: list[BisectionJson]
    delivery: DeliveryJson | None


class PictureRecord(TypedDict, total=False):
    """What the picture code draws of a counterexample: the requests and answers of its
    chain, where it broke and what broke."""

    target: str | None
    requests: list[AssignRequest]
    responses: list[Answered]
    invariant: str
    violations: list[str]
    violated_at: dict[str, int]


def matrix_json(run: MatrixRun, targets: list[str]) -> MatrixJson:
    """``matrix.json`` (and ``matrix --json``'s result): no wall times, which the table
    prints (`properties.saved_json.without_times`)."""
    return cast(MatrixJson, without_times({
        "targets": targets, "budget": run.budget, "seed": run.seed, "jobs": run.jobs,
        "seeds": {"battery": run.seed,
                  "fuzz": "chunks of 20 examples with seeds from the battery seed on "
                          "(each cell's fuzz note says which)",
                  "scenarios": run.seed},
        "ok": not run.failed, "invariants": columns(run.cells),
        "cells": [c.to_json() for c in run.cells],
        "releases": release_columns(list(run.bisections.values())),
        "behaviours": [b.to_json() for b in behaviours(list(run.bisections.values()))],
        "bisections": [b.to_json() for b in run.bisections.values()],
        "delivery": batteries_delivery_json([c.result for c in run.cells
                                             if c.result is not None])}))


def _anchor(cell: Cell) -> str:
    return "cex-" + "".join(ch if ch.isalnum() else "-" for ch in
                            f"{cell.target}-{cell.assignor}")


def _table(run: MatrixRun) -> str:
    e = html.escape
    invs = columns(run.cells)
    rows = ["<tr><th>target</th><th>assignor</th><th>seconds</th>"
            + "".join(f"<th>{e(i)}</th>" for i in invs)
            + "<th>reached</th><th>cost (members)</th><th>counterexample</th></tr>"]
    for cell in run.cells:
        head = (f"<tr><td>{e(cell.target)}</td><td>{e(cell.assignor)}</td>"
                f"<td>{cell.seconds:.1f}</td>")
        if cell.result is None:
            rows.append(head + f"<td colspan='{len(invs) + 3}' class='na'>not supported: "
                               f"{e(cell.error)}</td></tr>")
            continue
        verdicts = cell.verdicts()
        why = cell.to_json()["notJudged"]
        tds = "".join(f"<td class='{_CLASS.get(verdicts[i], 'na')}' "
                      f"title='{e('; '.join(why.get(i, [])), quote=True)}'>"
                      f"{e(verdicts[i])}</td>" for i in invs)
        link = (f"<a href='#{_anchor(cell)}'>smallest</a>" if cell.failed else "")
        rows.append(head + tds + f"<td>{e(cell.reached())}</td><td>{e(cell.cost())}</td>"
                    f"<td>{link}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def _record_of(path: str) -> PictureRecord | None:
    """A chain record the picture code draws (requests, responses, where it broke), from
    an audit story, the prover's rounds, or a request with its answer; else None."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    if data.get("requests") and data.get("responses"):
        # an audit chain file: the picture code reads what it draws (a malformed file
        # fails there, and the finding is shown as text)
        return cast(PictureRecord, data)
    note = data.get("groupcheck")
    if not isinstance(note, dict):
        return None
    request = {k: v for k, v in data.items() if k != "groupcheck"}
    rounds = note.get("rounds")
    pairs: list[tuple[AssignRequest, object]]  # as the file holds them
    if isinstance(rounds, list) and rounds:
        pairs = [(r["request"], r["response"]) for r in rounds]
    else:
        answer = note.get("response") or note.get("got")
        if not isinstance(answer, dict) or "assignment" not in answer:
            return None
        pairs = [(cast(AssignRequest, request), answer)]
    violations = note.get("violations") or [note.get("violation", "")]
    invariant = str(note.get("invariant") or str(violations[0]).split(":")[0])
    return {"target": note.get("target"), "requests": [q for q, _ in pairs],
            "responses": [_answered(r) for _, r in pairs],
            "invariant": invariant, "violations": violations,
            "violated_at": {invariant: int(note.get("round", len(pairs) - 1))}}


def _answered(response: object) -> Answered:
    """A saved answer as the picture code reads it (anything but an object: an error)."""
    return cast(Answered, response) if isinstance(response, dict) else {"error": str(response)}


def _picture(cell: Cell, finding: Finding) -> str:
    e = html.escape
    head = (f"<h3 id='{_anchor(cell)}'>{e(cell.target)} {e(cell.assignor)}: "
            f"{e(finding.violation)}</h3><p>{e(finding.file or '')}</p>")
    record = _record_of(finding.file) if finding.file else None
    if record is not None:
        try:
            body = f"<figure>{svg(chain_timeline(record))}</figure>"
        except (KeyError, TypeError, ValueError, IndexError):
            body = ""
    else:
        body = ""
    if not body:
        body = f"<pre>{e(finding.detail or finding.violation)}</pre>"
    return head + body


_VERDICT_CLASS = {"present": "bad", "absent": "ok"}


def _behaviour_table(found: list[Behaviour]) -> str:
    e = html.escape
    rows = ["<tr><th>invariant</th>"
            + "".join(f"<th>{e(column_label(c))}</th>" for c in found[0].columns)
            + "<th>counterexamples</th><th>assignors</th><th>windows</th></tr>"]
    for b in found:
        tds = "".join(f"<td class='{_VERDICT_CLASS.get(v, 'na')}'>{e(v)}</td>"
                      for v in b.verdicts)
        rows.append(f"<tr><td>{e(b.invariant or 'any')}</td>{tds}<td>{b.count}</td>"
                    f"<td>{e(', '.join(b.assignors))}</td>"
                    f"<td class='{'bad' if b.regression else ''}'>{e(b.windows_text())}</td>"
                    "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _bisection_table(bisections: list[Bisection]) -> str:
    e = html.escape
    rows = ["<tr><th>counterexample</th><th>invariant</th><th>windows</th>"
            "<th>first seen in</th><th>gone in</th></tr>"]
    for b in bisections:
        shown = b.error or windows_text(b.windows)
        rows.append(f"<tr><td>{e(Path(b.file).name)}</td><td>{e(b.invariant or '')}</td>"
                    f"<td class='{'bad' if b.regression else ''}'>{e(shown)}</td>"
                    f"<td>{e(b.first_seen or '-')}</td><td>{e(b.gone_in or '-')}</td></tr>")
    return "<table>" + "".join(rows) + "</table>"


def matrix_html(run: MatrixRun, targets: list[str]) -> str:
    pictures = [_picture(c, f) for c in run.cells if c.failed
                for f in [smallest(c)] if f is not None]
    found = behaviours(list(run.bisections.values()))
    leading = (["<h2>Distinct behaviours</h2><p>The counterexamples grouped by invariant and "
                "verdict per target; each one's bisection is under Bisections.</p>",
                _behaviour_table(found)] if found else [])
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>groupcheck matrix"
             f"</title><style>{CSS}</style></head><body>", "<h1>groupcheck matrix</h1>",
             f"<p>{html.escape(', '.join(targets))}: {len(run.cells)} cell(s), budget "
             f"{run.budget:g}s a cell, seed {run.seed}, {run.seconds:.1f}s in all. "
             "Hover an absent or n/j cell for why it was not judged.</p>",
             "<h2>Client profiles</h2><ul>" + "".join(
                 f"<li>{html.escape(t)}: {html.escape(p)}</li>"
                 for t, p in _profiles(run).items()) + "</ul>",
             f"<p class='{'bad' if run.failed else 'ok'}'>"
             f"{'VIOLATED' if run.failed else 'every invariant judged held'}</p>",
             *leading, "<h2>Cells</h2>", _table(run), "<h2>Bisections</h2>",
             _bisection_table(list(run.bisections.values())) if run.bisections
             else "<p>none</p>",
             "<h2>Smallest counterexample of each failing cell</h2>", *pictures,
             "</body></html>"]
    return "\n".join(parts) + "\n"


def write_matrix(run: MatrixRun, targets: list[str], out: Path) -> tuple[Path, Path]:
    """``matrix.json`` and ``index.html`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "matrix.json"
    data.write_text(steady_text(matrix_json(run, targets)), encoding="utf-8")
    page = out / "index.html"
    page.write_text(matrix_html(run, targets), encoding="utf-8")
    return data, page
