"""``matrix`` on wire targets: a wire template (``wire:java:range``, no release) named with
``--versions`` is put at each release (``wire:java@V:range``), other targets as they were;
and one real matrix of two releases whose cells run the battery on real Java consumers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.engines import named_and_released
from groupcheck.targets.processes.maven_repo import release_order

from helpers.kafka_releases import fake_maven_repo, repo_releases


def test_a_wire_template_is_put_at_each_release(tmp_path: Path) -> None:
    repo = fake_maven_repo(tmp_path, "2.8.0", "3.4.0", "3.5.1")
    assert named_and_released(["wire:java:range"], "3.4.0..3.5.1", repo) == [
        "wire:java@3.4.0:range", "wire:java@3.5.1:range"]
    assert named_and_released(["builtin:range", "wire:mixed:java+kafkajs:roundrobin",
                               "wire:java:sticky:adversarial"], "..3.4.0", repo) == [
        "builtin:range", "wire:mixed:java@2.8.0+kafkajs:roundrobin",
        "wire:mixed:java@3.4.0+kafkajs:roundrobin", "wire:java@2.8.0:sticky:adversarial",
        "wire:java@3.4.0:sticky:adversarial"]


def test_without_a_wire_template_the_releases_follow_as_java_targets(tmp_path: Path) -> None:
    repo = fake_maven_repo(tmp_path, "2.8.0", "3.4.0")
    assert named_and_released(["wire:java@2.8.0:range", "builtin:range"], "3.4.0", repo) == [
        "wire:java@2.8.0:range", "builtin:range", "java@3.4.0:"]
    assert named_and_released(["wire:kafka-python:range"], "3.4.0", repo) == [
        "wire:kafka-python:range", "java@3.4.0:"]


@pytest.mark.wire
@pytest.mark.slow  # two Java releases' cells, a minute or more: tox -e wire
def test_a_matrix_of_a_wire_template_runs_a_cell_per_release_on_real_clients(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    held = sorted(repo_releases(), key=release_order)
    repo_releases("3.4.0")
    at = held.index("3.4.0")
    low, high = held[at:at + 2] if at + 1 < len(held) else held[at - 1:at + 1]
    code = main(["matrix", "--target", "wire:java:range", "--versions", f"{low}..{high}",
                 "--budget", "3", "--jobs", "1", "--out", str(tmp_path), "--quiet", "--json"])
    result = json.loads(capsys.readouterr().out)["result"]
    cells = result["cells"]
    assert [(c["target"], c["assignor"]) for c in cells] == [
        (f"wire:java@{low}:range", "range"), (f"wire:java@{high}:range", "range")]
    assert all(c["supported"] for c in cells), [c.get("error") for c in cells]
    assert [c["profile"].split(":")[0] for c in cells] == [f"java {low}", f"java {high}"]
    assert code == (0 if result["ok"] else 1)
