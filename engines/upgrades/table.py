"""The certification table: a list of (from, to) upgrades, every path of each played, and the
table on the terminal, as ``upgrades.json`` and as ``index.html``.

A pair list is a text file, one upgrade a line: ``FROM TO`` (two wire targets, see
`plan.parse_side`; ``->`` between them may be written), ``#`` starts a comment.
``default`` names the list shipped with groupcheck (`DEFAULT_PAIRS`, beside this module):
each client's releases across a major line, eager to cooperative within each client that has
it (and back), and a mixed-client upgrade. A release that cannot run here is a row whose
verdict is "unavailable" with the one line that says why; the rest of the table still runs.

Columns: client, from (release and assignors), to, path, verdict, and for each bounce the
rebalances and the seconds to settle (the slowest restart of the bounce), then the finding.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from ...audit.report_html import CSS
from ...properties.saved_json import steady_text, without_times
from ...targets.settings import Settings
from ..delivery_line import delivery_line
from ..errors import EngineInputError
from ..progress import ProgressFn, silent
from .plan import Plan, Side, parse_side, plans_for
from .play import (
    UNSUPPORTED,
    ReleaseSaid,
    UpgradeOutcome,
    UpgradeRow,
    UpgradeUnavailable,
    client_family,
    distinct,
    play,
)

__all__ = ["DEFAULT_PAIRS", "UpgradeTable", "read_pairs", "run_table", "run_upgrade",
           "table_html", "table_json", "table_text", "write_table"]

DEFAULT_PAIRS = Path(__file__).with_name("pairs.txt")


@dataclass
class UpgradeTable:
    outcomes: list[UpgradeOutcome] = field(default_factory=list)
    seconds: float = 0.0
    members: int = 4
    seed: int = 0

    @property
    def failed(self) -> bool:
        """A prescribed path failed (a failing one-bounce shortcut is only reported)."""
        return any(o.verdict == "fails" and o.plan.primary for o in self.outcomes)


def read_pairs(name: str) -> list[tuple[Side, Side]]:
    """The pairs of a list file (``default``: the shipped list); `EngineInputError` with the
    file and line of anything malformed."""
    path = DEFAULT_PAIRS if name == "default" else Path(name)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EngineInputError(f"upgrade: cannot read the pair list {name}: {exc}") from None
    pairs: list[tuple[Side, Side]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        words = [w for w in raw.split("#", 1)[0].split() if w != "->"]
        if not words:
            continue
        if len(words) != 2:
            raise EngineInputError(f"upgrade: {path}:{number}: expected FROM TO (two wire "
                                   f"targets), found {len(words)} field(s)")
        try:
            pairs.append((parse_side(words[0]), parse_side(words[1])))
        except EngineInputError as exc:
            raise EngineInputError(f"{path}:{number}: {exc}") from None
    if not pairs:
        raise EngineInputError(f"upgrade: the pair list {path} names no upgrade")
    return pairs


def run_table(pairs: list[tuple[Side, Side]], settings: Settings, *, members: int = 4,
              seed: int = 0, faults: float = 0.3, shrink_seconds: float = 120.0,
              failures: Path | None = None, strict: bool = False,
              progress: ProgressFn = silent) -> UpgradeTable:
    """Every path of every pair, one after another (a wire group wants the machine).
    ``strict``: a release that cannot run here, or lacks an assignor a prescribed path asks
    of it, is bad input (`EngineInputError`, one line) instead of a row."""
    table = UpgradeTable(members=members, seed=seed)
    for source, dest in pairs:
        for plan in plans_for(source, dest):
            try:
                outcome = play(plan, settings, members=members, seed=seed, faults=faults,
                               shrink_seconds=shrink_seconds, failures=failures,
                               progress=progress)
            except UpgradeUnavailable as exc:
                if strict:
                    raise EngineInputError(str(exc)) from None
                outcome = UpgradeOutcome(plan, "unavailable", str(exc), members)
            if strict and plan.primary and outcome.verdict == UNSUPPORTED:
                raise EngineInputError(f"upgrade: {outcome.reason}: {UNSUPPORTED}")
            table.outcomes.append(outcome)
            table.seconds += outcome.seconds
    return table


def run_upgrade(source: Side, dest: Side, settings: Settings, **options: Any) -> UpgradeTable:
    """One upgrade on every path it has, strictly (see `run_table`)."""
    return run_table([(source, dest)], settings, strict=True, **options)


def _release(side: Side) -> str:
    return f"{side.client.partition('@')[2] or '(installed)'} [{','.join(side.assignors)}]"


def row_cells(o: UpgradeOutcome) -> list[str]:
    """client, from, to, path, verdict, per-bounce figures, finding."""
    p: Plan = o.plan
    verdict = o.verdict if p.primary or o.verdict != "fails" else "fails (shortcut)"
    figures = " | ".join(f"b{b.bounce}: {b.rebalances} reb, {b.slowest_settle:.1f}s"
                         for b in o.bounces if b.bounce > 0) or "-"
    source = p.source.label() if "@" not in p.source.client else _release(p.source)
    dest = p.dest.label() if "@" not in p.dest.client else _release(p.dest)
    return [client_family(p.source.client, p.dest.client), source, dest, p.path, verdict,
            figures, Path(o.replay).name if o.replay else "-"]


HEAD = ["client", "from", "to", "path", "verdict", "per bounce: rebalances, settle", "finding"]


def table_text(table: UpgradeTable) -> str:
    """The table, then each failure's reason, then a verdict line."""
    rows = [HEAD] + [row_cells(o) for o in table.outcomes]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEAD) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1]
             for r in rows]
    for o in table.outcomes:
        if o.verdict != "certified":
            lines.append(f"{o.plan.source.target} → {o.plan.dest.target} ({o.plan.path}): "
                         f"{o.verdict}: {o.reason}")
    lines += clients_lines(table)
    delivered = delivery_line([v for o in table.outcomes for v in o.delivery],
                              [s for o in table.outcomes for s in o.commit_styles])
    if delivered is not None:
        lines.append(delivered)
    counts = {v: sum(1 for o in table.outcomes if o.verdict == v) for v in
              dict.fromkeys(o.verdict for o in table.outcomes)}
    lines.append(f"{len(table.outcomes)} path(s) in {table.seconds:.0f}s: " +
                 ", ".join(f"{n} {v}" for v, n in counts.items()))
    return "\n".join(lines)


def clients_lines(table: UpgradeTable) -> list[str]:
    """What each release said it is when asked: client, version, profile."""
    seen: dict[str, ReleaseSaid] = {}
    for o in table.outcomes:
        seen.update(o.clients)
    return [f"{name}: {c['client']} {c['version']}, profile {c['profile']}"
            for name, c in seen.items()]


class TableJson(TypedDict):
    """The certification table's JSON file (``groupcheck-upgrades/1``)."""

    format: str
    members: int
    seed: int
    seconds: float
    rows: list[UpgradeRow]


def table_json(table: UpgradeTable) -> TableJson:
    return {"format": "groupcheck-upgrades/1", "members": table.members, "seed": table.seed,
            "seconds": round(table.seconds, 1),
            "rows": [o.to_json() for o in table.outcomes]}


_CLASS = {"certified": "ok", "fails": "bad", "fails (shortcut)": "kafka",
          UNSUPPORTED: "na", "unavailable": "na"}


def table_html(table: UpgradeTable) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in HEAD)
    rows = []
    for o in table.outcomes:
        cells = row_cells(o)
        tds = "".join(f"<td>{e(c)}</td>" for c in cells[:4])
        tds += f"<td class='{_CLASS.get(cells[4], 'na')}'>{e(cells[4])}</td>"
        tds += f"<td>{e(cells[5])}</td><td>{e(cells[6])}</td>"
        rows.append(f"<tr title='{e(o.reason)}'>{tds}</tr>")
    details = []
    for o in table.outcomes:
        if o.verdict in ("fails", UNSUPPORTED, "unavailable"):
            story = "\n".join(distinct(o.story)[-30:])
            details.append(f"<h3>{e(o.plan.source.target)} → {e(o.plan.dest.target)} "
                           f"({e(o.plan.path)}): {e(o.verdict)}</h3><p>{e(o.reason)}</p>"
                           + (f"<p>replay file: <code>{e(o.replay)}</code></p>"
                              if o.replay else "")
                           + (f"<pre>{e(story)}</pre>" if story else ""))
    return ("<!doctype html><html><head><meta charset='utf-8'><title>groupcheck upgrades"
            f"</title><style>{CSS}</style></head><body><h1>Rolling upgrades</h1>"
            f"<p>{len(table.outcomes)} path(s), {table.members} members, seed {table.seed}, "
            f"{table.seconds:.0f}s on groupcheck's broker.</p>"
            f"<p>{'<br>'.join(e(line) for line in clients_lines(table))}</p>"
            f"<table><tr>{head}</tr>{''.join(rows)}</table>{''.join(details)}</body></html>")


def write_table(table: UpgradeTable, out: Path) -> tuple[Path, Path]:
    """``upgrades.json`` and ``index.html`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "upgrades.json"
    data.write_text(steady_text(without_times(table_json(table))),
                    encoding="utf-8")
    page = out / "index.html"
    page.write_text(table_html(table), encoding="utf-8")
    return data, page
