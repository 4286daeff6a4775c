"""``groupcheck bisect`` across three of Kafka's releases (oldest, middle, newest): a request
that puts a generation in a subscription fails on a client without KIP-792. Skipped with the
reason without $GROUPCHECK_MAVEN_REPO or a JDK, failed instead when GROUPCHECK_REQUIRE_KAFKA is
set (`kafka_releases`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupcheck.cli import main

from kafka_releases import DEFAULT_RUN, repo_releases

FILE = Path(__file__).parent / "data" / "generation_without_kip792.json"


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
    assert code == 1 and out[-1].startswith("first seen in java@2.8.0:; gone in java@3.4.0:")
