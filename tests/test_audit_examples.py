"""The audit's driver-side last step (audit/examples.py): the smallest examples shrunk and
drawn in the report, ``summary.json`` untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import replay_record, run_chain
from groupcheck.audit.examples import shrink_and_draw
from groupcheck.audit.scenarios import random_spec, spec_size
from groupcheck.engines.resolving import resolve_audit_target

from helpers import TARGETS

BROKEN = f"pyfn:{TARGETS / 'audit_targets.py'}:assign_twice"


def _first_failing(target: Any, invariant: str) -> tuple[int, dict[str, Any]]:
    for index in range(2000):
        spec = random_spec(0, index)
        if run_chain(target, spec).verdicts[invariant] == 1:
            return index, spec
    raise AssertionError("no failing story")


def test_each_example_is_shrunk_beside_its_file_and_drawn(tmp_path: Path) -> None:
    """A range target that gives one partition twice: the story shrinks to two members
    and one partition, the smallest that can show it."""
    target = resolve_audit_target(BROKEN)
    index, spec = _first_failing(target, "I1")
    record = replay_record(target, spec, run_chain(target, spec), index, 0)
    (tmp_path / "counterexamples").mkdir()
    (tmp_path / "counterexamples" / "x-I1.json").write_text(json.dumps(record))
    size = spec_size(spec)
    summary = {"counterexamples": {BROKEN: {"I1": {
        "scenario": index, "members": size["members"], "partitions": size["partitions"],
        "rounds": size["rounds"], "violation": record["violations"][0],
        "file": "counterexamples/x-I1.json"}}}, "inherited_examples": {}}
    before = json.dumps(summary, sort_keys=True)
    figures, done = shrink_and_draw(tmp_path, summary, resolve_audit_target, 30.0)
    assert json.dumps(summary, sort_keys=True) == before
    entry = done["counterexamples/x-I1.json"]
    assert entry["file"] == "counterexamples/x-I1.shrunk.json" and entry["complete"]
    assert entry["to"]["members"] == 2 and entry["to"]["partitions"] == 1
    shrunk = json.loads((tmp_path / entry["file"]).read_text())
    assert shrunk["invariant"] == "I1" and shrunk["scenario"] == index
    assert run_chain(target, shrunk["spec"]).verdicts["I1"] == 1
    (figure,) = figures
    assert "<svg" in figure and "shrunk to 2 members, 1 partitions" in figure


def test_without_a_shrink_budget_the_examples_are_drawn_as_found(tmp_path: Path) -> None:
    target = resolve_audit_target(BROKEN)
    index, spec = _first_failing(target, "I1")
    record = replay_record(target, spec, run_chain(target, spec), index, 0)
    (tmp_path / "x.json").write_text(json.dumps(record))
    summary = {"counterexamples": {BROKEN: {"I1": {
        "scenario": index, "members": 9, "partitions": 9, "rounds": 1, "violation": "",
        "file": "x.json"}}}}
    figures, done = shrink_and_draw(tmp_path, summary, resolve_audit_target, 0.0)
    assert done == {} and len(figures) == 1 and "<svg" in figures[0]
    assert not list(tmp_path.glob("*.shrunk.json"))


@pytest.mark.heavy
def test_the_audit_report_shows_shrunk_pictures_and_keeps_its_summary(tmp_path: Path
                                                                      ) -> None:
    pytest.importorskip("pyspark", reason="the audit needs PySpark (the spark extra)")
    from groupcheck.audit.pipeline import AuditConfig, run_audit
    from groupcheck.audit.session import spark_session

    spark = spark_session("local[2]", tmp_path / "pkg")
    try:
        outcomes = []
        for name, seconds in (("shrunk", 30.0), ("plain", 0.0)):
            config = AuditConfig(targets=[BROKEN, "builtin:range"], scenarios=60,
                                 chunk_size=60, slices=2, out=str(tmp_path / name),
                                 shrink_seconds=seconds)
            outcomes.append(run_audit(config, resolve_audit_target, spark=spark))
    finally:
        spark.stop()
    shrunk, plain = (tmp_path / "shrunk", tmp_path / "plain")
    assert (shrunk / "summary.json").read_bytes() == (plain / "summary.json").read_bytes()
    cex = outcomes[0].summary["counterexamples"][BROKEN]["I1"]
    small = shrunk / cex["file"].replace(".json", ".shrunk.json")
    assert json.loads(small.read_text())["shrink"]["to"]["members"] == 2
    timings = json.loads((shrunk / "timings.json").read_text())
    assert timings["shrink"][cex["file"]]["to"]["partitions"] == 1
    page = (shrunk / "index.html").read_text()
    assert "The examples, shrunk and drawn" in page and "<svg" in page
    assert "shrunk to 2 members" in page
    assert "<svg" in (plain / "index.html").read_text()
