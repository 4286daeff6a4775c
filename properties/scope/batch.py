"""Many configurations judged over a batch assign function (`judge_many`), for targets that
answer best with many requests in flight (a process: ``jsonl:``, ``java:``).

The configurations are taken in waves of `WAVE`. A wave's first-round requests go to the
target in one batch, and each answer is judged as it comes back, in request order; the
cooperative follow-ups those answers call for go in the next batch, until every judgement
of the wave is done. Each judgement reads only its own answers, so the judgements, and the
order they are handed back in (the configurations' order), are those of `judgement.judge`
calling the target one request at a time: results and first counterexamples do not depend
on the batching.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from ..jsonl_shapes import AssignAnswer, AssignRequest
from ..optimal import Optimiser
from .judgement import Judgement, Judging, called, judge, judging
from .space import AssignFn, Config

__all__ = ["WAVE", "AssignManyFn", "judge_many", "judged"]

#: configurations judged together, at most (their requests are not all in flight at once:
#: the target's window bounds that)
WAVE = 1024
#: a batch assign function: requests in (taken as it has room for them), each one's answer
#: or the exception that ended it out, in request order; it only reads the requests (the
#: prover's share their member entries)
AssignManyFn = Callable[[Iterable[AssignRequest]], Iterator[AssignAnswer | Exception]]


def judge_many(assign_many: AssignManyFn, assignor: str, configs: Iterable[Config],
               optimiser: Optimiser | None, sticky: bool, wave: int = WAVE
               ) -> Iterator[tuple[Config, Judgement]]:
    """Each configuration with its judgement, in the configurations' order (see the
    module doc)."""
    source = iter(configs)
    while chunk := list(islice(source, wave)):
        yield from zip(chunk, _judge_wave(assign_many, assignor, chunk, optimiser, sticky),
                       strict=True)


def judged(assign: AssignFn, assign_many: AssignManyFn | None, assignor: str,
           configs: Iterable[Config], optimiser: Optimiser | None, sticky: bool
           ) -> Iterator[tuple[Config, Judgement]]:
    """Each configuration with its judgement: in batches over ``assign_many`` when there is
    one, else one `judgement.judge` call each over ``assign``."""
    if assign_many is not None:
        return judge_many(assign_many, assignor, configs, optimiser, sticky)
    return ((c, judge(assign, assignor, c, optimiser, sticky)) for c in configs)


def _judge_wave(assign_many: AssignManyFn, assignor: str, chunk: list[Config],
                optimiser: Optimiser | None, sticky: bool) -> list[Judgement]:
    done: list[Judgement | None] = [None] * len(chunk)
    steps: list[Judging] = [judging(assignor, c, optimiser, sticky, shared=True)
                            for c in chunk]
    asks = [(i, next(step)[0]) for i, step in enumerate(steps)]
    while asks:
        follow_ups: list[tuple[int, AssignRequest]] = []
        started = time.perf_counter()
        answered = 0
        for answered, answer in enumerate(assign_many(r for _, r in asks), 1):
            now = time.perf_counter()
            i = asks[answered - 1][0]
            try:
                follow_ups.append((i, steps[i].send((called(answer), now - started))[0]))
            except StopIteration as stop:
                done[i] = stop.value
            started = time.perf_counter()
        if answered != len(asks):
            raise RuntimeError(f"the batch assign function answered {answered} of "
                               f"{len(asks)} requests")
        asks = follow_ups
    return [j for j in done if j is not None]
