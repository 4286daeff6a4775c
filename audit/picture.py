"""Counterexamples as pictures: an ownership timeline drawn as inline SVG.

Partitions run down, time runs across, and each cell names the partition's owner in the
owner's colour. Two kinds of pictures share one drawing (`Timeline`, `svg`):

* an audit story (`chain_timeline`, from a ``groupcheck-audit-chain/1`` record): the first
  column is what members claim when the story starts, then one column per assign call,
  each rebalance followed by its cooperative follow-ups (``R2`` then ``R2·1``, ``R2·2``…);
* a state-machine replay (`events_timeline`): one column per event, the ownership each
  member's own state shows after it.

A partition nobody holds is *unowned* (grey, a dash). A partition nobody is given while
its previous owner still holds it (a cooperative assignor withholding it until it is
revoked) is *withheld*: hatched, with the owner that must give it up in brackets. A cell
held by two members is drawn red. The violation is highlighted: its column's header is red
(with the rest of its rebalance for I11, whose follow-ups are the flap), and the cells of
the partitions its message names get a heavy red frame. Large stories keep the partitions
the violation names and those whose owner ever changes, up to `MAX_ROWS`.

The SVG is self-contained (no script, no external asset, a hatch pattern in its own
``<defs>``), so it can be inlined into the audit's HTML report or any page.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..model.events import DomainEvent
from ..properties.group import GroupView

__all__ = ["MAX_ROWS", "PALETTE", "OwnershipCell", "Timeline", "TopicPartition", "chain_timeline",
           "events_timeline", "html_page", "named_partitions", "svg"]

MAX_ROWS = 80
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7",
           "#9c755f", "#8cd17d", "#86bcb6", "#d37295", "#a0cbe8", "#ffbe7d", "#bab0ac")
_CELL_W, _CELL_H, _LABEL_W, _HEAD_H = 46, 18, 56, 40
_LEGEND_MEMBERS = 16
_FRAME_LABEL = "named by the violation"
_TP = re.compile(r"\b([A-Za-z0-9_.]+)-(\d+)\b")
_LIST = re.compile(r"\b([A-Za-z0-9_.]+) partitions ((?:\d+(?:, )?)+)")

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class OwnershipCell:
    owners: tuple[str, ...] = ()
    withheld_from: tuple[str, ...] = ()  # previous holders of a partition nobody got
    assigned: tuple[str, ...] = ()  # state machine: given by the leader, not yet taken

    @property
    def kind(self) -> str:
        if len(self.owners) > 1 or (not self.owners and len(self.assigned) > 1):
            return "double"
        if self.owners:
            return "owned"
        if self.assigned:
            return "assigned"
        return "withheld" if self.withheld_from else "unowned"

    def names(self) -> tuple[str, ...]:
        return self.owners or self.assigned


@dataclass
class Timeline:
    title: str
    violation: str
    columns: list[tuple[str, str]]  # (label, second line)
    rows: list[TopicPartition]
    cells: dict[tuple[TopicPartition, int], OwnershipCell]
    bad_column: int | None = None
    bad_span: tuple[int, int] | None = None  # columns of the violating rebalance
    bad_rows: set[TopicPartition] = field(default_factory=set)
    hidden: int = 0  # partitions left out (one owner throughout)
    separators: bool = False  # a line before each rebalance (audit stories)

    def members(self) -> list[str]:
        seen: dict[str, None] = {}
        for c in range(len(self.columns)):
            for tp in self.rows:
                cell = self.cells.get((tp, c), OwnershipCell())
                seen.update(dict.fromkeys(cell.owners + cell.assigned + cell.withheld_from))
        return list(seen)


def named_partitions(text: str) -> set[TopicPartition]:
    """The partitions a violation message names (``t0-3``; ``t1 partitions 2, 5``)."""
    found = {(t, int(p)) for t, p in _TP.findall(text)}
    for topic, numbers in _LIST.findall(text):
        found |= {(topic, int(p)) for p in numbers.replace(" ", "").split(",") if p}
    return found


def _pairs(parts: Iterable[Sequence[Any]]) -> list[TopicPartition]:
    return [(str(t), int(p)) for t, p in parts]


def _claims(request: Mapping[str, Any]) -> dict[TopicPartition, list[str]]:
    out: dict[TopicPartition, list[str]] = {}
    for m, v in request.get("members", {}).items():
        for tp in _pairs(v.get("owned") or []):
            out.setdefault(tp, []).append(m)
    return out


def _column(request: Mapping[str, Any], response: Mapping[str, Any],
            rows: Iterable[TopicPartition]) -> dict[TopicPartition, OwnershipCell]:
    claims = _claims(request)
    owners: dict[TopicPartition, list[str]] = {}
    for m, parts in (response.get("assignment") or {}).items():
        for tp in _pairs(parts):
            owners.setdefault(tp, []).append(m)
    return {tp: OwnershipCell(tuple(owners.get(tp, ())),
                     () if tp in owners else tuple(claims.get(tp, ()))) for tp in rows}


def _rows_of(requests: Sequence[Mapping[str, Any]]) -> list[TopicPartition]:
    rows: dict[TopicPartition, None] = {}
    for r in requests:
        for t, n in r.get("partitions", {}).items():
            rows.update(dict.fromkeys((t, p) for p in range(int(n))))
    return sorted(rows, key=lambda tp: (_natural(tp[0]), tp[1]))


def _natural(name: str) -> tuple[Any, ...]:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


def chain_timeline(record: Mapping[str, Any]) -> Timeline:
    """The timeline of an audit chain record (see the module docstring)."""
    requests = list(record.get("requests") or [])
    responses = list(record.get("responses") or [])
    follow_ups = list(record.get("follow_ups") or [0] * len(requests))
    rows = _rows_of(requests)
    cells: dict[tuple[TopicPartition, int], OwnershipCell] = {}
    columns = [("claims", "at start")]
    start = _claims(requests[0]) if requests else {}
    for tp in rows:
        cells[(tp, 0)] = OwnershipCell(tuple(start.get(tp, ())))
    rebalance = 0
    starts: list[int] = []
    for i, (request, response) in enumerate(zip(requests, responses, strict=False)):
        if follow_ups[i] == 0:
            rebalance += 1
            starts.append(i + 1)
        gen = response.get("generation", request.get("newGeneration", ""))
        label = f"R{rebalance}" + (f"·{follow_ups[i]}" if follow_ups[i] else "")
        columns.append((label, f"gen {gen}" if "error" not in response else "error"))
        for tp, cell in _column(request, response, rows).items():
            cells[(tp, i + 1)] = cell
    invariant = str(record.get("invariant", ""))
    violation = next((v for v in record.get("violations") or []
                      if v.split(":", 1)[0].rstrip("ab") == invariant),
                     (record.get("violations") or [""])[0])
    at = (record.get("violated_at") or {}).get(invariant, len(requests) - 1)
    timeline = Timeline(f"{record.get('target', '')}: seed {record.get('seed')}, scenario "
                        f"{record.get('scenario')}", violation, columns, rows, cells,
                        bad_column=int(at) + 1 if requests else None,
                        bad_rows=named_partitions(violation), separators=True)
    if invariant == "I11" and timeline.bad_column is not None:
        first = max([s for s in starts if s <= timeline.bad_column], default=1)
        timeline.bad_span = (first, timeline.bad_column)
    return _trim(timeline)


def events_timeline(title: str, events: Sequence[DomainEvent], views: Sequence[GroupView | None],
                    violations: Sequence[str]) -> Timeline:
    """The timeline of a state-machine replay: ``views`` are the `GroupView`s after each
    event (None where the event showed none)."""
    rows: dict[TopicPartition, None] = {}
    for view in views:
        if view is not None:
            for t, n in view.partitions.items():
                rows.update(dict.fromkeys((t, p) for p in range(n)))
    ordered = sorted(rows, key=lambda tp: (_natural(tp[0]), tp[1]))
    cells: dict[tuple[TopicPartition, int], OwnershipCell] = {}
    columns: list[tuple[str, str]] = []
    withheld: dict[TopicPartition, tuple[str, ...]] = {}
    for i, (event, view) in enumerate(zip(events, views, strict=False)):
        columns.append((f"{i + 1}", event.label()))
        if view is None:
            continue
        assigned: dict[TopicPartition, list[str]] = {}
        for record in view.rebalances:  # what the latest assignor runs gave and left out
            assigned = {}
            for m, parts in record.assignment.items():
                for tp in parts:
                    assigned.setdefault(tp, []).append(m)
            withheld = {tp: tuple(m for m, c in record.claims.items() if tp in c.owned)
                        for tp in ordered if tp not in assigned}
        owners: dict[TopicPartition, list[str]] = {}
        for name, member in sorted(view.members.items()):
            for tp in member.owned:
                owners.setdefault(tp, []).append(name)
        for tp in ordered:
            held = tuple(owners.get(tp, ()))
            cells[(tp, i)] = OwnershipCell(held, () if held else withheld.get(tp, ()),
                                  () if held else tuple(assigned.get(tp, ())))
    violation = violations[0] if violations else ""
    bad = len(columns) - 1 if violations and columns else None
    return _trim(Timeline(title, violation, columns, ordered, cells, bad_column=bad,
                          bad_rows=named_partitions(violation)))


def _trim(timeline: Timeline) -> Timeline:
    """Keep at most `MAX_ROWS` partitions: those the violation names, then those whose
    cell ever changes or is not plainly owned."""
    if len(timeline.rows) <= MAX_ROWS:
        return timeline
    n = len(timeline.columns)

    def busy(tp: TopicPartition) -> bool:
        cells = [timeline.cells.get((tp, c), OwnershipCell()) for c in range(1, n)]
        return len(set(cells)) > 1 or any(c.kind != "owned" for c in cells)

    keep = [tp for tp in timeline.rows if tp in timeline.bad_rows]
    keep += [tp for tp in timeline.rows if tp not in timeline.bad_rows and busy(tp)]
    kept = set(keep[:MAX_ROWS])
    timeline.hidden = len(timeline.rows) - len(kept)
    timeline.rows = [tp for tp in timeline.rows if tp in kept]
    return timeline


# ---------------------------------------------------------------------------------------
# drawing


def _text(x: float, y: float, text: str, size: int = 11, **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}"{extra}>'
            f"{html.escape(text)}</text>")


def _wrap(text: str, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line] if line else lines


def _cell_svg(x: float, y: float, cell: OwnershipCell, colour: Mapping[str, str]) -> str:
    kind = cell.kind
    w, h = _CELL_W - 2, _CELL_H - 2
    if kind == "owned":
        fill, label, style = colour[cell.owners[0]], cell.owners[0], {}
    elif kind == "assigned":
        fill, label = colour[cell.assigned[0]], cell.assigned[0]
        style = {"font_style": "italic"}
        return (f'<rect x="{x + 1:g}" y="{y + 1:g}" width="{w}" height="{h}" fill="{fill}" '
                f'fill-opacity="0.35" stroke="{fill}" stroke-dasharray="2 2"/>'
                + _text(x + _CELL_W / 2, y + _CELL_H - 5, label, 10, text_anchor="middle",
                        **style))
    elif kind == "double":
        fill, label, style = "#d62728", "+".join(cell.names()), {"font_weight": "bold"}
    elif kind == "withheld":
        fill, label = "url(#withheld)", "(" + ",".join(cell.withheld_from) + ")"
        style = {"font_style": "italic", "fill": "#444"}
    else:
        fill, label, style = "#e8e8e8", "–", {"fill": "#888"}
    return (f'<rect x="{x + 1:g}" y="{y + 1:g}" width="{w}" height="{h}" fill="{fill}" '
            f'stroke="#fff"/>'
            + _text(x + _CELL_W / 2, y + _CELL_H - 5, label, 10, text_anchor="middle", **style))


def svg(timeline: Timeline) -> str:
    """The timeline as one self-contained ``<svg>`` element."""
    members = timeline.members()
    colour = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(members)}
    head = _wrap(timeline.violation, 110)
    top = 22 + 15 * len(head) + 6
    grid_w = _LABEL_W + _CELL_W * len(timeline.columns)
    rows_h = _CELL_H * len(timeline.rows)
    legend_y = top + _HEAD_H + rows_h + 18
    width = max(grid_w + 10, min(len(members), _LEGEND_MEMBERS) * _CELL_W + 90,
                _legend_width(timeline))
    height = legend_y + 44 + (14 if timeline.hidden else 0)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img">',
           "<defs><pattern id='withheld' width='6' height='6' patternUnits='userSpaceOnUse' "
           "patternTransform='rotate(45)'><rect width='6' height='6' fill='#fff'/>"
           "<line x1='0' y1='0' x2='0' y2='6' stroke='#999' stroke-width='3'/></pattern>"
           "</defs>",
           f'<rect width="{width}" height="{height}" fill="#fff"/>',
           _text(4, 16, timeline.title, 13, font_weight="bold")]
    out += [_text(4, 32 + 15 * i, line, 12, fill="#b00") for i, line in enumerate(head)]
    out += _header(timeline, top)
    for r, tp in enumerate(timeline.rows):
        y = top + _HEAD_H + r * _CELL_H
        out.append(_text(_LABEL_W - 4, y + _CELL_H - 5, f"{tp[0]}-{tp[1]}", 10,
                         text_anchor="end"))
        for c in range(len(timeline.columns)):
            cell = timeline.cells.get((tp, c), OwnershipCell())
            out.append(_cell_svg(_LABEL_W + c * _CELL_W, y, cell, colour))
    out += _highlights(timeline, top)
    out += _legend(timeline, members, colour, legend_y)
    out.append("</svg>")
    return "\n".join(out)


def _header(timeline: Timeline, top: int) -> list[str]:
    out = []
    for c, (label, sub) in enumerate(timeline.columns):
        x = _LABEL_W + c * _CELL_W
        bad = c == timeline.bad_column or (timeline.bad_span is not None
                                           and timeline.bad_span[0] <= c <= timeline.bad_span[1])
        if bad:
            out.append(f'<rect x="{x:g}" y="{top:g}" width="{_CELL_W}" height="{_HEAD_H - 4}" '
                       'fill="#fdd"/>')
        out.append(_text(x + _CELL_W / 2, top + 14, label, 11, text_anchor="middle",
                         font_weight="bold", fill="#b00" if bad else "#000"))
        out.append(_text(x + _CELL_W / 2, top + 29, sub, 9, text_anchor="middle", fill="#555"))
        if c and timeline.separators and "·" not in label:  # a new rebalance starts here
            out.append(f'<line x1="{x:g}" y1="{top:g}" x2="{x:g}" '
                       f'y2="{top + _HEAD_H + _CELL_H * len(timeline.rows)}" stroke="#333" '
                       'stroke-width="1"/>')
    return out


def _highlights(timeline: Timeline, top: int) -> list[str]:
    c = timeline.bad_column
    if c is None:
        return []
    x = _LABEL_W + c * _CELL_W
    out = [f'<rect x="{x:g}" y="{top + _HEAD_H:g}" width="{_CELL_W}" '
           f'height="{_CELL_H * len(timeline.rows)}" fill="none" stroke="#b00" '
           'stroke-width="1.5" stroke-dasharray="4 2"/>']
    for r, tp in enumerate(timeline.rows):
        if tp in timeline.bad_rows:
            y = top + _HEAD_H + r * _CELL_H
            out.append(f'<rect x="{x + 1:g}" y="{y + 1:g}" width="{_CELL_W - 2}" '
                       f'height="{_CELL_H - 2}" fill="none" stroke="#b00" stroke-width="3"/>')
    return out


def _marks(timeline: Timeline) -> list[tuple[str, OwnershipCell]]:
    marks = [("withheld: its owner must revoke it, nobody gets it", OwnershipCell((), ("c",))),
             ("unowned", OwnershipCell()), ("two owners", OwnershipCell(("a", "b")))]
    first = next((c for c in timeline.cells.values() if c.kind == "assigned"), None)
    if first is not None:
        marks.insert(2, ("assigned, not yet taken", first))
    return marks


def _legend_width(timeline: Timeline) -> int:
    marks = sum(_CELL_W + 14 + 4.9 * len(label) for label, _ in _marks(timeline))
    return int(marks + _CELL_W + 8 + 4.9 * len(_FRAME_LABEL)) + 10


def _legend(timeline: Timeline, members: list[str], colour: Mapping[str, str],
            y: int) -> list[str]:
    """Members in their colours, then the marks."""
    out = [_cell_svg(4 + i * _CELL_W, y, OwnershipCell((m,)), colour)
           for i, m in enumerate(members[:_LEGEND_MEMBERS])]
    if len(members) > _LEGEND_MEMBERS:
        out.append(_text(8 + _LEGEND_MEMBERS * _CELL_W, y + _CELL_H - 5,
                         f"and {len(members) - _LEGEND_MEMBERS} more", 10))
    y += 22
    x = 4.0
    for label, cell in _marks(timeline):
        out.append(_cell_svg(x, y, cell, colour))
        out.append(_text(x + _CELL_W + 4, y + _CELL_H - 5, label, 10))
        x += _CELL_W + 14 + 4.9 * len(label)
    out.append(f'<rect x="{x + 1:g}" y="{y + 1}" width="{_CELL_W - 2}" height="{_CELL_H - 2}" '
               'fill="none" stroke="#b00" stroke-width="3"/>')
    out.append(_text(x + _CELL_W + 4, y + _CELL_H - 5, _FRAME_LABEL, 10))
    if timeline.hidden:
        out.append(_text(4, y + 36, f"{timeline.hidden} partition(s) with one owner "
                                    "throughout not shown", 10, fill="#555"))
    return out


def html_page(title: str, pictures: Sequence[str], text: str = "") -> str:
    """A page with the pictures inline and an optional plain-text story below them."""
    body = "".join(f"<figure>{p}</figure>" for p in pictures)
    story = f"<pre>{html.escape(text)}</pre>" if text else ""
    return ("<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;"
            "margin:1.5em}figure{margin:0 0 1.5em 0}pre{font-size:12px}</style></head>"
            f"<body><h1>{html.escape(title)}</h1>{body}{story}</body></html>\n")
