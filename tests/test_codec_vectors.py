"""Every codec line recorded from Kafka's Java client, reproduced exactly.

Through the Python API (`handle`) and through one long-lived `groupcheck jsonl` process.
Where Kafka raised, we must answer with an error too (our own text), in both views.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from groupcheck.impl.jsonl import handle

from helpers import ROOT
from helpers.vectors import load

LINES = [line for line in load("codec.jsonl") if line["request"]["op"] != "user_data"]


def _matches(expected: dict[str, Any], got: dict[str, Any]) -> bool:
    if "error" in expected:
        return "error" in got and (("dataError" in got) == ("dataError" in expected))
    return got == expected


def _explain(line: dict[str, Any], got: dict[str, Any]) -> str:
    return (f"case {line['case']}\nrequest  {json.dumps(line['request'], ensure_ascii=False)}\n"
            f"expected {json.dumps(line['response'], ensure_ascii=False)}\n"
            f"got      {json.dumps(got, ensure_ascii=False)}")


@pytest.mark.parametrize("index", range(len(LINES)))
def test_codec_line_matches_kafka(index: int) -> None:
    line = LINES[index]
    got = handle(line["request"])
    assert _matches(line["response"], got), _explain(line, got)


def test_codec_lines_through_one_jsonl_process() -> None:
    """One `groupcheck jsonl` process answers every codec line, in order, one line each."""
    payload = "".join(json.dumps(line["request"]) + "\n" for line in LINES)
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "jsonl"], input=payload,
                          capture_output=True, text=True, cwd=ROOT, timeout=300, check=True)
    answers = proc.stdout.splitlines()
    assert len(answers) == len(LINES)
    mismatches = [(line, json.loads(a)) for line, a in zip(LINES, answers, strict=True)
                  if not _matches(line["response"], json.loads(a))]
    assert not mismatches, _explain(*mismatches[0])


def test_decoder_errors_name_offset_and_field() -> None:
    """A malformed input gives CodecError's offset, field and version in the error text."""
    got = handle({"op": "decode_subscription", "hex": "000300000005"})
    assert got["error"].startswith("CodecError")
    assert "offset 2, field topics, version 3" in got["error"]
