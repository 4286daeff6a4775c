"""The ``scenarios`` engine of ``check``: the audit's random group stories, in process."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import run_chain
from groupcheck.audit.scenarios import random_spec
from groupcheck.cli import main
from groupcheck.engines.battery.runner import run_battery
from groupcheck.engines.battery.scenarios import (
    LARGE_EVERY,
    row_of,
    run_scenarios_engine,
    schedule,
    story_target,
)
from groupcheck.engines.progress import PROCESS_FLOOR
from groupcheck.engines.resolving import warm
from groupcheck.targets.registry import resolve

from helpers import TARGETS


def test_importing_the_engine_does_not_import_pyspark() -> None:
    code = ("import sys, groupcheck.engines.battery.scenarios, groupcheck.engines.battery.runner; "
            "sys.exit(1 if 'pyspark' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_every_eighth_story_is_a_large_group_and_the_rest_are_the_audits_in_order() -> None:
    order = [index for _, index in zip(range(8 * LARGE_EVERY), schedule(5), strict=False)]
    plain = [i for k, i in enumerate(order) if k % LARGE_EVERY != LARGE_EVERY - 1]
    large = [i for k, i in enumerate(order) if k % LARGE_EVERY == LARGE_EVERY - 1]
    assert plain == list(range(len(plain)))
    assert large == sorted(large) and len(set(large)) == len(large)
    assert all(random_spec(5, i)["tier"] >= 2 for i in large)
    skipped = set(range(large[-1])) - set(large)
    assert all(random_spec(5, i)["tier"] < 2 for i in list(skipped)[:200])


def test_the_same_seed_and_count_play_the_same_stories(tmp_path: Path) -> None:
    target = resolve("builtin:sticky")
    one = run_scenarios_engine(target, 60.0, str(tmp_path), seed=3, count=200)
    two = run_scenarios_engine(target, 0.001, str(tmp_path), seed=3, count=200)
    assert one.runs == two.runs == 200
    assert one.note == two.note and "seed 3" in one.note
    assert one.checked == two.checked
    assert {"I1", "I2", "I3", "I4a", "ERROR"} <= set(one.checked)
    assert not one.findings


def test_a_budget_limited_run_says_how_to_rerun_it(tmp_path: Path) -> None:
    result = run_scenarios_engine(resolve("builtin:range"), 0.5, str(tmp_path), seed=1)
    assert result.runs > LARGE_EVERY
    assert result.note.startswith(f"{result.runs} stories of seed 1: scenarios 0..")
    assert "large one(s)" in result.note and "largest group" in result.note


def test_a_sticky_defect_that_needs_four_members_is_found_and_replays(tmp_path: Path) -> None:
    """`RotatingSticky` moves every partition of a balanced assignment, but only with four
    members or more: out of the scope prover's reach, within the stories'."""
    target = resolve("python:story_assignors:RotatingSticky")
    result = run_scenarios_engine(target, 60.0, str(tmp_path), seed=0, count=3000)
    finding = result.findings["I4a"]
    assert finding.size is not None and finding.size >= 4
    assert finding.file is not None and "I4a" in finding.file
    record = json.loads(Path(finding.file).read_text(encoding="utf-8"))
    assert record["format"] == "groupcheck-audit-chain/1" and record["seed"] == 0
    original = random_spec(0, record["scenario"])  # the story it was shrunk from
    assert record["shrink"]["from"]["members"] >= record["shrink"]["to"]["members"] >= 4
    for spec in (original, record["spec"]):
        again = run_chain(story_target(target), spec)
        assert again.verdicts["I4"] == 1 and again.own_violation


def test_a_defect_of_large_groups_only_is_found(tmp_path: Path) -> None:
    target = resolve("python:story_assignors:DropsInCrowds")
    result = run_scenarios_engine(target, 60.0, str(tmp_path), seed=0, count=400)
    assert "I2" in result.findings
    assert result.findings["I2"].size is not None and result.findings["I2"].size > 20
    assert "owned by nobody" in result.findings["I2"].violation


@pytest.mark.heavy  # the hanging JSON-lines process below is the default run's TIMEOUT
def test_a_hanging_assign_call_is_a_timeout(tmp_path: Path) -> None:
    target = resolve("python:story_assignors:HangsAtFive")
    result = run_scenarios_engine(target, 60.0, str(tmp_path), seed=0, count=100,
                                  timeout=0.3)
    finding = result.findings[row_of("TIMEOUT")]
    assert finding.violation.startswith("TIMEOUT: assign did not answer within 0.3s")
    assert "1 timed out" in result.note


def test_a_jsonl_process_that_hangs_is_restarted_and_its_timeout_shrinks(
        tmp_path: Path) -> None:
    """The process still owes the timed-out answer: it is closed and started afresh, so no
    later request reads that answer, and shrinking never blames a group too small to hang
    (under five members)."""
    command = f"{sys.executable} {TARGETS / 'jsonl_hangs_at_five.py'}"
    target = resolve(f"jsonl:{command}", assignor="range")
    try:
        result = run_scenarios_engine(target, 10.0, str(tmp_path), seed=0, count=60,
                                      timeout=0.5)
    finally:
        target.close()
    finding = result.findings[row_of("TIMEOUT")]
    assert finding.violation.startswith("TIMEOUT") and finding.size is not None
    record = json.loads(Path(str(finding.file)).read_text(encoding="utf-8"))
    assert record["invariant"] == "TIMEOUT"
    assert 5 <= finding.size <= record["shrink"]["from"]["members"]
    before = [r for r in record["responses"] if "error" not in r]
    assert all(set(r["assignment"]) == set(q["members"])
               for q, r in zip(record["requests"], before, strict=False))


def test_kafka_pythons_roundrobin_crash_is_found_and_shrunk_to_two_members(
        tmp_path: Path) -> None:
    """A finding (kafka-python 3.0.12): its roundrobin leader raises whenever the
    subscriptions differ; the smallest story has two members."""
    pytest.importorskip("kafka", reason="kafka-python is in the peers extra")
    target = resolve("kafka-python:roundrobin")
    result = run_scenarios_engine(target, 30.0, str(tmp_path), seed=0, count=200)
    finding = result.findings["ERROR"]
    assert "assign raised KeyError" in finding.violation and finding.size == 2


def test_kafkas_own_behaviour_is_labelled_and_fails_only_when_strict(tmp_path: Path) -> None:
    target = resolve("builtin:cooperative-sticky")
    lenient = run_scenarios_engine(target, 60.0, str(tmp_path), seed=0, count=600)
    assert not lenient.findings and lenient.runs == 600
    assert "I6" in lenient.inherited
    assert lenient.inherited["I6"].violation.startswith("Kafka's own (K1): I6:")
    strict = run_scenarios_engine(target, 60.0, str(tmp_path), seed=0, count=600,
                                  strict=True)
    assert strict.findings and strict.runs < 600


def test_a_jsonl_process_is_driven_through_the_same_stories(tmp_path: Path) -> None:
    command = f"{sys.executable} -m groupcheck jsonl"
    target = resolve(f"jsonl:{command}", assignor="roundrobin")
    try:
        result = run_scenarios_engine(target, 60.0, str(tmp_path), seed=2, count=40)
    finally:
        target.close()
    builtin = run_scenarios_engine(resolve("builtin:roundrobin"), 60.0, str(tmp_path),
                                   seed=2, count=40)
    assert result.runs == 40 and not result.findings
    assert result.note == builtin.note


def test_check_runs_the_scenarios_engine_in_its_table(tmp_path: Path) -> None:
    result = run_battery(resolve("builtin:range"), budget=1.0, engines=("scenarios",),
                         failures=str(tmp_path))
    (engine,) = result.engines
    assert engine.engine == "scenarios" and engine.runs > 0
    header = next(line for line in result.table().splitlines() if line.startswith("invariant"))
    assert "scenarios" in header


def test_groupcheck_scenarios_exits_1_on_a_finding_and_2_on_bad_arguments(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["scenarios", "--target", "python:story_assignors:DropsInCrowds",
                 "--count", "400", "--failures", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1 and "VIOLATED" in out and "first counterexample" in out
    assert main(["scenarios", "--target", "builtin:codec", "--count", "3"]) == 2
    assert main(["scenarios", "--target", "builtin:range", "--count", "0"]) == 2
    assert "no assign function" in capsys.readouterr().err


class _StepClock:
    """A clock that moves only when the target answers: ``step`` seconds a call."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        return self.now

    def answering(self, assign: Any) -> Any:
        def call(request: dict[str, Any]) -> dict[str, Any]:
            self.now += self.step
            return assign(request)
        return call


def test_the_engine_starts_no_story_after_its_budget_on_its_clock(tmp_path: Path) -> None:
    target = resolve("builtin:range")
    clock = _StepClock(0.01)
    ends: list[float] = []  # each story's end, from its tick
    result = run_scenarios_engine(replace(target, assign=clock.answering(target.assign)),
                                  1.0, str(tmp_path), 0, clock=clock,
                                  progress=lambda tick: ends.append(tick.elapsed))
    assert len(ends) == result.runs > 1
    assert ends[-1] >= 1.0 > ends[-2]  # the last story began before the budget's end
    assert result.seconds == pytest.approx(ends[-1])  # and nothing began after it


def test_a_process_target_is_not_started_on_a_budget_too_small_to_start_it(
        tmp_path: Path) -> None:
    target = resolve(f"jsonl:{sys.executable} -m groupcheck jsonl", assignor="range")
    try:
        result = run_scenarios_engine(target, PROCESS_FLOOR / 2, str(tmp_path), 0)
    finally:
        target.close()
    assert result.runs == 0 and result.skipped == (
        f"{PROCESS_FLOOR / 2:.1f} s of the budget was left for it, less than the "
        f"{PROCESS_FLOOR:g} s a process target may need to start")


def test_a_process_target_already_running_plays_stories_on_a_budget_under_the_floor(
        tmp_path: Path) -> None:
    target = resolve(f"jsonl:{sys.executable} -m groupcheck jsonl", assignor="range")
    try:
        warm(target)
        result = run_scenarios_engine(target, PROCESS_FLOOR / 2, str(tmp_path), 0)
    finally:
        target.close()
    assert not result.skipped and result.runs > 0
