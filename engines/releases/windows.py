"""Windows of a bisection: the maximal runs of versions (in their order) over which a
counterexample is present, absent or n/a, and which present runs are regressions.

A present window is a *regression* when an absent window lies between it and an earlier
present window: the behaviour went away and came back. n/a (a version that could not play
the counterexample) splits windows but is neither a presence nor an absence.

Pure functions over (target, verdict) pairs; `bisection.Bisection` shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

__all__ = ["ABSENT", "NA", "PRESENT", "ReleaseWindow", "WindowJson", "windows", "windows_text"]

PRESENT, ABSENT, NA = "present", "absent", "n/a"


class WindowJson(TypedDict):
    """One window in JSON: its verdict, its first and last version, every version in it,
    whether it is a regression."""

    verdict: str
    first: str
    last: str
    targets: list[str]
    regression: bool


@dataclass(frozen=True)
class ReleaseWindow:
    """A maximal run of consecutive versions with one verdict."""

    verdict: str
    targets: tuple[str, ...]
    regression: bool = False

    @property
    def first(self) -> str:
        return self.targets[0]

    @property
    def last(self) -> str:
        return self.targets[-1]

    def span(self) -> str:
        """``A`` for one version, ``A–B`` for more."""
        return self.first if len(self.targets) == 1 else f"{self.first}–{self.last}"

    def text(self) -> str:
        """``present A``, ``absent A–B``, ``n/a A``, ``back in A–B (regression)``."""
        if self.regression:
            return f"back in {self.span()} (regression)"
        return f"{self.verdict} {self.span()}"

    def to_json(self) -> WindowJson:
        return {"verdict": self.verdict, "first": self.first, "last": self.last,
                "targets": list(self.targets), "regression": self.regression}


def windows(outcomes: Sequence[tuple[str, str]]) -> list[ReleaseWindow]:
    """The windows of (target, verdict) pairs in version order."""
    runs: list[tuple[str, list[str]]] = []
    for target, verdict in outcomes:
        if runs and runs[-1][0] == verdict:
            runs[-1][1].append(target)
        else:
            runs.append((verdict, [target]))
    out: list[ReleaseWindow] = []
    seen_present = gone_since = False
    for verdict, targets in runs:
        back = verdict == PRESENT and seen_present and gone_since
        out.append(ReleaseWindow(verdict, tuple(targets), back))
        if verdict == PRESENT:
            seen_present, gone_since = True, False
        elif verdict == ABSENT and seen_present:
            gone_since = True
    return out


def windows_text(found: Sequence[ReleaseWindow]) -> str:
    """The windows on one line, ``; `` between them (``none`` for no version)."""
    return "; ".join(w.text() for w in found) or "none"

