"""The audit report's plots as self-contained SVG (no plotting library to install).

Two kinds, both written as standalone ``.svg`` files that ``index.html`` shows:

* `line_chart`: one line per target over categorical x values (the group-size buckets),
  a linear axis from 0 or a log axis over powers of ten, a legend under the plot;
* `heatmap`: a square matrix of shares in [0, 1], white to red, each cell labelled.

Coordinates are computed here and rounded to one decimal; text is escaped. The colours are
the ownership pictures' palette (``picture.PALETTE``), so a target keeps one colour.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

from .picture import PALETTE

__all__ = ["heatmap", "line_chart"]

_WIDTH, _HEIGHT = 640, 360
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 20, 36, 60
_FONT = "font-family='sans-serif' font-size='11'"


def _ticks(top: float, log: bool, low: float) -> list[float]:
    """Axis ticks: powers of ten from ``low`` (log), else about five round steps from 0."""
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(top))
        return [10.0 ** k for k in range(first, max(last, first + 1) + 1)]
    if top <= 0:
        return [0.0, 1.0]
    raw = top / 5
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 5, 10) if m * step >= raw)
    return [step * i for i in range(int(math.ceil(top / step)) + 1)]


def _label(value: float) -> str:
    return f"{value:g}" if value < 1e5 else f"{value:.0e}"


def line_chart(title: str, x_label: str, y_label: str, xs: Sequence[str],
               series: Mapping[str, Sequence[tuple[str, float]]], log: bool = False) -> str:
    """One line per ``series`` entry (name → (x, y) points; x one of ``xs``)."""
    e = html.escape
    values = [y for points in series.values() for _, y in points if not log or y > 0]
    low = min(values, default=1.0) if log else 0.0
    ticks = _ticks(max(values, default=1.0), log, low if low > 0 else 1.0)
    lo, hi = ticks[0], ticks[-1]
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    legend_h = 16 * ((len(series) + 2) // 3)

    def px(x: str) -> float:
        return _LEFT + plot_w * (xs.index(x) + 0.5) / max(1, len(xs))

    def py(y: float) -> float:
        if log:
            share = (math.log10(y) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        else:
            share = (y - lo) / ((hi - lo) or 1)
        return _TOP + plot_h * (1 - share)

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' "
           f"height='{_HEIGHT + legend_h}' {_FONT}>",
           "<rect width='100%' height='100%' fill='white'/>",
           f"<text x='{_WIDTH / 2}' y='20' text-anchor='middle' font-size='13'>{e(title)}</text>"]
    for t in ticks:
        y = py(t)
        out.append(f"<line x1='{_LEFT}' x2='{_WIDTH - _RIGHT}' y1='{y:.1f}' y2='{y:.1f}' "
                   "stroke='#ddd'/>")
        out.append(f"<text x='{_LEFT - 6}' y='{y + 4:.1f}' text-anchor='end'>"
                   f"{_label(t)}</text>")
    for x in xs:
        out.append(f"<text x='{px(x):.1f}' y='{_TOP + plot_h + 16}' text-anchor='middle'>"
                   f"{e(x)}</text>")
    out.append(f"<text x='{_LEFT + plot_w / 2}' y='{_TOP + plot_h + 36}' "
               f"text-anchor='middle'>{e(x_label)}</text>")
    out.append(f"<text transform='translate(16 {_TOP + plot_h / 2}) rotate(-90)' "
               f"text-anchor='middle'>{e(y_label)}</text>")
    out.append(f"<rect x='{_LEFT}' y='{_TOP}' width='{plot_w}' height='{plot_h}' fill='none' "
               "stroke='#888'/>")
    for i, (name, points) in enumerate(series.items()):
        colour = PALETTE[i % len(PALETTE)]
        shown = [(px(x), py(y)) for x, y in points if x in xs and (not log or y > 0)]
        if shown:
            path = " ".join(f"{a:.1f},{b:.1f}" for a, b in shown)
            out.append(f"<polyline points='{path}' fill='none' stroke='{colour}' "
                       "stroke-width='2'/>")
            out.extend(f"<circle cx='{a:.1f}' cy='{b:.1f}' r='3' fill='{colour}'/>"
                       for a, b in shown)
        lx = _LEFT + (i % 3) * (plot_w / 3)
        ly = _HEIGHT - 6 + 16 * (i // 3)
        out.append(f"<rect x='{lx:.1f}' y='{ly - 9}' width='12' height='10' "
                   f"fill='{colour}'/><text x='{lx + 16:.1f}' y='{ly}'>{e(name)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def heatmap(title: str, labels: Sequence[str], matrix: Sequence[Sequence[float]]) -> str:
    """Shares in [0, 1] (row = ``labels[i]``, column = ``labels[j]``), white to red."""
    e = html.escape
    cell, left, top = 64, 170, 40
    n = len(labels)
    width, height = left + cell * n + 20, top + cell * n + 150
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
           f"{_FONT}>", "<rect width='100%' height='100%' fill='white'/>",
           f"<text x='{width / 2}' y='20' text-anchor='middle' font-size='13'>{e(title)}"
           "</text>"]
    x: float  # a cell's corner, then a label's centre
    for i, row in enumerate(matrix):
        out.append(f"<text x='{left - 6}' y='{top + cell * i + cell / 2 + 4}' "
                   f"text-anchor='end'>{e(labels[i])}</text>")
        for j, share in enumerate(row):
            level = max(0.0, min(1.0, share))
            fill = f"rgb(255,{round(255 * (1 - level))},{round(255 * (1 - level))})"
            x, y = left + cell * j, top + cell * i
            out.append(f"<rect x='{x}' y='{y}' width='{cell}' height='{cell}' fill='{fill}' "
                       f"stroke='#ccc'/><text x='{x + cell / 2}' y='{y + cell / 2 + 4}' "
                       f"text-anchor='middle'>{share:.2f}</text>")
    for j, name in enumerate(labels):
        x, y = left + cell * j + cell / 2, top + cell * n + 8
        out.append(f"<text transform='translate({x} {y}) rotate(40)'>{e(name)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
