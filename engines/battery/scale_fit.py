"""What lives here: the scale engine's power-law fit with its error, and the assign call
bounded by the engine's share.

`fit_power` fits time ≈ c·n^k by least squares on logarithms; `Fit.spread` is the range of
the exponent between consecutive steps, and `Fit.extrapolate` the range of one call's
seconds at a size from that spread, anchored at the largest step. `bounded_call` runs one
call in a forked child and stops it at its bound: a call that alone outlasts the engine's
share is itself a data point (its time is more than the bound).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ...properties.harness import HarnessError
from ...properties.jsonl_shapes import AssignAnswer, AssignFn, AssignRequest

__all__ = ["FIT_FLOOR", "CutCall", "Fit", "bounded_call", "fit_power"]

FIT_FLOOR = 0.002  # seconds: steps faster than this are mostly fixed overhead


@dataclass(frozen=True)
class Fit:
    """time ≈ c·n^k over ``points`` steps; ``low``/``high``: the least and greatest slope
    between consecutive steps (the exponent's spread), ``last``: the largest (n, seconds)."""

    k: float
    c: float
    points: int
    low: float = math.nan
    high: float = math.nan
    last: tuple[float, float] = (0.0, 0.0)

    def seconds(self, n: float) -> float:
        return float(self.c * n ** self.k)

    def size_at(self, seconds: float) -> float:
        """The size at which one call takes ``seconds`` (inf when the cost does not grow)."""
        if self.k <= 0.05:
            return math.inf
        return float((seconds / self.c) ** (1.0 / self.k))

    def extrapolate(self, n: float) -> tuple[float, float, float]:
        """(least, fitted, greatest) seconds of one call at ``n``: the fit, and the largest
        step grown at the least and the greatest exponent of the spread."""
        fitted = self.seconds(n)
        if math.isnan(self.low) or not self.last[0]:
            return fitted, fitted, fitted
        size, took = self.last
        ends = [max(took, 1e-9) * (n / size) ** k for k in (self.low, self.high)]
        return min(ends + [fitted]), fitted, max(ends + [fitted])


def fit_power(points: Sequence[tuple[float, float]], floor: float = FIT_FLOOR) -> Fit | None:
    """Least squares of log(seconds) on log(n) over the (n, seconds) ``points``; those
    under ``floor`` seconds only when fewer than three others remain (then the three
    largest). None without two distinct sizes."""
    usable = sorted((n, max(s, 1e-9)) for n, s in points if n > 0)
    above = [p for p in usable if p[1] >= floor]
    chosen = above if len(above) >= 3 else usable[-3:]
    if len({n for n, _ in chosen}) < 2:
        return None
    xs = [math.log(n) for n, _ in chosen]
    ys = [math.log(s) for _, s in chosen]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs)
    slopes = [(y1 - y0) / (x1 - x0) for (x0, y0), (x1, y1)
              in zip(zip(xs, ys, strict=True), zip(xs[1:], ys[1:], strict=True), strict=False)
              if x1 > x0]
    return Fit(k, math.exp(my - k * mx), len(chosen), min(slopes + [k]), max(slopes + [k]),
               chosen[-1])


class CutCall(TimeoutError):
    """A `bounded_call` stopped at its bound; ``cpu``: the seconds of CPU the call had used
    (a lower bound of its work that a loaded machine's waiting does not inflate)."""

    def __init__(self, bound: float, cpu: float) -> None:
        super().__init__(f"no answer within {bound:.3g} s (the engine's share; {cpu:.3g} s of "
                         "CPU): cut")
        self.cpu = cpu


def _cpu_seconds(pid: int) -> float:
    """The CPU seconds (user and system) process ``pid`` has used, from /proc (0 where
    there is none)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child(assign: AssignFn, request: AssignRequest, out: object) -> None:
    """In the forked child: the call, its seconds and its answer (or the exception) sent back."""
    began = time.perf_counter()
    try:
        answer: AssignAnswer | BaseException = assign(request)
    except Exception as exc:  # noqa: BLE001 - the parent raises it again
        answer = exc
    out.send((time.perf_counter() - began, answer))  # type: ignore[attr-defined]


def bounded_call(assign: AssignFn, request: AssignRequest, bound: float
                 ) -> tuple[float, AssignAnswer]:
    """One call in a forked child, its own seconds and answer; `CutCall` when it has not
    answered within ``bound`` seconds (the child is killed). An exception the call raised
    is raised here."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(assign, request, send), daemon=True)
    child.start()
    send.close()
    try:
        if not receive.poll(max(bound, 0.0)):
            raise CutCall(bound, _cpu_seconds(child.pid or 0))
        try:
            seconds, answer = receive.recv()
        except EOFError:  # the child died before it could answer: not the target's fault
            raise HarnessError("the scale engine's bounded call lost its child process"
                               ) from None
    finally:
        child.kill()
        child.join()
        receive.close()
    if isinstance(answer, BaseException):
        raise answer
    return float(seconds), answer
