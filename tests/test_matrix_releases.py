"""``groupcheck bisect`` across three of Kafka's releases (oldest, middle, newest): finding
F-R1 — cooperative-sticky gives a partition to a member that subscribes to nothing when that
member's generation is higher than the claimant's — is present in 3.4.0 and absent in 2.8.0
and 4.0.0-SNAPSHOT. Skipped with the reason without $GROUPCHECK_MAVEN_REPO or a JDK, failed
instead when GROUPCHECK_REQUIRE_KAFKA is set (`kafka_releases`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupcheck.cli import main

from helpers.kafka_releases import DEFAULT_RUN, repo_releases

FILE = Path(__file__).parent / "data" / "cooperative_sticky_gives_to_unsubscribed.json"
#: ``tox -e versions`` runs it after the matrix of releases (``pytest -m versions``)
pytestmark = pytest.mark.versions


def test_bisect_across_three_releases(capsys: pytest.CaptureFixture[str]) -> None:
    held = repo_releases(*DEFAULT_RUN)
    args = ["bisect", str(FILE)]
    for v in held:
        args += ["--target", f"java@{v}:"]
    code = main(args)
    out = capsys.readouterr().out.splitlines()
    versions = [line.split()[0] for line in out[1:-1]]
    assert versions == [f"java@{v}:" for v in DEFAULT_RUN]
    assert all(line.split()[1] in ("present", "absent") for line in out[1:-1])
    assert [line.split()[1] for line in out[1:-1]] == ["absent", "present", "absent"]
    assert "I2: t1-0 assigned to m0, which does not subscribe to t1" in out[2]
    assert code == 1 and out[-1] == (
        "absent java@2.8.0:; present java@3.4.0:; absent java@4.0.0-SNAPSHOT:; "
        "first seen in java@3.4.0:; gone in java@4.0.0-SNAPSHOT:")
