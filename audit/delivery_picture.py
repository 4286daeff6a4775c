"""Delivery as a picture: each partition's offsets, coloured by the member each record was
handed to, across the rebalances of a story, drawn as inline SVG.

One row per partition, one cell per offset from the partition's log start to its high
watermark (or the last offset handed). A cell takes the colour of the member a poll handed
the record to; a record handed more than once is striped in the colours of every member it
went to, in order, and framed (a duplicate); an offset below the high watermark that nobody
was handed is hatched and framed red (a gap). A small triangle marks the first record of each
tenure (a member's new ownership of the partition), so the owners' turns show along the row.

The drawing reads a `properties.delivery.DeliveryLog`, the cumulative log of a story's last
view.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..properties.delivery import DeliveryLog, Handed, Tenure, TopicPartition
from .picture import PALETTE

__all__ = ["MAX_OFFSETS", "DeliveryRow", "delivery_rows", "delivery_svg"]

MAX_OFFSETS = 120
_CELL_W, _CELL_H, _LABEL_W, _HEAD_H = 24, 18, 56, 22
_GAP, _DUPLICATE, _TENURE = "#d62728", "#222", "#000"


@dataclass(frozen=True)
class DeliveryRow:
    """One partition's row: the offsets drawn (``first`` up to ``end``, exclusive), the
    members each offset was handed to in order, the offsets that start a tenure, and the
    offsets left out past `MAX_OFFSETS`."""

    partition: TopicPartition
    first: int
    end: int
    high_watermark: int | None
    handed_to: Mapping[int, tuple[str, ...]]
    tenure_starts: frozenset[int]
    hidden: int = 0

    def gaps(self) -> list[int]:
        """Offsets below the high watermark nobody was handed."""
        top = self.end if self.high_watermark is None else min(self.end, self.high_watermark)
        return [o for o in range(self.first, top) if o not in self.handed_to]

    def duplicates(self) -> list[int]:
        """Offsets handed more than once."""
        return sorted(o for o, who in self.handed_to.items() if len(who) > 1)


def delivery_rows(log: DeliveryLog) -> list[DeliveryRow]:
    """The rows of the picture, partitions in name order."""
    handed: dict[TopicPartition, list[Handed]] = {}
    for h in sorted(log.handed, key=lambda h: h.ts):
        handed.setdefault((h.topic, h.partition), []).append(h)
    parts = set(handed) | set(log.high_watermarks) | {(t.topic, t.partition)
                                                     for t in log.tenures}
    return [_row(tp, handed.get(tp, []), log) for tp in sorted(parts)]


def _row(tp: TopicPartition, handed: list[Handed], log: DeliveryLog) -> DeliveryRow:
    to: dict[int, tuple[str, ...]] = {}
    for h in handed:
        to[h.offset] = (*to.get(h.offset, ()), h.member)
    first = log.start_of(tp)
    watermark = log.high_watermarks.get(tp)
    end = max([watermark or first, *(o + 1 for o in to)])
    shown = min(end, first + MAX_OFFSETS)
    starts = frozenset(_tenure_starts(tp, handed, log.tenures))
    return DeliveryRow(tp, first, shown, watermark, to, starts, hidden=end - shown)


def _tenure_starts(tp: TopicPartition, handed: list[Handed],
                   tenures: Iterable[Tenure]) -> Iterable[int]:
    """The offset of each tenure's first record (``handed`` is in time order)."""
    for t in tenures:
        if (t.topic, t.partition) != tp:
            continue
        first = next((h for h in handed if h.member == t.member and t.covers(h.ts)), None)
        if first is not None:
            yield first.offset


def _text(x: float, y: float, text: str, size: int = 10, **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:g}" y="{y:g}" font-size="{size}"{extra}>{html.escape(text)}</text>'


def _cell(x: float, y: float, who: tuple[str, ...], gap: bool,
          colour: Mapping[str, str]) -> list[str]:
    w, h = _CELL_W - 2, _CELL_H - 2
    if not who:
        fill = "url(#gap)" if gap else "#f2f2f2"
        out = [f'<rect x="{x + 1:g}" y="{y + 1:g}" width="{w}" height="{h}" fill="{fill}"/>']
        if gap:
            out.append(f'<rect class="gap" x="{x + 1.5:g}" y="{y + 1.5:g}" width="{w - 1}" '
                       f'height="{h - 1}" fill="none" stroke="{_GAP}" stroke-width="1.5"/>')
        return out
    stripe = h / len(who)
    out = [f'<rect x="{x + 1:g}" y="{y + 1 + i * stripe:g}" width="{w}" height="{stripe:g}" '
           f'fill="{colour[m]}"/>' for i, m in enumerate(who)]
    if len(who) > 1:
        out.append(f'<rect class="duplicate" x="{x + 1.5:g}" y="{y + 1.5:g}" width="{w - 1}" '
                   f'height="{h - 1}" fill="none" stroke="{_DUPLICATE}" stroke-width="2"/>')
        label = f"×{len(who)}"
    else:
        label = who[0]
    return [*out, _text(x + _CELL_W / 2, y + _CELL_H - 5, label, 9, text_anchor="middle",
                        fill="#fff" if len(who) == 1 else "#000")]


def _tenure_mark(x: float, y: float) -> str:
    return (f'<path class="tenure" d="M{x + 1:g} {y + 1:g} h6 l-6 6 z" fill="{_TENURE}"/>')


def _grid(rows: list[DeliveryRow], colour: Mapping[str, str], top: int) -> list[str]:
    out: list[str] = []
    low = min((r.first for r in rows), default=0)
    width = max((r.end - low for r in rows), default=0)
    for c in range(0, width, 5):
        out.append(_text(_LABEL_W + c * _CELL_W + _CELL_W / 2, top + 14, str(low + c), 9,
                         text_anchor="middle", fill="#555"))
    for i, row in enumerate(rows):
        y = top + _HEAD_H + i * _CELL_H
        out.append(_text(_LABEL_W - 4, y + _CELL_H - 5, f"{row.partition[0]}-{row.partition[1]}",
                         10, text_anchor="end"))
        gaps = set(row.gaps())
        for offset in range(row.first, row.end):
            x = _LABEL_W + (offset - low) * _CELL_W
            out += _cell(x, y, row.handed_to.get(offset, ()), offset in gaps, colour)
            if offset in row.tenure_starts:
                out.append(_tenure_mark(x, y))
        if row.hidden:
            out.append(_text(_LABEL_W + (row.end - low) * _CELL_W + 4, y + _CELL_H - 5,
                             f"… {row.hidden} more", 9, fill="#555"))
    return out


def _legend(members: list[str], colour: Mapping[str, str], y: int) -> list[str]:
    out: list[str] = []
    x = 4.0
    for m in members:
        out += _cell(x, y, (m,), False, colour)
        x += _CELL_W + 2
    x += 12
    marks = [("handed again (duplicate)", (members[0],) * 2)] if members else []
    for label, who in [*marks, ("never handed (gap)", ())]:
        out += _cell(x, y, who, True, colour)
        out.append(_text(x + _CELL_W + 4, y + _CELL_H - 5, label, 10))
        x += _CELL_W + 14 + 5.2 * len(label)
    out.append(_tenure_mark(x, y))
    out.append(_text(x + 12, y + _CELL_H - 5, "a tenure's first record", 10))
    return out


def delivery_svg(log: DeliveryLog, title: str = "delivery: each record by the member it was "
                 "handed to") -> str:
    """The log's partitions as one self-contained ``<svg>`` element."""
    rows = delivery_rows(log)
    members = list(dict.fromkeys(h.member for h in sorted(log.handed, key=lambda h: h.ts)))
    colour = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(members)}
    low = min((r.first for r in rows), default=0)
    span = max((r.end - low for r in rows), default=0)
    top = 26
    legend_y = top + _HEAD_H + _CELL_H * len(rows) + 14
    width = max(_LABEL_W + span * _CELL_W + 90, len(members) * (_CELL_W + 2) + 560)
    height = legend_y + _CELL_H + 8
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img">',
        "<defs><pattern id='gap' width='6' height='6' patternUnits='userSpaceOnUse' "
        "patternTransform='rotate(45)'><rect width='6' height='6' fill='#fff'/>"
        f"<line x1='0' y1='0' x2='0' y2='6' stroke='{_GAP}' stroke-width='2'/></pattern></defs>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        _text(4, 16, title, 13, font_weight="bold"),
        *_grid(rows, colour, top), *_legend(members, colour, legend_y), "</svg>"])
