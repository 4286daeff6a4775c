"""``check`` on three releases of Kafka's client (the oldest, one in the middle and the
newest the repository holds): each release is judged by its own profile, so nothing it
lacks is an ERROR or a violation, the harness never makes the client raise, and I10 holds
across the versions each release writes and reads."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main

from helpers.kafka_releases import DEFAULT_RUN, repo_releases

#: what an answer says when the harness, not the client, is at fault
HARNESS_ERRORS = ("UnsupportedOperationException", "InvalidRequestError", "cannot tell",
                  "has no member")


@functools.cache
def _check(release: str) -> tuple[dict[str, Any], Path]:
    """``check --json`` of the release's cooperative-sticky (run once per release), and the
    folder of its counterexample files."""
    repo_releases(*DEFAULT_RUN)
    failures = Path(tempfile.mkdtemp(prefix=f"release-{release}-"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check", "--target", f"java@{release}:", "--assignor",
                     "cooperative-sticky", "--budget", "3", "--json", "--failures",
                     str(failures)])
    body = json.loads(out.getvalue())
    assert code == (0 if body["ok"] else 1)
    return dict(body["assignors"]["cooperative-sticky"]), failures


@pytest.mark.parametrize("release", [r if r == "3.4.0" else pytest.param(r, marks=pytest.mark.heavy)
                                     for r in DEFAULT_RUN])
def test_a_release_is_judged_by_its_profile_without_harness_errors(release: str) -> None:
    cell, failures = _check(release)
    assert cell["profile"].startswith(f"java {release}:")
    for engine in cell["engines"].values():
        for finding in [*engine["violations"].values(), *engine["inheritedFromKafka"].values()]:
            assert not any(e in finding["violation"] for e in HARNESS_ERRORS), finding
    assert cell["engines"]["codec"]["verdicts"]["I10"] == "holds"
    for path in failures.glob("*.json"):  # every counterexample names the release's profile
        body = json.loads(path.read_text())
        notes = body.get("groupcheck", body)
        assert notes["clientProfile"]["version"] == release


def test_a_release_without_generations_has_i6_absent_not_violated() -> None:
    oldest = DEFAULT_RUN[0]
    cell, _ = _check(oldest)
    assert "no generation" in cell["profile"]
    prove = cell["engines"]["prove"]
    assert prove["verdicts"]["I6"] == "absent"
    assert f"absent in {oldest}" in prove["notJudged"]["I6"]
    assert cell["engines"]["codec"]["verdicts"].get("I12") == "absent"
