"""Every assign line recorded from Kafka's Java client, reproduced list for list.

Through the Python API (`run_assign`) and through one long-lived `groupcheck jsonl`
process fed the whole file in order (so chains run step after step). Lines marked
``kafka_bug`` are where Kafka's own answer breaks I1 or I2 or throws on inputs a correct
client sends: there we must answer with an assignment that keeps I1 and I2 instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from groupcheck.impl.assign_op import run_assign
from groupcheck.impl.errors import AssignorError
from groupcheck.impl.jsonl import error_text, handle
from groupcheck.properties.assignment import exclusive_ownership, valid_targets

from helpers import ROOT
from helpers.vectors import line_id, load

LINES = load("assign.jsonl")
COMPARED = ("assignment", "userData", "assignmentUserData", "generation", "protocol")


def _first_difference(expected: dict[str, Any], got: dict[str, Any]) -> str:
    exp_a, got_a = expected.get("assignment", {}), got.get("assignment", {})
    if list(exp_a) != list(got_a):
        return f"member order: expected {list(exp_a)}, got {list(got_a)}"
    for member in exp_a:
        if exp_a[member] != got_a[member]:
            return f"member {member}: expected {exp_a[member]}, got {got_a[member]}"
    for key in COMPARED:
        if expected.get(key) != got.get(key):
            return f"{key}: expected {expected.get(key)}, got {got.get(key)}"
    return "no difference"


def _explain(line: dict[str, Any], got: dict[str, Any]) -> str:
    return (f"case {line['case']}\nrequest  {json.dumps(line['request'])}\n"
            f"expected {json.dumps(line['response'])}\ngot      {json.dumps(got)}\n"
            f"first difference: {_first_difference(line['response'], got)}")


def _safe_answer_problems(line: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """On a kafka_bug line: an assignment (no error) that keeps I1 and I2."""
    if "error" in got:
        return [f"answered with an error: {got['error']}"]
    request = line["request"]
    subscriptions = {m: v.get("topics") or [] for m, v in request["members"].items()}
    assignment = {m: [tuple(tp) for tp in ps] for m, ps in got["assignment"].items()}
    return (exclusive_ownership(assignment)
            + valid_targets(assignment, subscriptions, request["partitions"]))


def check_line(line: dict[str, Any], got: dict[str, Any]) -> None:
    expected = line["response"]
    if "kafka_bug" in line:
        problems = _safe_answer_problems(line, got)
        assert not problems, f"{line['case']} ({line['kafka_bug']}): {problems}"
    elif "error" in expected:
        assert "error" in got, _explain(line, got)
        kafka_class = expected["errorClass"].rsplit(".", 1)[-1]
        assert f"({kafka_class})" in got["error"], _explain(line, got)
    else:
        assert {k: got.get(k) for k in COMPARED} == {k: expected.get(k) for k in COMPARED} \
            and list(got["assignment"]) == list(expected["assignment"]), _explain(line, got)


def _api_answer(request: dict[str, Any]) -> dict[str, Any]:
    try:
        return run_assign(request)
    except AssignorError as exc:
        return {"error": error_text(exc)}


@pytest.mark.parametrize("index", range(len(LINES)), ids=[line_id(i, x) for i, x in
                                                         enumerate(LINES)])
def test_assign_line_matches_kafka(index: int) -> None:
    line = LINES[index]
    check_line(line, _api_answer(line["request"]))


def test_assign_lines_through_one_jsonl_process() -> None:
    """One `groupcheck jsonl` process answers every assign line in file order."""
    payload = "".join(json.dumps(line["request"]) + "\n" for line in LINES)
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "jsonl"], input=payload,
                          capture_output=True, text=True, cwd=ROOT, timeout=600, check=True)
    failures = differing_lines([json.loads(a) for a in proc.stdout.splitlines()])
    assert not failures, f"{len(failures)} lines differ; first:\n{failures[0]}"


def differing_lines(answers: list[dict[str, Any]]) -> list[str]:
    """How each answer (one per line of the file, in order) differs from Kafka's, where it
    does."""
    assert len(answers) == len(LINES)
    failures = []
    for line, got in zip(LINES, answers, strict=True):
        try:
            check_line(line, got)
        except AssertionError as exc:
            failures.append(str(exc))
    return failures


def test_jsonl_assign_answer_carries_assign_time() -> None:
    """The service's assign answer carries `ms`, the in-process assign time."""
    got = handle(LINES[0]["request"])
    assert isinstance(got.get("ms"), float) and got["ms"] >= 0.0
