"""Breadth goes where it finds: after every minimum, ``check`` spends what is left in slices,
each to the (engine, assignor) pair that turned up the most new shapes per second; a pair
that found a violation takes no more; the state machine's minimum comes before any slice."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from groupcheck.engines.battery.depth import MIN_EXAMPLES
from groupcheck.engines.battery.prove import PORTFOLIO
from groupcheck.engines.battery.results import EngineResult, Finding
from groupcheck.engines.battery.runner import run_batteries
from groupcheck.engines.battery.slices import (
    EXPLORE_EVERY,
    MIN_SLICE,
    SEED_STRIDE,
    EnginePair,
    merge,
    next_pair,
    shapes,
    slice_seconds,
    spend,
    start,
    take,
)
from groupcheck.engines.progress import Tick
from groupcheck.targets.registry import resolve


def _sliced(engine: str, target: int, *slices: tuple[float, int]) -> EnginePair:
    pair = EnginePair(engine, target, result=EngineResult(engine))
    pair.slices = list(slices)
    return pair


def test_a_pair_without_a_slice_goes_first_then_the_most_new_shapes_per_second() -> None:
    rich, cheap_rich, fresh = (_sliced("fuzz", 0, (4.0, 20)), _sliced("fuzz", 1, (1.0, 20)),
                               EnginePair("scenarios", 0))
    assert next_pair([rich, cheap_rich, fresh]) == 2
    assert next_pair([rich, cheap_rich]) == 1  # as many new shapes, in a quarter of the time
    dry = _sliced("scenarios", 1, (1.0, 30), (1.0, 0), (1.0, 0))  # its last two found none
    assert next_pair([dry, rich]) == 1


def test_a_pair_that_found_a_violation_or_has_nothing_left_takes_no_slice() -> None:
    failed, done = _sliced("fuzz", 0, (1.0, 50)), _sliced("prove", 0, (1.0, 50))
    assert failed.result is not None
    failed.result.add(Finding("I1", "I1: a partition assigned twice"))
    done.done = True
    slow = _sliced("scenarios", 0, (10.0, 1))
    assert next_pair([failed, done, slow]) == 2
    assert next_pair([failed, done]) is None


def test_every_few_slices_the_least_served_pair_gets_one_so_none_starves() -> None:
    rich = _sliced("fuzz", 0, *[(1.0, 50)] * (EXPLORE_EVERY - 2))
    poor = _sliced("prove", 0, (1.0, 0))
    assert sum(len(p.slices) for p in (rich, poor)) % EXPLORE_EVERY == EXPLORE_EVERY - 1
    assert next_pair([rich, poor]) == 1
    rich.slices.append((1.0, 50))
    assert next_pair([rich, poor]) == 0


def test_ties_go_to_the_fewest_slices_then_the_lowest_index() -> None:
    pairs = [_sliced("fuzz", 0, (1.0, 0), (1.0, 0)), _sliced("fuzz", 1, (1.0, 0)),
             _sliced("scenarios", 0, (1.0, 0))]
    assert next_pair(pairs) == 1
    pairs[1].slices.append((1.0, 0))
    assert next_pair(pairs) == 2


def test_a_slice_is_a_part_of_what_is_left_and_the_last_takes_it_all() -> None:
    assert slice_seconds(90.0, 3) == 10.0
    assert slice_seconds(10.0, 6) == MIN_SLICE
    assert slice_seconds(MIN_SLICE * 1.5, 6) == MIN_SLICE * 1.5
    assert slice_seconds(0.0, 2) == 0.0


def _fuzz_part(runs: int, imbalance: dict[int, int], state: str) -> EngineResult:
    part = EngineResult("fuzz", ("I1",), seconds=1.0, runs=runs,
                        depth=f"{runs:,} examples (minimum {MIN_EXAMPLES})", note="1 chunk(s)")
    part.judged["I1"] = runs
    part.figures["imbalance"] = imbalance
    part.shapes.add(state)
    return part


def test_slices_merge_into_one_line_with_their_seeds_and_the_depth_reached() -> None:
    first = _fuzz_part(12, {0: 5}, "state:a")
    first.shallow, first.needs = ("I3",), 1.0
    pair = EnginePair("fuzz", 0)
    start(pair, first)
    assert shapes(first) == {"imbalance:0", "judged:I1", "state:a"}
    assert pair.result is first and pair.slices == [(1.0, 3)]
    take(pair, _fuzz_part(30, {0: 1, 1: 2}, "state:b"), 7 + SEED_STRIDE)
    assert pair.slices == [(1.0, 3), (1.0, 2)]  # imbalance 1 and state b are new
    assert first.runs == 42 and first.depth == f"42 examples (minimum {MIN_EXAMPLES})"
    assert first.figures["imbalance"] == {0: 6, 1: 2} and first.judged["I1"] == 42
    assert first.note == f"1 chunk(s); then 1 slice(s) more at seed(s) {7 + SEED_STRIDE}"
    assert first.shallow == () and first.needs == 0.0  # the minimum was reached
    total = EngineResult("scenarios", ("I1",), runs=1, depth="1 stories")
    merge(total, EngineResult("scenarios", ("I2",), runs=4, depth="4 stories"))
    assert total.depth == "5 stories" and total.checked == ("I1", "I2")


def _play_log(budget_slices: int, failing: tuple[str, int] | None = None
              ) -> list[tuple[str, int, int]]:
    """The slices `spend` hands out to fake engines whose new shapes dwindle per slice."""
    pairs = [EnginePair("scenarios", 0), EnginePair("scenarios", 1), EnginePair("fuzz", 0),
             EnginePair("fuzz", 1)]
    log: list[tuple[str, int, int]] = []

    def play(pair: EnginePair, seconds: float, seed: int) -> EngineResult:
        log.append((pair.engine, pair.target, seed))
        k = len(pair.slices)
        part = EngineResult(pair.engine, ("I1",), seconds=1.0 + pair.target, runs=1)
        part.shapes |= {f"{pair.engine}:{k}:{n}" for n in range(max(8 - 3 * k, 0))}
        if (pair.engine, pair.target) == failing and k == 1:
            part.add(Finding("I1", "I1: a partition assigned twice"))
        return part
    spend(pairs, math.inf, 7, play, stop=lambda: len(log) >= budget_slices)
    return log


def test_slices_are_decided_by_the_counts_alone_with_derived_seeds() -> None:
    log = _play_log(12)
    assert log == _play_log(12)
    assert log[:4] == [("scenarios", 0, 7), ("scenarios", 1, 7), ("fuzz", 0, 7), ("fuzz", 1, 7)]
    assert log[4] == ("scenarios", 0, 7 + SEED_STRIDE)  # the cheaper of the richest
    seeds = [seed for engine, target, seed in log if (engine, target) == ("fuzz", 1)]
    assert seeds == [7 + k * SEED_STRIDE for k in range(len(seeds))]


def test_a_pair_that_found_a_violation_stops_taking_slices() -> None:
    log = _play_log(16, failing=("scenarios", 0))
    mine = [entry for entry in log if entry[:2] == ("scenarios", 0)]
    assert len(mine) == 2 and len(log) == 16


def test_the_prover_widens_by_scope_and_stops_at_the_portfolios_end() -> None:
    n = len(PORTFOLIO)
    depth = EngineResult("prove", ("I1",), seconds=2.0, runs=100, depth=f"1 of {n} scopes",
                         note=f"1 of {n} scopes: depth: proof")
    pair = EnginePair("prove", 0)
    start(pair, depth)
    part = EngineResult("prove", ("I1",), seconds=1.0, runs=50, depth=f"2 of {n - 1} scopes",
                        note=f"2 of {n - 1} scopes: a: proof; b: proof")
    take(pair, part, 0)
    assert depth.runs == 150 and depth.depth == f"3 of {n} scopes" and pair.able
    rest = EngineResult("prove", ("I1",), seconds=1.0, runs=9, depth=f"{n - 3} of {n - 3} scopes",
                        note=f"{n - 3} of {n - 3} scopes: c: proof")
    take(pair, rest, 0)
    assert depth.depth == f"{n} of {n} scopes" and not pair.able


@pytest.mark.heavy  # a 24 s budget by design; the depth notes' rules run by default
def test_every_state_machine_plays_its_minimum_before_any_slice(tmp_path: Path) -> None:
    ticks: list[Tick] = []
    targets = [resolve("builtin:range"), resolve("builtin:cooperative-sticky")]
    results = run_batteries(targets, budget=24.0, failures=str(tmp_path),
                            engines=("codec", "prove", "scenarios", "fuzz"),
                            progress=ticks.append)
    for result in results:
        fuzz = next(e for e in result.engines if e.engine == "fuzz")
        assert fuzz.runs >= MIN_EXAMPLES and not fuzz.shallow, result.assignor
        assert fuzz.depth == f"{fuzz.runs:,} examples (minimum {MIN_EXAMPLES})"
    first_story = next(n for n, t in enumerate(ticks) if t.engine == "scenarios")
    before = [t for t in ticks[:first_story] if t.engine == "fuzz"]
    for target in targets:
        played = [t.runs for t in before if t.subject == target.name]
        assert played and max(played) >= MIN_EXAMPLES, target.name
