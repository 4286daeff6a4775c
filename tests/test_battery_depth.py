"""Depth before breadth: the prover's portfolio covers three members claiming one partition
at three generations first, on every assignor; an engine short of its minimum depth marks
what it left unjudged, and ``check`` names those invariants in its verdict line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from groupcheck import engines
from groupcheck.cli import main
from groupcheck.engines.battery.breadth import breadth_order, deepen
from groupcheck.engines.battery.depth import shortfall
from groupcheck.engines.battery.prove import (
    DEPTH_SCOPE,
    PORTFOLIO,
    run_prove_within,
    scope_size,
)
from groupcheck.engines.battery.results import BatteryResult, EngineResult
from groupcheck.properties.scope import Scope
from groupcheck.targets.registry import resolve
from groupcheck.targets.target import BUILTIN_ASSIGNORS


def test_the_portfolio_opens_with_three_claimants_at_three_generations() -> None:
    first = Scope.parse(PORTFOLIO[0])
    assert PORTFOLIO[0] == DEPTH_SCOPE
    assert (first.members, first.generations, first.claims) == (3, 3, 3)
    assert scope_size(DEPTH_SCOPE) <= min(scope_size(s) for s in PORTFOLIO[2:])


@pytest.mark.parametrize("assignor", BUILTIN_ASSIGNORS)
def test_every_builtin_runs_the_depth_scope_to_its_end_within_a_budget_that_holds_it(assignor: str,
                                                             tmp_path: Path) -> None:
    result = run_prove_within(resolve(f"builtin:{assignor}"), 600.0, str(tmp_path),
                              scopes=PORTFOLIO[:1])
    assert result.runs == scope_size(DEPTH_SCOPE)
    assert result.depth == "1 of 1 scopes"
    assert result.shallow == () and not result.findings
    assert result.judged["I1"] == scope_size(DEPTH_SCOPE)


def test_a_portfolio_that_stops_short_of_the_depth_scope_marks_its_invariants(
        tmp_path: Path) -> None:
    tiny = "members=1,topics=1,partitions=1,generations=1,claims=1"
    result = run_prove_within(resolve("builtin:cooperative-sticky"), 0.0, str(tmp_path),
                              scopes=(tiny, DEPTH_SCOPE))
    assert result.runs <= scope_size(tiny) and result.depth == "1 of 2 scopes"
    assert set(result.shallow) >= {"I1", "I2", "I5", "I6"}
    assert "ERROR" not in result.shallow and result.needs > 0


def _short_of_depth(targets: Any, **options: Any) -> list[BatteryResult]:
    """A run whose scale engine fell short of its minimum depth on every assignor."""
    scale = EngineResult("scale", ("I13", "ERROR"), runs=3, shallow=("I13",), needs=100.0)
    scale.judged["ERROR"] = 3
    return [BatteryResult(t.name, [scale], assignor=t.assignor, budget=options["budget"])
            for t in targets]


def test_the_verdict_line_names_what_the_budget_left_unjudged_at_depth() -> None:
    results = _short_of_depth([resolve("builtin:range")], budget=120.0)
    short = shortfall(results, 120.0)
    assert short is not None and short.invariants == ("I13",)
    assert short.line() == ("1 invariant not judged at --budget 120 (I13); --budget 240 "
                            "reaches it (estimated from the rates measured)")
    assert shortfall([BatteryResult("x", [EngineResult("scale", ("I13",))])], 120.0) is None


@pytest.mark.parametrize(("strict", "code"), [(False, 0), (True, 1)])
def test_strict_fails_a_run_that_left_an_invariant_unjudged_at_depth(
        strict: bool, code: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setattr(engines, "run_batteries", _short_of_depth)
    args = ["check", "--target", "builtin:range", "--assignor", "range", "--budget", "120",
            "--failures", str(tmp_path)] + (["--strict"] if strict else [])
    assert main(args) == code
    out = capsys.readouterr().out
    assert "range                every invariant judged held; not judged at depth: I13" in out
    assert "1 invariant not judged at --budget 120 (I13); --budget 240 reaches it" in out
    assert main([*args, "--json"]) == code
    report = json.loads(capsys.readouterr().out)
    assert report["notJudgedAtDepth"]["invariants"] == ["I13"]
    assert report["notJudgedAtDepth"]["reaching"] == 240


def test_breadth_starts_with_the_cheapest_provers_and_skips_the_ones_short_of_depth() -> None:
    def prover(runs: int, seconds: float, **fields: Any) -> EngineResult:
        return EngineResult("prove", ("I1",), seconds=seconds, runs=runs,
                            depth=f"1 of {len(PORTFOLIO)} scopes", **fields)
    slow, fast, shallow = prover(100, 10.0), prover(1_000, 1.0), prover(5, 1.0, shallow=("I1",))
    assert breadth_order([slow, fast, shallow, None]) == [1, 0]


def test_an_engine_short_of_depth_runs_again_with_what_it_needs() -> None:
    short = EngineResult("scale", ("I13",), seconds=2.0, runs=6, shallow=("I13",), needs=5.0)
    held = EngineResult("scale", ("I13",), seconds=2.0, runs=8)
    asked: list[tuple[int, float]] = []

    def again(i: int, seconds: float) -> EngineResult:
        asked.append((i, seconds))
        return EngineResult("scale", ("I13",), seconds=seconds, runs=9)
    out = deepen([short, held, None], math.inf, again)
    assert asked == [(0, 7.0)]
    assert out[0] is not short and out[0] is not None and out[0].runs == 9
    assert out[1] is held and out[2] is None
    assert deepen([short], -math.inf, again)[0] is short  # no time left: kept as it was
