"""The delivery line of ``check``, ``upgrade`` and ``matrix``: over every story judged for
delivery (I17), whether it held and the widest duplicate window of each commit style.

A duplicate window is a run of records handed again after a partition changed owner; its
width is how many records it re-delivered. A style seen with no window reads 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..properties.delivery import DeliveryVerdict

__all__ = ["delivery_line"]

#: what a window of a member whose style is not known is listed under
UNKNOWN_STYLE = "style unknown"


def delivery_line(verdicts: Sequence[DeliveryVerdict], styles: Iterable[str] = ()) -> str | None:
    """``delivery: held; duplicate window ≤ 3 records (auto), 0 (sync)``; None when no story
    was judged for delivery. ``styles``: the commit styles the stories' members took (a
    style without a window still shows, at 0)."""
    if not verdicts:
        return None
    widest = dict.fromkeys(styles, 0)
    for verdict in verdicts:
        for w in verdict.duplicates:
            style = w.style or UNKNOWN_STYLE
            widest[style] = max(widest.get(style, 0), w.length)
    windows = ", ".join(f"{n} ({s})" for s, n in widest.items())
    said = _verdict(verdicts)
    return (f"delivery: {said}; duplicate window ≤ {windows.replace(' (', ' records (', 1)}"
            if windows else f"delivery: {said}")


def _verdict(verdicts: Sequence[DeliveryVerdict]) -> str:
    """``held in N stories``, or how many broke and the rules they broke."""
    broken = [v for v in verdicts if v.violations]
    if not broken:
        return f"held in {_stories(len(verdicts))}"
    rules: dict[str, int] = {}
    for verdict in broken:
        for breach in verdict.violations:
            rules[breach.rule] = rules.get(breach.rule, 0) + 1
    said = ", ".join(f"{rule} ×{n}" for rule, n in rules.items())
    return f"broken in {len(broken)} of {_stories(len(verdicts))} ({said})"


def _stories(count: int) -> str:
    return f"{count} stor{'y' if count == 1 else 'ies'}"
