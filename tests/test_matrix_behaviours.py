"""The matrix's distinct behaviours: bisections grouped by invariant and verdict per
release, one row each with its count of counterexamples, leading the text, ``matrix.json``
and ``index.html``, the bisections below as details (a synthetic set, no JVM)."""

from __future__ import annotations

from pathlib import Path

from groupcheck.engines.releases.behaviours import NOT_PLAYED, behaviours, column_label
from groupcheck.engines.releases.bisection import Bisection, VersionVerdict
from groupcheck.engines.releases.matrix import MatrixRun
from groupcheck.engines.releases.matrix_report import matrix_json, matrix_text, write_matrix
from groupcheck.engines.releases.windows import ABSENT, NA, PRESENT

RELEASES = ["java@2.8.0:", "java@3.0.0:", "java@3.4.0:", "java@3.5.1:"]


def _bisection(name: str, invariant: str, assignor: str, verdicts: list[str],
               releases: list[str] = RELEASES) -> Bisection:
    return Bisection(f"/out/{name}.json", invariant,
                     [VersionVerdict(t, v) for t, v in zip(releases, verdicts, strict=True)],
                     assignor=assignor)


def _set() -> list[Bisection]:
    fixed = [ABSENT, PRESENT, PRESENT, ABSENT]
    back = [PRESENT, ABSENT, ABSENT, PRESENT]
    return [_bisection("a", "I2", "cooperative-sticky", fixed),
            _bisection("b", "I2", "cooperative-sticky", fixed),
            _bisection("c", "I2", "sticky", fixed),
            _bisection("d", "I1", "range", back),
            _bisection("e", "I2", "range", [ABSENT, NA, PRESENT], RELEASES[:3]),
            Bisection("/out/f.json", None, error="not replayable")]


def test_bisections_of_one_invariant_and_verdicts_are_one_row_with_their_count() -> None:
    rows = behaviours(_set())
    assert [(b.invariant, b.verdicts, b.count) for b in rows] == [
        ("I1", (PRESENT, ABSENT, ABSENT, PRESENT), 1),
        ("I2", (ABSENT, PRESENT, PRESENT, ABSENT), 3),
        ("I2", (ABSENT, NA, PRESENT, NOT_PLAYED), 1)]
    assert rows[1].assignors == ["cooperative-sticky", "sticky"]
    assert rows[1].files == ["/out/a.json", "/out/b.json", "/out/c.json"]
    assert rows[0].regression and not rows[1].regression
    assert rows[0].windows_text() == ("present java@2.8.0:; absent java@3.0.0:–java@3.4.0:; "
                                      "back in java@3.5.1: (regression)")
    assert rows[2].windows_text() == "absent java@2.8.0:; n/a java@3.0.0:; present java@3.4.0:"


def test_a_release_column_is_headed_by_its_version() -> None:
    assert column_label("java@4.0.0-SNAPSHOT:") == "4.0.0-SNAPSHOT"
    assert column_label("wire:java@3.4.0:range") == "wire:java@3.4.0:range"
    assert column_label("builtin:range") == "builtin:range"


def _run() -> MatrixRun:
    run = MatrixRun([], budget=1.0, seed=0, jobs=1)
    run.bisections = {b.file: b for b in _set()}
    return run


def test_the_matrix_text_leads_with_the_behaviours() -> None:
    lines = matrix_text(_run()).splitlines()
    assert lines[0].startswith("distinct behaviours over the targets (5 counterexample(s) "
                               "in 3 row(s)")
    assert lines[1].split() == ["invariant", "2.8.0", "3.0.0", "3.4.0", "3.5.1", "count",
                                "assignors"]
    assert lines[2].split() == ["I1", "present", "absent", "absent", "present", "1", "range",
                                "(regression)"]
    assert lines[3].split() == ["I2", "absent", "present", "present", "absent", "3",
                                "cooperative-sticky,", "sticky"]
    assert lines[4].split() == ["I2", "absent", "n/a", "present", "-", "1", "range"]


def test_matrix_json_and_page_hold_the_behaviours_before_the_bisections(
        tmp_path: Path) -> None:
    body = matrix_json(_run(), RELEASES)
    assert body["releases"] == RELEASES
    assert [(b["invariant"], b["count"], b["regression"]) for b in body["behaviours"]] == [
        ("I1", 1, True), ("I2", 3, False), ("I2", 1, False)]
    assert body["behaviours"][1]["verdicts"] == [ABSENT, PRESENT, PRESENT, ABSENT]
    assert len(body["bisections"]) == 6
    _, page = write_matrix(_run(), RELEASES, tmp_path)
    html = page.read_text()
    assert html.index("Distinct behaviours") < html.index("<h2>Bisections")
    assert "<th>3.5.1</th>" in html and "back in java@3.5.1: (regression)" in html
