"""Deviations D1–D4 as a judgement of differences (`properties.deviations`): every line the
golden vectors mark ``kafka_bug`` is a difference a deviation explains, every other line is
no difference at all, and a difference is explained only with all three of its conditions
(Kafka's answer of the deviation's kind, ours keeping I1 and I2, the deviation's premise).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from groupcheck.engines.differential.search import builtin_answer, canonical_error
from groupcheck.properties.deviations import (
    DEVIATIONS,
    KINDS,
    explain,
    kafka_breach,
    premises,
    same_answer,
)

from helpers.vectors import load

LINES = load("assign.jsonl")
BUGS = [x for x in LINES if "kafka_bug" in x]

# D1-D3 (docs/explanation/model.md): requests in client mode and the answers Kafka gave
D1 = {"assignor": "sticky", "partitions": {"t": 1}, "members": {
    "m": {"topics": ["t"], "owned": [["t", 1]], "generation": 1},
    "n": {"topics": ["t"], "owned": [["t", 0]], "generation": 1}}}
D2 = {"assignor": "sticky", "partitions": {"t2": 1}, "members": {
    "m2a": {"topics": ["t2"], "owned": [], "generation": 1},
    "m1": {"topics": [], "owned": [], "generation": 1}}}
D3 = {"assignor": "sticky", "partitions": {"t": 1}, "members": {
    "a": {"topics": ["t"], "owned": [], "generation": 1},
    "b": {"topics": [], "owned": [["t", 0]], "generation": 2},
    "c": {"topics": ["t"], "owned": [["t", 1], ["t", 0]], "generation": 3}}}


def _kafka(line: dict[str, Any]) -> dict[str, Any]:
    response = line["response"]
    if "error" in response:
        return {"error": canonical_error(response["error"])}
    return response


def test_every_kafka_bug_line_is_a_difference_a_deviation_explains() -> None:
    assert len(BUGS) >= 30
    seen: set[str] = set()
    for line in BUGS:
        ours, guard = builtin_answer(line["request"])
        kafka = _kafka(line)
        assert not same_answer(ours, kafka), line["case"]
        why = explain(line["request"], ours, kafka, guard)
        assert why.explained, (line["case"], why)
        assert all(why.kind in KINDS[d] for d in why.deviations)
        seen.update(why.deviations)
    assert {"D1", "D2", "D3"} <= seen


@pytest.mark.parametrize("index", [i for i, x in enumerate(LINES) if "kafka_bug" not in x][::7])
def test_lines_kafka_answers_correctly_are_the_same_answer_list_for_list(index: int) -> None:
    """Every seventh unmarked line (the vector tests hold all of them): the comparison the
    differential run uses finds no difference there."""
    line = LINES[index]
    ours, _ = builtin_answer(line["request"])
    if "error" in line["response"]:  # the vectors' own test checks the class
        assert "error" in ours
        return
    assert same_answer(ours, line["response"]), line["case"]


def test_the_answers_must_be_equal_in_member_and_partition_order() -> None:
    ours, _ = builtin_answer(D1 | {"partitions": {"t": 3}})
    moved = copy.deepcopy(ours)
    first = next(iter(moved["assignment"]))
    moved["assignment"] = dict(reversed(list(moved["assignment"].items())))
    assert not same_answer(ours, moved)
    reordered = copy.deepcopy(ours)
    reordered["assignment"][first] = list(reversed(reordered["assignment"][first]))
    assert len(reordered["assignment"][first]) > 1 and not same_answer(ours, reordered)
    other_data = copy.deepcopy(ours)
    other_data["userData"][first] = None
    assert not same_answer(ours, other_data)
    assert same_answer(ours, {**copy.deepcopy(ours), "ms": 99.0})


def test_each_readme_example_is_explained_by_its_own_deviation() -> None:
    cases = [(D1, {"error": "IllegalStateException: No more unfilled consumers to be "
                            "assigned."}, "D1"),
             (D2, {"assignment": {"m1": [["t2", 0]], "m2a": []}, "protocol": "EAGER"}, "D2"),
             (D3, {"error": "NullPointerException: Cannot invoke \"java.util.List.size()\""},
              "D3")]
    for request, kafka, deviation in cases:
        ours, guard = builtin_answer(request)
        assert deviation in explain(request, ours, kafka, guard).deviations


def test_a_difference_kafka_gets_right_is_never_explained() -> None:
    """Kafka's answer keeps I1 and I2: ours must equal it, whatever the request."""
    ours, _ = builtin_answer(D2)
    kafka = copy.deepcopy(ours)
    kafka["assignment"] = {"m2a": [["t2", 0]], "m1": []}  # the same sets, another order
    why = explain(D2, ours, kafka)
    assert not why.explained and why.kind == "" and "keeps I1 and I2" in why.why


def test_a_difference_is_unexplained_when_our_answer_breaks_i1_or_i2_too() -> None:
    kafka = {"assignment": {"m1": [["t2", 0]], "m2a": []}, "protocol": "EAGER"}
    ours = {"assignment": {"m1": [["t2", 0]], "m2a": [["t2", 0]]}, "protocol": "EAGER"}
    why = explain(D2, ours, kafka)
    assert not why.explained and "I1" in why.why
    assert not explain(D2, {"error": "NullPointerException: x"}, kafka).explained


def test_a_kafka_breach_outside_every_deviations_premise_is_unexplained() -> None:
    """Equal subscriptions, no empty one, no claim beyond the metadata: none of D1-D3's
    situations, so even a broken answer of Kafka's is not explained (a new finding)."""
    request = {"assignor": "sticky", "partitions": {"t": 2}, "members": {
        "a": {"topics": ["t"], "owned": [], "generation": None},
        "b": {"topics": ["t"], "owned": [], "generation": None}}}
    ours, _ = builtin_answer(request)
    kafka = {"assignment": {"a": [["t", 0], ["t", 1]], "b": [["t", 1]]}, "protocol": "EAGER"}
    assert kafka_breach(request, kafka) == "I1" and premises(request) == []
    why = explain(request, ours, kafka)
    assert not why.explained and "no deviation" in why.why
    range_request = {**request, "assignor": "range", "partitions": {"t": 1}, "members": {
        "a": {"topics": [], "owned": [], "generation": None},
        "b": {"topics": ["t"], "owned": [], "generation": None}}}
    assert premises(range_request) == []  # D2-D4 are about the sticky family only


def test_a_hang_is_d4_only_where_our_loop_guard_fired_on_the_same_request() -> None:
    request = {"assignor": "sticky", "partitions": {"t": 4, "u": 2}, "members": {
        "a": {"topics": ["t"], "owned": [], "generation": None},
        "b": {"topics": ["t", "u"], "owned": [], "generation": None}}}
    ours, guard = builtin_answer(request)
    hang = {"error": "TIMEOUT: no answer", "timeout": True}
    assert not guard and not explain(request, ours, hang, guard).explained
    assert explain(request, ours, hang, loop_guard=True).deviations == ("D4",)
    equal = {**request, "members": {m: {**v, "topics": ["t"]}
                                    for m, v in request["members"].items()}}
    assert not explain(equal, ours, hang, loop_guard=True).explained  # not the general path


def test_a_broken_driver_is_never_one_of_kafkas_answers() -> None:
    ours, _ = builtin_answer(D1)
    failed = {"error": "FAILURE: process exited", "failure": True}
    assert not explain(D1, ours, failed).explained


def test_canonical_errors_name_kafkas_exception_class() -> None:
    assert canonical_error("NullPointerError (NullPointerException): boom") == \
        "NullPointerException: boom"
    assert canonical_error("NullPointerException: boom") == "NullPointerException: boom"
    assert canonical_error("InvalidRequestError: bad (x): y") == "InvalidRequestError: bad (x): y"
    assert set(DEVIATIONS) == set(KINDS) == {"D1", "D2", "D3", "D4"}
