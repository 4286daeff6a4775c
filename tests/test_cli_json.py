"""``--json`` on every command that prints a result: the output is one JSON object (``prove``:
one per assignor, a line each) in the shape the commands reference documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck import engines
from groupcheck.cli import main, reference

from helpers import ROOT

DATA = ROOT / "tests" / "data"
REPLAY = str(DATA / "sticky_v0_replay.json")
#: commands that print no result of their own: a service and a server
NO_RESULT = {"jsonl", "broker"}


def _json_of(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> Any:
    assert main([*argv, "--json"]) == code
    out = capsys.readouterr().out
    return json.loads(out)


def _envelope(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]
              ) -> dict[str, Any]:
    data: dict[str, Any] = _json_of(argv, code, capsys)
    assert data["command"] == argv[0] and data["exit"] == code
    assert isinstance(data["lines"], list) and isinstance(data["result"], dict)
    return data


def test_every_command_with_a_result_has_json() -> None:
    for name, parser in reference.command_parsers().items():
        has = any(a.dest == "json" for a in parser._actions)
        assert has == (name not in NO_RESULT), name


def test_assign_check_and_prove_keep_their_own_shapes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = tmp_path / "req.json"
    request.write_text(json.dumps({"assignor": "range", "partitions": {"t0": 2},
                                   "members": {"a": {"topics": ["t0"]}}}))
    assert _json_of(["assign", str(request)], 0, capsys)["assignment"] == {
        "a": [["t0", 0], ["t0", 1]]}
    checked = _json_of(["check", "--target", "builtin:range", "--budget", "3",
                        "--failures", str(tmp_path)], 0, capsys)
    assert checked["target"] == "builtin:range" and checked["ok"] is True
    assert main(["prove", "--target", "builtin:range", "--scope",
                 "members=2,topics=1,partitions=2", "--jobs", "1", "--json",
                 "--failures", str(tmp_path)]) == 0
    proved = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(proved) == 1 and proved[0]["ok"] is True


def test_fuzz_scenarios_and_zoo_json(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    fuzzed = _envelope(["fuzz", "--target", "builtin:range", "--max-examples", "3",
                        "--failures", str(tmp_path)], 0, capsys)
    assert fuzzed["result"]["assignors"] == [
        {"assignor": "range", "supported": True, "failed": False}]
    played = _envelope(["scenarios", "--target", "builtin:range", "--count", "2",
                        "--failures", str(tmp_path)], 0, capsys)
    assert played["result"]["assignors"]["range"]["supported"] is True
    zoo = _envelope(["zoo", "--row", "2", "--failures", str(tmp_path)], 0, capsys)
    assert [row["row"] for row in zoo["result"]["rows"]] == ["2"]
    assert zoo["result"]["rows"][0]["caught"]


def test_replay_shrink_and_bisect_json(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    replayed = _envelope(["replay", REPLAY], 1, capsys)
    assert replayed["result"] == {"file": REPLAY, "reproduced": True, "different": False,
                                  "picture": None}
    shrunk = _envelope(["shrink", REPLAY, "--out", str(tmp_path), "--budget", "5"], 0, capsys)
    written = tmp_path / "sticky_v0_replay.shrunk.json"
    assert shrunk["result"]["written"] == str(written) and written.is_file()
    bisected = _envelope(["bisect", REPLAY, "--target", "builtin:range", "--target",
                          "mutant:sticky-user-data-v0"], 1, capsys)
    outcomes = bisected["result"]["outcomes"]
    assert [o["target"] for o in outcomes] == ["builtin:range", "mutant:sticky-user-data-v0"]


def test_diff_json_tells_agreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["diff", "--no-vectors", "--scope", "members=2,topics=2,partitions=1,symmetry=0",
            "--failures", str(tmp_path), "--target", "builtin:roundrobin", "--target"]
    agreed = _envelope([*base, "python:groupcheck.impl.assignors.roundrobin:"
                        "RoundRobinAssignor"], 0, capsys)
    assert agreed["result"]["agree"] is True
    differ = _envelope([*base, "mutant:roundrobin-topic-cursor"], 1, capsys)
    assert differ["result"]["agree"] is False and any("saved" in ln for ln in differ["lines"])


def test_matrix_json_is_its_matrix_file(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "matrix"
    data = _envelope(["matrix", "--target", "builtin:range", "--budget", "2", "--jobs", "1",
                      "--out", str(out)], 0, capsys)
    assert data["result"] == json.loads((out / "matrix.json").read_text(encoding="utf-8"))


def test_upgrade_json_has_a_row_per_path(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The wire run itself is the upgrade tests'; here its table, empty, as JSON."""
    monkeypatch.setattr(engines, "run_upgrade", lambda *a, **k: engines.UpgradeTable())
    data = _envelope(["upgrade", "--target", "wire:java@3.4.0:range", "--target",
                      "wire:java@3.5.1:range"], 0, capsys)
    assert data["result"] == {"members": 4, "seed": 0, "rows": []}


@pytest.mark.audit  # Spark: on the worker of the audit's other tests, never beside them
def test_audit_json_is_its_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pyspark")
    out = tmp_path / "audit"
    data = _envelope(["audit", "--scenarios", "6", "--chunk-size", "6", "--slices", "2",
                      "--shrink-seconds", "0", "--target", "builtin:range", "--out", str(out)],
                     0, capsys)
    assert data["result"] == json.loads((out / "summary.json").read_text(encoding="utf-8"))
