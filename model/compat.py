"""The compatibility matrix: which mixes of codec versions in one group keep I1, I5 and I6.

Each cell is one `CodecMix` (what every member may speak, and what at least one member
speaks) under one protocol; every invariant that applies to the protocol is checked on its
own by the bounded model checker (`bmc_check`), so a cell says per invariant "proved up to
depth K" or "refuted" with the shortest trace (which the caller replays on an
implementation). Eager groups run the sticky assignor, cooperative groups
cooperative-sticky; I5 and I6 are cooperative rules (KIP-429, KIP-792).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from ..properties.invariants import judged_by
from .bmc import BmcScope, CodecMix, invariants_for
from .bmc_check import BmcRecord, BmcResult, Confirm, check
from .bmc_trace import TraceRecord

__all__ = ["CELLS", "CompatCell", "CellResult", "Matrix", "compatibility_matrix"]

COLUMNS = judged_by("bmc")
ALL_SUBSCRIPTIONS = ("subscription_version", (0, 1, 2, 3))


class InvariantRecord(BmcRecord):
    """One invariant of a cell: its BMC result, the cell's mark, and the trace that breaks
    it after another invariant broke first (None: none)."""

    mark: str
    after_another: TraceRecord | None
    #: the replay file of the trace (``prove --matrix`` fills it in where it saves one)
    replay_file: str | None


class CellRecord(TypedDict):
    protocol: str
    codecs: str
    every: dict[str, list[int]]
    some_member: dict[str, list[int]]
    exactly_one: bool
    invariants: dict[str, InvariantRecord]


class MatrixRecord(TypedDict):
    """The matrix as ``prove --matrix`` writes it (``groupcheck-compat/1``)."""

    format: str
    scope: str
    depth: int
    seconds: float
    cells: list[CellRecord]
    #: the command that made it (``prove --matrix`` adds it)
    command: NotRequired[str]


@dataclass(frozen=True)
class CompatCell:
    protocol: str
    label: str
    mix: CodecMix


def _mix(every: dict[str, tuple[int, ...]], some: dict[str, tuple[int, ...]] | None = None,
         exactly: bool = False) -> CodecMix:
    return CodecMix(tuple(every.items()), tuple((some or {}).items()), exactly)


CELLS: tuple[CompatCell, ...] = (
    CompatCell("EAGER", "every member on sticky user data v1 (KIP-341)",
         _mix({"user_data_version": (1,)})),
    CompatCell("EAGER", "any member on sticky user data v0, the rest on v0 or v1",
         _mix({}, {"user_data_version": (0,)})),
    CompatCell("EAGER", "one member on sticky user data v0, the others on v1",
         _mix({}, {"user_data_version": (0,)}, exactly=True)),
    CompatCell("EAGER", "every member on sticky user data v0 (pre-KIP-341)",
         _mix({"user_data_version": (0,)})),
    CompatCell("COOPERATIVE", "every member on subscription v2+ (generation in the subscription)",
         _mix({"subscription_version": (2, 3)})),
    CompatCell("COOPERATIVE", "every member on subscription v1 with cooperative user data",
         _mix({"subscription_version": (1,), "cooperative_user_data": (1,)})),
    CompatCell("COOPERATIVE", "members on v1 + user data and on v2+, mixed",
         _mix({"subscription_version": (1, 2, 3), "cooperative_user_data": (1,)},
              {"subscription_version": (1,)})),
    CompatCell("COOPERATIVE", "any member on subscription v1 without user data (no generation)",
         _mix({"subscription_version": (1, 2, 3)},
              {"subscription_version": (1,), "cooperative_user_data": (0,)})),
    CompatCell("COOPERATIVE", "any member on subscription v0 (no owned partitions)",
         _mix({}, {"subscription_version": (0,)})),
)


@dataclass
class CellResult:
    """Per invariant: the search for a trace on which it breaks first (replayed), and, when
    there is none, ``masked``: a model trace on which it breaks after another one."""

    cell: CompatCell
    results: dict[str, BmcResult]
    masked: dict[str, BmcResult] = field(default_factory=dict)

    def mark(self, invariant: str) -> str:
        result = self.results.get(invariant)
        if result is None:
            return "n/a"
        late = self.masked.get(invariant)
        if result.holds and late is not None and late.trace is not None:
            return f"after other@{len(late.trace.steps)}"
        if result.holds:
            return f"proved ≤{result.depth}"
        if result.trace is not None:
            state = "" if result.confirmed else " (model)"
            return f"REFUTED@{len(result.trace.steps)}{state}"
        return "unconfirmed"


@dataclass
class Matrix:
    scope: BmcScope
    depth: int
    cells: list[CellResult]
    seconds: float

    def table(self) -> str:
        width = max(len(c.cell.label) for c in self.cells)
        head = f"{'protocol':<12} {'codec versions in the group':<{width}}  " + \
            "  ".join(f"{c:<11}" for c in COLUMNS)
        lines = [head, "-" * len(head)]
        for c in self.cells:
            lines.append(f"{c.cell.protocol.lower():<12} {c.cell.label:<{width}}  " +
                         "  ".join(f"{c.mark(i):<11}" for i in COLUMNS))
        lines.append(f"scope {self.scope.text()}, depth {self.depth}, "
                     f"{self.seconds:.1f}s")
        return "\n".join(line.rstrip() for line in lines)

    def traces(self) -> list[tuple[CellResult, str, BmcResult]]:
        return [(c, i, r) for c in self.cells for i, r in c.results.items()
                if r.trace is not None]

    def to_dict(self) -> MatrixRecord:
        return {"format": "groupcheck-compat/1", "scope": self.scope.text(),
                "depth": self.depth, "seconds": round(self.seconds, 3),
                "cells": [{"protocol": c.cell.protocol, "codecs": c.cell.label,
                           "every": {k: list(v) for k, v in c.cell.mix.every},
                           "some_member": {k: list(v) for k, v in c.cell.mix.some},
                           "exactly_one": c.cell.mix.exactly,
                           "invariants": {i: {**r.to_dict(), "mark": c.mark(i),
                                              "after_another": _late(c, i),
                                              "replay_file": None}
                                          for i, r in c.results.items()}}
                          for c in self.cells]}


def _late(cell: CellResult, invariant: str) -> TraceRecord | None:
    late = cell.masked.get(invariant)
    return late.trace.to_dict() if late is not None and late.trace is not None else None


def compatibility_matrix(scope: BmcScope, depth: int,
                         confirm_for: Callable[[str], Confirm | None],
                         cells: tuple[CompatCell, ...] = CELLS,
                         on_cell: Callable[[int, str], None] | None = None) -> Matrix:
    """Every cell × invariant; ``confirm_for(protocol)`` replays traces on an implementation;
    ``on_cell`` is told the cells done and the last one's label."""
    started = time.perf_counter()
    out: list[CellResult] = []
    for cell in cells:
        confirm = confirm_for(cell.protocol)
        results = {i: check(scope, cell.protocol, cell.mix, depth, confirm, invariants=(i,))
                   for i in invariants_for(cell.protocol)}
        masked = {i: check(scope, cell.protocol, cell.mix, depth, None, invariants=(i,),
                           first=False)
                  for i, r in results.items() if r.holds and len(results) > 1}
        out.append(CellResult(cell, results, masked))
        if on_cell is not None:
            on_cell(len(out), cell.label)
    return Matrix(scope, depth, out, time.perf_counter() - started)
