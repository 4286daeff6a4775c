"""Kafka's own Java client through the ``java:`` driver reproduces every golden vector line.

The vectors were recorded from Kafka's client; the driver runs that client again, so every
answer must be the recorded one exactly: codec lines field for field (both views and their
errors), assign lines member for member in the order of Kafka's result map, with the user
data and generation, and the ``kafka_bug`` lines too (they are Kafka's own answers). One JVM
answers each whole file in order, as the target runs it.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from helpers.kafka_java import java_command
from helpers.vectors import load

COMMAND = java_command()
DRIVER = COMMAND.index("groupcheck.driver.GroupcheckDriver")


def _answers(lines: list[dict[str, Any]], *jvm_options: str) -> list[dict[str, Any]]:
    payload = "".join(json.dumps(line["request"]) + "\n" for line in lines)
    command = COMMAND[:DRIVER - 2] + list(jvm_options) + COMMAND[DRIVER - 2:]
    done = subprocess.run(command, input=payload, capture_output=True, text=True,
                          timeout=600, check=True)
    answers = [json.loads(a) for a in done.stdout.splitlines()]
    assert len(answers) == len(lines), done.stderr[-2000:]
    return answers


def _differences(lines: list[dict[str, Any]], answers: list[dict[str, Any]]) -> list[str]:
    out = []
    for line, got in zip(lines, answers, strict=True):
        got.pop("ms", None)
        expected = line["response"]
        order = list(got.get("assignment", {})) == list(expected.get("assignment", {}))
        if got != expected or not order:
            out.append(f"case {line['case']}\nrequest  {json.dumps(line['request'])}\n"
                       f"expected {json.dumps(expected)}\ngot      {json.dumps(got)}")
    return out


@pytest.mark.parametrize("name", ["codec.jsonl", "assign.jsonl"])
def test_java_driver_answers_every_vector_line_as_recorded(name: str) -> None:
    lines = load(name)
    differences = _differences(lines, _answers(lines))
    assert not differences, f"{len(differences)} of {len(lines)} lines differ; first:\n" \
                            f"{differences[0]}"


def test_kafka_bug_lines_are_answered_with_kafkas_own_breach() -> None:
    """The lines where Kafka breaks I1/I2 or throws come back exactly so from the driver:
    the errors with Kafka's class, the assignments with the double or misplaced partition."""
    lines = [x for x in load("assign.jsonl") if "kafka_bug" in x]
    answers = _answers(lines)
    assert len(lines) >= 30 and not _differences(lines, answers)
    assert {a["errorClass"] for a in answers if "error" in a} == {
        "java.lang.IllegalStateException", "java.lang.NullPointerException"}


def test_raw_message_views_read_the_same_without_kafkas_decoder() -> None:
    """Clients before Kafka 3.x's raw-message decoder get the ``data`` views by reading the
    generated message directly; forced onto that path, every codec line still matches."""
    lines = load("codec.jsonl")
    differences = _differences(lines, _answers(lines, "-Dgroupcheck.driver.fallback=true"))
    assert not differences, differences[0]
