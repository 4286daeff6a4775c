"""Run the bounded model checker: deepen one step at a time, confirm every trace on an
implementation, report "no counterexample up to depth K" or the shortest trace.

A trace is the protocol's (any leader allowed by the codecs); whether a given
implementation's leader makes the same choices is checked by replaying the trace's events
on it (``confirm``). When a replay does not show the same invariant, that event sequence is
excluded at this depth and the solver is asked again (``refuted`` counts them); the result
keeps the first trace that replays.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

from .bmc import BmcScope, CodecMix, Encoding, invariants_for
from .bmc_trace import Trace, TraceRecord, read_trace
from .event_shrink import invariant_of

__all__ = ["BmcRecord", "BmcResult", "Confirm", "check"]

Confirm = Callable[[Trace], list[str]]
MAX_REFINEMENTS = 12


class BmcRecord(TypedDict):
    """A BMC result as ``prove --bmc --json`` and the matrix write it."""

    protocol: str
    scope: str
    depth: int
    holds: bool
    verdict: str
    seconds: float
    solver_calls: int
    trace: TraceRecord | None
    confirmed: bool
    unconfirmed: list[TraceRecord]


@dataclass
class BmcResult:
    protocol: str
    scope: BmcScope
    depth: int
    trace: Trace | None = None
    confirmed: bool = False  # the trace replayed on the implementation
    unconfirmed: list[Trace] = field(default_factory=list)  # traces that did not replay
    seconds: float = 0.0
    solver_calls: int = 0
    depth_reached: int = 0

    @property
    def holds(self) -> bool:
        """No counterexample in the model up to the depth."""
        return self.trace is None and not self.unconfirmed

    def verdict(self) -> str:
        if self.holds:
            return f"no counterexample up to depth {self.depth}"
        if self.trace is not None:
            state = "replayed" if self.confirmed else "not replayed (no target)"
            return f"{self.trace.invariant} at depth {len(self.trace.steps)} ({state})"
        return (f"{len(self.unconfirmed)} model trace(s), none reproduced by the target, "
                f"up to depth {self.depth}")

    def to_dict(self) -> BmcRecord:
        return {"protocol": self.protocol, "scope": self.scope.text(), "depth": self.depth,
                "holds": self.holds, "verdict": self.verdict(),
                "seconds": round(self.seconds, 3), "solver_calls": self.solver_calls,
                "trace": self.trace.to_dict() if self.trace else None,
                "confirmed": self.confirmed,
                "unconfirmed": [t.to_dict() for t in self.unconfirmed]}


def check(scope: BmcScope, protocol: str, mix: CodecMix, depth: int,
          confirm: Confirm | None = None, invariants: tuple[str, ...] | None = None,
          max_refinements: int = MAX_REFINEMENTS, first: bool = True,
          missed_syncs: bool = True,
          on_depth: Callable[[int], None] | None = None) -> BmcResult:
    """Iterative deepening up to ``depth``: the first (shortest) counterexample of any of
    ``invariants`` (default: all that apply to the protocol) wins.

    With a subset, a trace breaks a wanted invariant *first*: the other invariants hold
    before its last step and in that step's first rebalance unless a wanted one breaks
    there too (a replay stops at the first violation, so only such a trace can show the
    wanted one). ``first=False`` drops that condition (for a model-only search).
    ``on_depth`` is told each depth searched."""
    wanted = [i for i in invariants_for(protocol) if invariants is None or i in invariants]
    others = [i for i in invariants_for(protocol) if i not in wanted] if first else []
    started = time.perf_counter()
    enc = Encoding(scope, protocol, mix, missed_syncs)
    result = BmcResult(protocol, scope, depth)
    z3 = enc.z3
    for k in range(1, depth + 1):
        step = enc.add_step()
        result.depth_reached = k
        enc.solver.push()
        enc.solver.add(z3.Or([step.bad[i] for i in wanted]))
        first_wanted = z3.Or([step.first.bad[i] for i in wanted])
        for j in others:
            enc.solver.add(z3.Implies(step.first.bad[j], first_wanted))
        found = _search_depth(enc, k, confirm, max_refinements, result, wanted)
        enc.solver.pop()
        if on_depth is not None:
            on_depth(k)
        if found:
            break
        for j in others:
            enc.solver.add(z3.Not(step.bad[j]))
    result.seconds = time.perf_counter() - started
    return result


def _search_depth(enc: Encoding, k: int, confirm: Confirm | None, max_refinements: int,
                  result: BmcResult, wanted: list[str]) -> bool:
    for _ in range(max_refinements):
        result.solver_calls += 1
        if enc.solver.check() != enc.z3.sat:
            return False
        trace = read_trace(enc, k, wanted)
        if confirm is None:
            result.trace = trace
            return True
        trace.replayed = confirm(trace)
        if any(invariant_of(v) == trace.invariant for v in trace.replayed):
            result.trace, result.confirmed = trace, True
            return True
        result.unconfirmed.append(trace)
        enc.block(k)
    return False
