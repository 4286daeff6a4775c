"""Every verdict of ``check`` is honest: "holds" only where an invariant was judged, "not
judged" with the reason otherwise; figures for every target; findings dated; the fixed
engines in a fixed order, the searching ones in slices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.engines.battery import runner
from groupcheck.engines.battery.breadth import FUZZ_FLOOR, search_reserve
from groupcheck.engines.battery.results import BatteryResult, EngineResult, Finding
from groupcheck.engines.battery.runner import (
    ENGINE_LIST,
    run_batteries,
    run_battery,
)
from groupcheck.targets.registry import resolve


def test_a_cell_says_holds_only_where_the_invariant_was_judged() -> None:
    engine = EngineResult("fuzz", ("I3", "I5", "I7"), runs=12,
                          reasons={"I5": "no cooperative rebalance (the assignor is EAGER)"})
    engine.judged["I3"] = 4
    assert engine.verdict("I3") == "holds"
    assert engine.verdict("I5") == "not judged" and engine.verdict("I7") == "not judged"
    assert engine.verdict("I10") == "-"
    assert engine.why_not("I7") == "its premise never arose in 12 run(s)"
    table = BatteryResult("builtin:x", [engine]).table()
    assert "I5 [fuzz]: no cooperative rebalance (the assignor is EAGER)" in table
    assert "every invariant judged held" in table
    engine.add(Finding("I7", "I7: revoked twice"))
    assert engine.verdict("I7") == "VIOLATED" and engine.judged["I7"] == 1


def test_engines_run_cheap_first_and_the_searching_ones_take_the_slices() -> None:
    names = [e.name for e in ENGINE_LIST]
    assert names == ["codec", "prove", "vectors", "scenarios", "fuzz", "scale", "faults"]
    assert [e.name for e in ENGINE_LIST if e.searching] == ["scenarios", "fuzz"]


def test_check_reports_judgements_reasons_figures_and_the_contract_as_data(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--target", "builtin:range", "--budget", "12", "--json",
                 "--failures", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["ok"]
    body = report["assignors"]["range"]
    assert body["balance"] == "range (Kafka's rule for its range assignor)"
    fuzz = body["engines"]["fuzz"]
    assert fuzz["verdicts"]["I3"] == "holds" and fuzz["judged"]["I3"] > 0
    assert fuzz["verdicts"]["I5"] == "not judged"
    assert fuzz["notJudged"]["I5"] == "no cooperative rebalance (the assignor is EAGER)"
    assert fuzz["notJudged"]["I4a"].startswith("the assignor promises no stickiness")
    assert fuzz["figures"]["imbalance"] and fuzz["figures"]["moves"]
    prove = body["engines"]["prove"]
    assert prove["verdicts"]["I3"] == "holds" and prove["judged"]["I3"] > 0
    assert "I4a" not in prove["verdicts"]  # range promises no stickiness
    codec = body["engines"]["codec"]
    assert codec["verdicts"] == {"I10": "holds"}  # range writes no user data to judge


def test_findings_are_dated_and_the_first_one_is_the_earliest(tmp_path: Path) -> None:
    result = run_battery(resolve("mutant:sticky-drops-generation"), budget=10.0,
                         failures=str(tmp_path), first=True)
    engine, finding = result.first()
    assert engine.engine == "codec" and finding.invariant == "I12"
    assert 0 <= result.after(finding) < result.seconds
    skipped = {e.engine: e.skipped for e in result.engines if e.skipped}
    assert skipped["fuzz"] == "the run stopped at its first finding (--first)"


@pytest.mark.parametrize(("budget", "targets"), [(6.0, 2), (10.0, 4), (120.0, 3)])
def test_the_fixed_engines_leave_the_state_machine_its_floor_on_every_assignor(
        budget: float, targets: int) -> None:
    reserve = search_reserve(budget, targets, fuzz=True)
    assert reserve >= budget / 4 and reserve <= budget / 2
    assert reserve >= min(2 * FUZZ_FLOOR * targets, budget / 2)
    assert search_reserve(budget, targets, fuzz=False) == budget / 4


def test_every_assignor_gets_every_engine_before_the_next_engine_starts(tmp_path: Path) -> None:
    targets = [resolve("builtin:range"), resolve("builtin:roundrobin")]
    results = run_batteries(targets, budget=6.0, failures=str(tmp_path),
                            engines=("codec", "prove", "fuzz"))
    assert [r.assignor for r in results] == ["range", "roundrobin"]
    for result in results:
        assert [e.engine for e in result.engines] == ["codec", "prove", "fuzz"]
        assert not result.failed
    fuzz_ran = [e for r in results for e in r.engines if e.engine == "fuzz"]
    assert all(e.runs > 0 for e in fuzz_ran)


@pytest.mark.heavy
def test_the_text_output_has_a_table_per_assignor_and_a_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--target", "python:groupcheck.targets.zoo.escapes",
                 "--assignor", "WholeTopicAssignor,LeastLoadedAssignor", "--budget", "20",
                 "--failures", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "check python:groupcheck.targets.zoo.escapes:WholeTopicAssignor [whole-topic]" in out
    assert "balance contract: sticky (not declared: the strictest rule" in out
    assert "  WholeTopicAssignor   VIOLATED I3" in out
    assert "  LeastLoadedAssignor  every invariant judged held" in out


def test_a_budget_spent_before_an_engines_turn_is_said_in_its_line(tmp_path: Path) -> None:
    result = run_battery(resolve("builtin:range"), budget=0.0, failures=str(tmp_path))
    lines = {e.engine: e.skipped for e in result.engines}
    assert lines["vectors"] == "not asked (--parity)"
    for engine in ("codec", "prove", "scenarios", "fuzz", "scale"):
        assert lines[engine] == "the budget was spent before its turn came", engine
    assert not result.failed and result.table().endswith("nothing judged (no engine ran: "
                                                         "see the lines above)")


def _failed(engine: str) -> EngineResult:
    out = EngineResult(engine)
    out.findings["I13"] = Finding("I13", "too slow at Kafka's scale")
    return out


def test_first_stops_at_a_finding_of_the_scale_engines_second_run(tmp_path: Path,
                                                                 monkeypatch: Any) -> None:
    """--first: a violation the scale engine finds when it is run again for depth ends the
    run, as one from its first run does (the searching engines do not start)."""
    monkeypatch.setattr(runner, "deepen", lambda found, deadline, again: [
        _failed("scale") for _ in found])
    (result,) = run_batteries([resolve("builtin:range")], budget=4.0, failures=str(tmp_path),
                              engines=("scale", "fuzz"), first=True)
    skipped = {e.engine: e.skipped for e in result.engines}
    assert result.failed and skipped["fuzz"] == "the run stopped at its first finding (--first)"


def test_first_stops_at_a_finding_of_a_later_prover_scope(tmp_path: Path,
                                                         monkeypatch: Any) -> None:
    """--first: a violation in a scope the prover widens to ends the run: no slice of any
    engine is played after it."""
    played: list[str] = []

    def stories(*args: Any, **kwargs: Any) -> EngineResult:
        played.append("scenarios")
        return EngineResult("scenarios", runs=1)

    def more_scopes(*args: Any, **kwargs: Any) -> EngineResult:
        played.append("prove")
        return _failed("prove")
    monkeypatch.setattr(runner, "run_stories", stories)
    monkeypatch.setattr(runner, "_more_scopes", more_scopes)
    (result,) = run_batteries([resolve("builtin:range")], budget=6.0, failures=str(tmp_path),
                              engines=("prove", "scenarios"), first=True)
    assert result.failed and "prove" in played
    assert played[played.index("prove") + 1:] == [], played
