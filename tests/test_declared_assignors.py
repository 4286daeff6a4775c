"""The ``assignors`` op: a process names the assignors it serves, and a ``jsonl:`` target
without ``--assignor`` is checked under those names; a process that does not know the op is
asked Kafka's four names, as before; a malformed list is one line and exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.impl.jsonl import handle
from groupcheck.targets.offers import close_all, expand
from groupcheck.targets.processes.jsonl_process import declared_names
from groupcheck.targets.registry import resolve
from groupcheck.targets.served import target_ops
from groupcheck.targets.target import BUILTIN_ASSIGNORS, TargetError

from helpers import TARGETS

SERVICE = f"{sys.executable} {TARGETS / 'partial_service.py'}"
WHOLE_TOPIC = f"jsonl:{sys.executable} -m groupcheck jsonl --target mutant:custom-whole-topic"


def test_groupcheck_serves_the_assignors_op_with_the_names_it_runs() -> None:
    assert handle({"op": "assignors"}) == {"assignors": list(BUILTIN_ASSIGNORS)}
    served = target_ops(resolve("mutant:custom-whole-topic"))
    assert handle({"op": "assignors"}, served) == {"assignors": ["whole-topic"]}
    module = target_ops(resolve("python:groupcheck.targets.zoo.escapes"))
    names = handle({"op": "assignors"}, module)["assignors"]
    assert {"whole-topic", "least-loaded"} <= set(names)


def test_a_process_declaring_a_custom_name_is_offered_under_it() -> None:
    offers = expand(WHOLE_TOPIC)
    try:
        assert [(o.label, o.supported) for o in offers] == [("whole-topic", True)]
        target = offers[0].target
        assert target is not None and target.assignor == "whole-topic"
        assert "not declared" in target.balance_why  # Kafka's isBalanced, the strictest
    finally:
        close_all(offers)
    with pytest.raises(TargetError, match="--assignor range is not one of whole-topic"):
        expand(WHOLE_TOPIC, ["range"])


def test_check_judges_a_declared_custom_assignor_and_finds_its_imbalance(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--target", WHOLE_TOPIC, "--budget", "60", "--first", "--json",
                 "--failures", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and list(report["assignors"]) == ["whole-topic"]
    found = {inv for e in report["assignors"]["whole-topic"]["engines"].values()
             for inv in e["violations"]}
    assert "I3" in found


@pytest.mark.parametrize("old", ["--old", "--dies-on-old"])
def test_a_process_without_the_assignors_op_is_asked_kafkas_four_names(old: str) -> None:
    """An error answer, or a process that exits on the request (the next one starts it
    again), is a process older than the op."""
    offers = expand(f"jsonl:{SERVICE} {old}")
    try:
        assert [o.label for o in offers] == list(BUILTIN_ASSIGNORS)
        assert [o.label for o in offers if not o.supported] == ["roundrobin"]
    finally:
        close_all(offers)


@pytest.mark.parametrize("declared", [
    '"whole-topic"', "[]", '["range", "range"]', "[1]", '[""]', '["a,b"]', "null"])
def test_a_malformed_assignors_answer_is_one_line_and_exit_2(
        declared: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = f"jsonl:{SERVICE} --declares {declared!r}"
    assert main(["check", "--target", target, "--budget", "5",
                 "--failures", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "malformed answer to the assignors request" in err[0], err


@pytest.mark.parametrize("answer", [
    {"error": "InvalidRequestError: unknown op 'assignors'"}, {"pong": True}])
def test_an_answer_without_names_means_the_process_does_not_know_the_op(
        answer: dict) -> None:
    assert declared_names(answer) is None
