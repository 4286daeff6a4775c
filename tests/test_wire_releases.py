"""A group of consumers of three releases of Kafka's client on groupcheck's broker: each
member runs its own release (``wire:mixed:java@A+java@B+java@C:<assignor>``), the leader's
release decides the assignment, every member reads the others' bytes, and the group is
judged on the wire and on the coordinator's side."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from groupcheck.cli import main
from groupcheck.targets.processes.java_process import java_classpath
from groupcheck.targets.wire.clients import hello

from helpers.environment import SETTINGS
from helpers.kafka_releases import DEFAULT_RUN, repo_releases


@pytest.mark.heavy
def test_a_group_of_three_releases_settles_and_holds_every_invariant() -> None:
    releases = repo_releases(*DEFAULT_RUN)
    target = f"wire:mixed:{'+'.join(f'java@{v}' for v in releases)}:range"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--target", target, "--budget", "12", "--json"])
    body = json.loads(out.getvalue())
    fuzz = body["assignors"]["range"]["engines"]["fuzz"]
    assert code == 0 and body["ok"], fuzz["violations"]
    assert fuzz["runs"] >= 1 and fuzz["judged"]["I1"] >= 1 and fuzz["judged"]["I10"] >= 1


def test_each_member_runs_its_own_release() -> None:
    for release in repo_releases(*DEFAULT_RUN):
        info = hello(f"java@{release}", java_classpath(release, "", SETTINGS))
        assert info.client == "java" and info.version == release
