"""The delivery line of ``check``, ``upgrade`` and ``matrix``, and its ``--json`` form
(`delivery_json`): over every story judged for delivery (I17), whether it held and the widest
duplicate window of each commit style.

A duplicate window is a run of records handed again after a partition changed owner; its
width is how many records it re-delivered. A style seen with no window reads 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypedDict

from ..properties.delivery import DeliveryVerdict

__all__ = ["DeliveryJson", "delivery_json", "delivery_line"]


class DeliveryJson(TypedDict):
    """The delivery verdict as data: how many stories were judged and broke, each rule's
    breaches, the widest duplicate window (records) per commit style, and the line."""

    stories: int
    broken: int
    rules: dict[str, int]
    windows: dict[str, int]
    line: str

#: what a window of a member whose style is not known is listed under
UNKNOWN_STYLE = "style unknown"


def delivery_line(verdicts: Sequence[DeliveryVerdict], styles: Iterable[str] = ()) -> str | None:
    """``delivery: held; duplicate window ≤ 3 records (auto), 0 (sync)``; None when no story
    was judged for delivery. ``styles``: the commit styles the stories' members took (a
    style without a window still shows, at 0)."""
    if not verdicts:
        return None
    windows = ", ".join(f"{n} ({s})" for s, n in _widest(verdicts, styles).items())
    said = _verdict(verdicts)
    return (f"delivery: {said}; duplicate window ≤ {windows.replace(' (', ' records (', 1)}"
            if windows else f"delivery: {said}")


def delivery_json(verdicts: Sequence[DeliveryVerdict],
                  styles: Iterable[str] = ()) -> DeliveryJson | None:
    """`delivery_line`'s verdict as data (None: no story was judged for delivery)."""
    styles = list(styles)
    line = delivery_line(verdicts, styles)
    if line is None:
        return None
    return {"stories": len(verdicts), "broken": sum(1 for v in verdicts if v.violations),
            "rules": _rules(verdicts), "windows": _widest(verdicts, styles), "line": line}


def _widest(verdicts: Sequence[DeliveryVerdict], styles: Iterable[str]) -> dict[str, int]:
    """The widest duplicate window of each commit style (0 for a style with none)."""
    widest = dict.fromkeys(styles, 0)
    for verdict in verdicts:
        for w in verdict.duplicates:
            style = w.style or UNKNOWN_STYLE
            widest[style] = max(widest.get(style, 0), w.length)
    return widest


def _rules(verdicts: Sequence[DeliveryVerdict]) -> dict[str, int]:
    """How many breaches of each rule the stories made."""
    rules: dict[str, int] = {}
    for verdict in verdicts:
        for breach in verdict.violations:
            rules[breach.rule] = rules.get(breach.rule, 0) + 1
    return rules


def _verdict(verdicts: Sequence[DeliveryVerdict]) -> str:
    """``held in N stories``, or how many broke and the rules they broke."""
    broken = [v for v in verdicts if v.violations]
    if not broken:
        return f"held in {_stories(len(verdicts))}"
    said = ", ".join(f"{rule} ×{n}" for rule, n in _rules(broken).items())
    return f"broken in {len(broken)} of {_stories(len(verdicts))} ({said})"


def _stories(count: int) -> str:
    return f"{count} stor{'y' if count == 1 else 'ies'}"
