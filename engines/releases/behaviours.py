"""Distinct behaviours of a matrix's bisections: the counterexamples grouped by what they
break and where (the invariant and each release's verdict), one row per group, releases as
columns, with how many counterexamples fall in it.

A matrix saves many counterexamples of one fault (each cell's prover, fuzz and stories find
their own); over the releases they share a verdict per release, so a few rows tell what
changed between releases and the bisections become the details. A bisection that could not
run (`Bisection.error`) is in no row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from ..battery.results import INVARIANT_ROWS
from .bisection import Bisection
from .windows import windows, windows_text

__all__ = ["Behaviour", "BehaviourJson", "NOT_PLAYED", "behaviours", "behaviours_text",
           "column_label", "release_columns"]

#: a release the counterexample was not played on (another assignor's target)
NOT_PLAYED = "-"


class BehaviourJson(TypedDict):
    """One distinct behaviour in ``matrix.json``: its invariant, a verdict per release (in
    ``releases``' order), its windows, how many counterexamples show it and which."""

    invariant: str | None
    verdicts: list[str]
    windows: str
    regression: bool
    count: int
    assignors: list[str]
    files: list[str]


@dataclass
class Behaviour:
    """One row: the invariant and each release's verdict, and the bisections in it."""

    invariant: str | None
    verdicts: tuple[str, ...]
    columns: tuple[str, ...]
    files: list[str] = field(default_factory=list)
    assignors: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.files)

    def _played(self) -> list[tuple[str, str]]:
        return [(c, v) for c, v in zip(self.columns, self.verdicts, strict=True)
                if v != NOT_PLAYED]

    def windows_text(self) -> str:
        return windows_text(windows(self._played()))

    @property
    def regression(self) -> bool:
        return any(w.regression for w in windows(self._played()))

    def to_json(self) -> BehaviourJson:
        return {"invariant": self.invariant, "verdicts": list(self.verdicts),
                "windows": self.windows_text(), "regression": self.regression,
                "count": self.count, "assignors": self.assignors, "files": self.files}


def release_columns(bisections: Sequence[Bisection]) -> list[str]:
    """Every target some bisection played, in the order they were played."""
    seen: dict[str, None] = {}
    for b in bisections:
        seen.update((o.target, None) for o in b.outcomes)
    return list(seen)


def column_label(target: str) -> str:
    """A release target's column heading: ``java@3.4.0:`` → ``3.4.0``; others as they are."""
    kind, sep, rest = target.partition(":")
    base, at, release = kind.partition("@")
    return release if sep and not rest and base == "java" and at else target


def _order(b: Behaviour) -> tuple[int, int]:
    inv = b.invariant or ""
    return (INVARIANT_ROWS.index(inv) if inv in INVARIANT_ROWS else len(INVARIANT_ROWS),
            -b.count)


def behaviours(bisections: Sequence[Bisection]) -> list[Behaviour]:
    """The distinct behaviours, by invariant (in the invariants' order), then most
    counterexamples first."""
    columns = tuple(release_columns(bisections))
    rows: dict[tuple[str | None, tuple[str, ...]], Behaviour] = {}
    for b in bisections:
        if b.error:
            continue
        played = {o.target: o.verdict for o in b.outcomes}
        verdicts = tuple(played.get(c, NOT_PLAYED) for c in columns)
        row = rows.setdefault((b.invariant, verdicts),
                              Behaviour(b.invariant, verdicts, columns))
        row.files.append(b.file)
        if b.assignor and b.assignor not in row.assignors:
            row.assignors.append(b.assignor)
    return sorted(rows.values(), key=_order)


def behaviours_text(found: Sequence[Behaviour]) -> list[str]:
    """The behaviours as a table: invariant, a verdict per release, count, assignors."""
    if not found:
        return []
    labels = [column_label(c) for c in found[0].columns]
    widths = [max(len(label), 7) for label in labels]
    lines = ["invariant " + " ".join(f"{label:<{w}}" for label, w in zip(labels, widths,
                                                                         strict=True))
             + " count  assignors"]
    for b in found:
        cells = " ".join(f"{v:<{w}}" for v, w in zip(b.verdicts, widths, strict=True))
        regression = "  (regression)" if b.regression else ""
        lines.append(f"{b.invariant or 'any':<9} {cells} {b.count:>5}  "
                     f"{', '.join(b.assignors) or '-'}{regression}")
    return lines
