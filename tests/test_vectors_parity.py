"""``check --parity`` holds a target to Kafka's answer list for list: the same partitions
in another order is still a PARITY finding, labelled "order only"; other partitions are a
PARITY finding without that label, and outrank an order-only one."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.engines.battery.golden import run_vectors
from groupcheck.engines.battery.parity import parity_difference
from groupcheck.targets.registry import resolve
from groupcheck.targets.target import BUILTIN_ASSIGNORS, Target

from helpers.vectors import load

LINES = load("assign.jsonl")


def _range_lines() -> list[dict[str, Any]]:
    """Range's lines where Kafka answered and some member holds two partitions or more."""
    return [x for x in LINES if x["request"].get("assignor") == "range"
            and "kafka_bug" not in x and "error" not in x["response"]
            and any(len(ps) > 1 for ps in x["response"]["assignment"].values())]


def _reworked(edit: Any) -> Target:
    builtin = resolve("builtin:range")
    assert builtin.assign is not None
    inner = builtin.assign

    def assign(request: Any) -> Any:
        got = inner(request)
        return {**got, "assignment": {m: edit(ps) for m, ps in got["assignment"].items()}}
    return dataclasses.replace(builtin, name="python:reworked", assign=assign)


@pytest.mark.parametrize("assignor", BUILTIN_ASSIGNORS)
def test_each_builtin_answers_its_vectors_in_kafkas_order(assignor: str, tmp_path: Path) -> None:
    result = run_vectors(resolve(f"builtin:{assignor}"), str(tmp_path), lines=LINES)
    assert result.runs > 0 and result.judged["PARITY"] > 0
    assert not result.findings, result.note


def test_each_member_list_reversed_is_a_parity_finding_of_order_only(tmp_path: Path) -> None:
    lines = _range_lines()
    assert lines
    result = run_vectors(_reworked(lambda ps: ps[::-1]), str(tmp_path), lines=lines)
    assert set(result.findings) == {"PARITY"}
    finding = result.findings["PARITY"]
    assert finding.violation.startswith("PARITY: order only: ")
    saved = json.loads(Path(finding.file or "").read_text())
    assert saved["groupcheck"]["difference"] == "order only"
    assert "order only" in result.note


def test_a_dropped_partition_is_a_parity_finding_of_partitions(tmp_path: Path) -> None:
    lines = _range_lines()
    result = run_vectors(_reworked(lambda ps: ps[:-1]), str(tmp_path), lines=lines)
    finding = result.findings["PARITY"]
    assert "order only" not in finding.violation
    assert json.loads(Path(finding.file or "").read_text())["groupcheck"]["difference"] \
        == "partitions"


def test_a_difference_of_partitions_outranks_an_earlier_one_of_order(tmp_path: Path) -> None:
    first, second = _range_lines()[:2]
    calls = iter([lambda ps: ps[::-1], lambda ps: ps[:-1]])
    builtin = resolve("builtin:range")
    assert builtin.assign is not None
    inner = builtin.assign

    def assign(request: Any) -> Any:
        edit = next(calls)
        got = inner(request)
        return {**got, "assignment": {m: edit(ps) for m, ps in got["assignment"].items()}}
    target = dataclasses.replace(builtin, name="python:twice", assign=assign)
    result = run_vectors(target, str(tmp_path), lines=[first, second])
    assert result.findings["PARITY"].violation.startswith("PARITY: ")
    assert "order only" not in result.findings["PARITY"].violation
    assert "(1 order only)" in result.note


def test_members_without_partitions_and_equal_lists_show_no_difference() -> None:
    kafka = {"assignment": {"a": [["t", 0], ["t", 1]], "b": []}}
    assert parity_difference(kafka, {"assignment": {"a": [["t", 0], ["t", 1]]}}) is None
    differs = parity_difference(kafka, {"assignment": {"a": [["t", 0], ["t", 0]]}})
    assert differs is not None and differs.kind == "partitions"
