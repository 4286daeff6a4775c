"""``groupcheck matrix`` and ``groupcheck bisect`` on in-tree targets: the table, the JSON and
the HTML written, a violation's exit code, ``--versions`` ranges, and the bisection's
present / absent / first seen / gone logic (a mutant's counterexample over builtins)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.engines import EngineInputError, parse_versions
from groupcheck.engines.battery.results import BatteryResult, EngineResult
from groupcheck.engines.releases.bisection import (
    ABSENT,
    NA,
    PRESENT,
    Bisection,
    VersionVerdict,
    bisect_file,
)
from groupcheck.engines.releases.matrix import Cell, MatrixRun
from groupcheck.engines.releases.matrix_report import matrix_text
from groupcheck.properties.scope import Scope, prove
from groupcheck.targets.registry import resolve

from helpers.kafka_releases import fake_maven_repo

MUTANT = "mutant:cooperative-trust-claims"
BUILTIN = "builtin:cooperative-sticky"


def test_versions_range_is_inclusive_and_ordered(tmp_path: Path) -> None:
    repo = fake_maven_repo(tmp_path, "2.8.0", "3.4.0", "3.10.0", "4.0.0-SNAPSHOT", "4.0.0")
    assert parse_versions("3.4.0..4.0.0", repo) == [
        "java@3.4.0:", "java@3.10.0:", "java@4.0.0-SNAPSHOT:", "java@4.0.0:"]
    assert parse_versions("..3.4.0", repo) == ["java@2.8.0:", "java@3.4.0:"]
    assert parse_versions("3.10.0", repo) == ["java@3.10.0:"]
    with pytest.raises(EngineInputError, match="not in the repository"):
        parse_versions("2.7.0..3.4.0", repo)
    with pytest.raises(EngineInputError, match="backwards"):
        parse_versions("3.4.0..2.8.0", repo)


@pytest.mark.parametrize("versions", ["3.4.0..2.8.0", "1.0.0..3.4.0"])
def test_bad_versions_exit_2_with_one_line(tmp_path: Path, versions: str,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GROUPCHECK_MAVEN_REPO", fake_maven_repo(tmp_path / "m2", "2.8.0", "3.4.0"))
    assert main(["matrix", "--versions", versions, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--versions" in err
    assert main(["bisect", "x.json", "--versions", versions]) == 2


def test_matrix_writes_table_json_html_and_fails_on_a_mutant(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m"
    code = main(["matrix", BUILTIN, MUTANT, "--budget", "8", "--jobs", "2",
                 "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 1
    rows = [line for line in text.splitlines() if line.startswith(("builtin:", "mutant:"))]
    assert len(rows) >= 2 and "VIOLATED" in rows[1] and "VIOLATED" not in rows[0]
    assert "first seen in mutant:cooperative-trust-claims" in text
    data = json.loads((out / "matrix.json").read_text())
    assert data["budget"] == 8 and data["seed"] == 0 and not data["ok"]
    assert "seconds" not in data and all("seconds" not in c for c in data["cells"])
    cells = {c["target"]: c for c in data["cells"]}
    assert cells[MUTANT]["verdicts"]["I1"] == "VIOLATED"
    assert cells[BUILTIN]["result"]["engines"]["prove"]["verdicts"]
    assert any(b["firstSeenIn"] == MUTANT and b["absentIn"] == [BUILTIN]
               for b in data["bisections"])
    page = (out / "index.html").read_text()
    assert "<svg" in page and "href='#cex-" in page


def test_matrix_of_held_cells_exits_0(tmp_path: Path) -> None:
    assert main(["matrix", "builtin:range", "--budget", "1", "--jobs", "1",
                 "--out", str(tmp_path)]) == 0


def _mutant_request_file(tmp_path: Path) -> str:
    target = resolve(MUTANT)
    assert target.assign is not None and target.assignor is not None
    report = prove(target.assign, target.assignor,
                   Scope.parse("members=2,topics=1,partitions=3,generations=2,claims=2"),
                   workers=1, failures=tmp_path, target=MUTANT)
    path = report.counterexamples["I1"].file
    assert path is not None
    return path


def test_bisect_a_mutant_request_over_builtins(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _mutant_request_file(tmp_path)
    found = bisect_file(path, [BUILTIN, MUTANT, "builtin:sticky", "builtin:range"])
    assert [o.verdict for o in found.outcomes][:2] == [ABSENT, PRESENT]
    assert found.first_seen == MUTANT and found.present_in == [MUTANT]
    assert found.gone_in == "builtin:sticky"
    assert main(["bisect", path, "--target", BUILTIN, "--target", MUTANT]) == 1
    text = capsys.readouterr().out
    assert "first seen in mutant:cooperative-trust-claims; gone in none" in text
    assert main(["bisect", path, "--target", BUILTIN]) == 0


def test_bisection_summary_logic() -> None:
    b = Bisection("f.json", "I1", [VersionVerdict("v1", NA), VersionVerdict("v2", ABSENT),
                                   VersionVerdict("v3", PRESENT), VersionVerdict("v4", ABSENT),
                                   VersionVerdict("v5", PRESENT), VersionVerdict("v6", NA),
                                   VersionVerdict("v7", ABSENT), VersionVerdict("v8", ABSENT)])
    assert b.first_seen == "v3" and b.gone_in == "v7"
    assert b.present_in == ["v3", "v5"] and b.absent_in == ["v2", "v4", "v7", "v8"]
    assert Bisection("f", None, [VersionVerdict("a", PRESENT)]).gone_in is None


def test_each_cell_shows_the_depth_it_reached_in_a_column() -> None:
    def cell(scopes: int, examples: int) -> Cell:
        prove = EngineResult("prove", ("I1",), runs=10, depth=f"{scopes} of 6 scopes")
        fuzz = EngineResult("fuzz", ("I1",), runs=examples)
        return Cell(BUILTIN, "cooperative-sticky", 1.0,
                    BatteryResult(BUILTIN, [prove, fuzz], assignor="cooperative-sticky"))
    shallow, deep = cell(1, 20), cell(4, 1_200)
    assert shallow.reached() == "1/6 scopes, 20 examples"
    assert deep.reached() == "4/6 scopes, 1,200 examples"
    text = matrix_text(MatrixRun([shallow, deep], budget=30.0, seed=0, jobs=1))
    header, first, second = text.splitlines()[:3]
    assert "reached" in header
    assert "1/6 scopes, 20 examples" in first and "4/6 scopes, 1,200 examples" in second
    assert deep.to_json()["reached"] == "4/6 scopes, 1,200 examples"
    assert deep.result is not None
    deep.result.engines.append(EngineResult("scenarios", ("I1",), runs=2_500))
    assert deep.reached() == "4/6 scopes, 1,200 examples, 2,500 stories"
