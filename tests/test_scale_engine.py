"""The scale engine: the power-law fit, the ladders timed on a fake clock (a quadratic user
assignor fails a small bound, a linear one holds it, the budget is never overrun), TIMEOUT
and errors as data, the builtin beside the target, and what ``check`` prints."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groupcheck.engines.battery.results import BatteryResult, figure_lines
from groupcheck.engines.battery.scale import (
    DEFAULT_LADDERS,
    Fit,
    Ladder,
    Shape,
    fit_power,
    run_scale,
    scale_request,
)
from groupcheck.impl.assign_op import run_assign
from groupcheck.targets.registry import resolve
from groupcheck.targets.target import Target

import scale_assignors

#: small shapes (members 10..500 over two topics), the last one standing for Kafka's
LADDER = Ladder("members", tuple(Shape(m, 2, m) for m in (10, 20, 50, 100, 200, 500)),
                "a test's shape")
CLOCK = scale_assignors.CLOCK


def _scale(target: Target, budget: float, tmp_path: Path, **options: Any) -> Any:
    options.setdefault("ladders", (LADDER,))
    return run_scale(target, budget, str(tmp_path), clock=CLOCK, **options)


def test_the_fit_recovers_the_exponent_of_synthetic_points() -> None:
    for k in (0.5, 1.0, 2.0, 3.0):
        fit = fit_power([(n, 3e-7 * n ** k) for n in (10, 100, 1000, 10_000)], floor=0.0)
        assert fit is not None
        assert fit.k == pytest.approx(k) and fit.c == pytest.approx(3e-7)
        assert fit.size_at(fit.seconds(12_345)) == pytest.approx(12_345)
    noisy = [(n, 1e-6 * n ** 2 * (1.1 if i % 2 else 0.9)) for i, n in enumerate(
        (100, 200, 500, 1000, 2000))]
    fitted = fit_power(noisy, floor=0.0)
    assert fitted is not None and 1.9 < fitted.k < 2.1


def test_the_fit_leaves_out_steps_under_the_floor_and_needs_two_sizes() -> None:
    # fixed overhead (1 ms) flattens the small steps; above the floor the cost is linear
    points = [(n, 0.001 + 1e-5 * n) for n in (10, 20, 50, 1000, 2000, 5000)]
    fit = fit_power(points, floor=0.005)
    assert fit is not None and fit.points == 3 and fit.k == pytest.approx(1.0, abs=0.1)
    assert fit_power([(100, 0.5)]) is None
    assert fit_power([(100, 0.5), (100, 0.6)]) is None
    assert Fit(0.0, 1.0, 3).size_at(300.0) == math.inf


def test_a_quadratic_user_assignor_gets_exponent_two_and_fails_a_small_bound(
        tmp_path: Path) -> None:
    target = resolve("python:scale_assignors:Quadratic")
    out = _scale(target, 10.0, tmp_path, bound=0.05)
    cost = out.figures["cost"]["members"]
    assert cost["k"] == pytest.approx(2.0, abs=0.01)
    assert out.verdict("I13") == "VIOLATED"
    finding = out.findings["I13"]
    assert "500 members × 1,000 partitions" in finding.violation
    assert "past the 0.05 s rebalance timeout" in finding.violation
    saved = json.loads(Path(str(finding.file)).read_text(encoding="utf-8"))
    assert saved["groupcheck"]["format"] == "groupcheck-scale/1"
    assert len(saved["members"]) == 500  # the largest shape measured
    request = {k: v for k, v in saved.items() if k != "groupcheck"}
    assert request == scale_request("quadratic-cost", Shape(500, 2, 500))
    assert sum(map(len, target.assign(request)["assignment"].values())) == 1000


def test_a_linear_user_assignor_holds_the_same_bound(tmp_path: Path) -> None:
    out = _scale(resolve("python:scale_assignors:Linear"), 10.0, tmp_path, bound=0.05)
    assert out.figures["cost"]["members"]["k"] == pytest.approx(1.0, abs=0.01)
    assert out.verdict("I13") == "holds" and not out.failed
    assert out.figures["cost"]["members"]["kafka_measured"]


def test_a_step_far_slower_than_predicted_is_timed_again_and_the_ladder_goes_on(
        tmp_path: Path) -> None:
    """One call paused for 2 s at 50 members (a loaded machine): taken at its word, its slope
    would predict the next step past the budget and leave I13 unjudged; timed again, the
    ladder reaches Kafka's shape and I13 holds."""
    scale_assignors.Paused.paused = False
    out = _scale(resolve("python:scale_assignors:Paused"), 10.0, tmp_path, bound=0.05)
    cost = out.figures["cost"]["members"]
    assert out.verdict("I13") == "holds" and cost["kafka_measured"], out.note
    assert [step[0] for step in cost["steps"]] == [10, 20, 50, 100, 200, 500]
    assert cost["steps"][2][2] < 0.01 and cost["k"] == pytest.approx(1.0, abs=0.01)


def test_a_slow_step_with_no_time_to_be_timed_again_does_not_extrapolate_to_a_violation(
        tmp_path: Path) -> None:
    """A linear assignor whose call at 100 members is paused 40 ms, the end of a 50 ms
    budget: its steep slope would extrapolate past the bound at Kafka's shape, but one
    unconfirmed time is as likely a loaded machine as a cost, so I13 is left unjudged."""
    scale_assignors.PausedLate.paused = False
    out = _scale(resolve("python:scale_assignors:PausedLate"), 0.05, tmp_path, bound=0.05)
    cost = out.figures["cost"]["members"]
    assert cost["steps"][-1][0] == 100 and cost["kafka_how"] == "extrapolated"
    assert cost["kafka_seconds"] > 0.05
    assert out.verdict("I13") == "not judged" and not out.failed
    assert "one call at 100 members" in out.why_not("I13")
    assert "over 4 times its prediction" in out.why_not("I13")


def test_an_extrapolation_of_fewer_than_three_timed_steps_judges_i13_only_within_reach(
        tmp_path: Path) -> None:
    # a budget that stops the quadratic ladder at 100 members: 500 is within 10x
    target = resolve("python:scale_assignors:Quadratic")
    near = _scale(target, 0.05, tmp_path, bound=0.05)
    assert near.verdict("I13") == "VIOLATED"
    assert "extrapolated from time ~ members^2.00" in near.findings["I13"].violation
    far = _scale(target, 0.05, tmp_path, bound=0.05, reach=2.0)
    assert far.verdict("I13") == "not judged" and far.shallow == ("I13",) and far.needs > 0
    assert "short of Kafka's 500 members" in far.why_not("I13")


def test_a_fit_over_three_timed_steps_judges_i13_at_any_distance_with_its_error(
        tmp_path: Path) -> None:
    target = resolve("python:scale_assignors:Quadratic")
    out = _scale(target, 0.05, tmp_path, bound=0.05, reach=2.0, floor=0.0)
    assert out.verdict("I13") == "VIOLATED" and not out.shallow
    assert "exponents 2.00..2.00 between steps" in out.findings["I13"].violation
    cost = out.figures["cost"]["members"]
    low, high = cost["kafka_range"]
    assert low <= cost["kafka_seconds"] <= high and cost["k_range"] == [2.0, 2.0]
    held = _scale(target, 0.05, tmp_path, bound=1e6, reach=2.0, floor=0.0)
    assert held.verdict("I13") == "holds" and held.depth.startswith("members to ")


def test_a_call_that_outlasts_the_share_is_cut_at_it_and_judged(tmp_path: Path) -> None:
    """A fake slow assign (an hour of CPU per call) on the real clock: the first call is cut
    at the engine's share; the CPU it used, grown at least linearly to Kafka's shape, passes
    the bound."""
    def slow(request: dict[str, Any]) -> dict[str, Any]:
        until = time.perf_counter() + 3600
        while time.perf_counter() < until:
            pass
        return run_assign(request)

    out = run_scale(_fake(slow), 0.5, str(tmp_path), ladders=(DEFAULT_LADDERS[0],),
                    compare=False, bound=10.0)
    assert out.verdict("I13") == "VIOLATED"
    assert "at least: one call at 10 members × 100 partitions took more than" \
        in out.findings["I13"].violation
    assert "of CPU before it was cut" in out.findings["I13"].violation
    assert out.figures["cost"]["members"]["cut"] and "outlasted the engine's share" in out.note
    short = run_scale(_fake(slow), 0.5, str(tmp_path), ladders=(LADDER,), compare=False)
    assert short.verdict("I13") == "not judged" and short.shallow == ("I13",)


@pytest.mark.parametrize("budget", [0.001, 0.01, 0.05, 0.3, 1.0, 100.0])
@pytest.mark.parametrize("name", ["Quadratic", "Linear"])
def test_the_engine_never_overruns_its_budget(tmp_path: Path, name: str,
                                              budget: float) -> None:
    target = resolve(f"python:scale_assignors:{name}")
    began = CLOCK()
    out = _scale(target, budget, tmp_path, bound=1e9)
    assert CLOCK() - began <= budget and out.seconds <= budget
    assert out.runs >= 1


def _fake(assign: Callable[[dict[str, Any]], dict[str, Any]], timeout: float | None = None
          ) -> Target:
    return Target("jsonl:fake", "range", assign=assign, timeout=timeout)


def test_a_timeout_is_a_data_point_and_ends_the_ladder(tmp_path: Path) -> None:
    def slow(request: dict[str, Any]) -> dict[str, Any]:
        members = len(request["members"])
        if members >= 100:
            CLOCK.advance(0.5)
            raise TimeoutError("no answer within 0.5 s")
        CLOCK.advance(members * 1e-4)
        return run_assign(request)

    out = _scale(_fake(slow, timeout=0.5), 10.0, tmp_path, bound=0.4, compare=False)
    cost = out.figures["cost"]["members"]
    assert cost["timeout"] and cost["steps"][-1][0] == 100
    assert "TIMEOUT at 100 members" in out.note
    assert out.verdict("I13") == "VIOLATED"  # time > 0.5 s > the bound, measured
    assert "> 0.5 s (TIMEOUT)" in "\n".join(figure_lines(out.figures))


def test_an_error_at_scale_is_a_finding_with_its_request(tmp_path: Path) -> None:
    def breaks(request: dict[str, Any]) -> dict[str, Any]:
        if len(request["members"]) > 20:
            raise ValueError("too many members")
        return run_assign(request)

    out = _scale(_fake(breaks), 10.0, tmp_path, compare=False)
    assert out.verdict("ERROR") == "VIOLATED"
    saved = json.loads(Path(str(out.findings["ERROR"].file)).read_text(encoding="utf-8"))
    assert len(saved["members"]) == 50


def test_the_builtin_of_the_same_name_is_timed_beside_the_target(tmp_path: Path) -> None:
    ladder = Ladder("members", tuple(Shape(m, 2, m) for m in (10, 20, 50)), "small")
    out = run_scale(_fake(run_assign), 5.0, str(tmp_path), ladders=(ladder,))
    assert isinstance(out.figures["cost"]["builtin"]["members"], float)
    lines = figure_lines(out.figures)
    assert "; the builtin n^" in lines[0] and "one call passes 300 s at ≈" in lines[0]
    builtin = run_scale(resolve("builtin:range"), 5.0, str(tmp_path), ladders=(ladder,))
    assert "builtin" not in builtin.figures["cost"]  # nothing to compare with itself


def test_check_prints_the_exponent_the_largest_shape_and_where_300_s_passes(
        tmp_path: Path) -> None:
    out = _scale(resolve("python:scale_assignors:Quadratic"), 10.0, tmp_path)
    table = BatteryResult("python:scale_assignors:Quadratic", [out]).table()
    assert "time grows as n^2.00 (members); 500 members × 1,000 partitions in 0.25 s" in table
    assert "one call passes 300 s at ≈ 1.7e+04 members" in table
    assert "Kafka's 500 members × 1,000 partitions (a test's shape): 0.25 s measured" in table
    assert out.verdict("I13") == "holds"


def test_the_default_ladders_end_at_kafkas_scale_test_shapes() -> None:
    members, partitions = DEFAULT_LADDERS
    assert members.steps[:8] == tuple(Shape(m, 10, m) for m in (10, 20, 50, 100, 200, 500,
                                                                1000, 2000))
    assert members.steps[-1].label == "10,000 members × 100,000 partitions"
    assert partitions.steps[-1] == Shape(2000, 500, 2000, narrow=1)
    assert partitions.steps[-1].partitions == 1_000_000
    request = scale_request("sticky", Shape(4, 3, 2, narrow=1))
    assert request["members"]["m3"]["topics"] == ["t0"]
    assert request["members"]["m0"]["topics"] == ["t0", "t1", "t2"]
    assert run_assign(request)["assignment"]
