"""A prove run whose deadline has come ends, with its pool of workers: the pool is fed no
task past the deadline and its queued ones are drained (cut), so leaving it never waits on a
task feeder blocked on a pipe that no worker reads (the default run once hung there, in
test_battery_depth's portfolio with a budget of 0). The hang is a race the old code lost now
and then, so this test guards against it (a hang fails it) more than it reproduces it."""

from __future__ import annotations

import threading
import time

import pytest

from groupcheck.impl.assign_op import run_assign
from groupcheck.properties.scope.prover import prove
from groupcheck.properties.scope.space import Scope

#: a scope of many units of work: far more than a pipe holds queued
WIDE = "members=3,topics=2,partitions=3,generations=3,claims=3"


@pytest.mark.parametrize("late_s", [0.0, 0.05])
def test_a_run_past_its_deadline_ends_with_its_pool(late_s: float) -> None:
    ended: list[float] = []

    def run() -> None:
        report = prove(run_assign, "cooperative-sticky", Scope.parse(WIDE), workers=2,
                       deadline=time.perf_counter() + late_s)
        ended.append(report.seconds)

    for _ in range(5):
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(60)
        assert not thread.is_alive(), "prove did not end after its deadline"
    assert len(ended) == 5 and all(seconds < 30 for seconds in ended)
