"""The differences between Kafka's releases groupcheck found (``findings/releases-*``,
F-R1 to F-R7; docs/explanation/findings.md) still show on exactly the releases each file
records, and on no other: every file is bisected over every release the Maven repository
holds of those it names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.engines import bisect_file

from helpers.environment import SETTINGS
from helpers.kafka_releases import repo_releases

FINDINGS = sorted((Path(__file__).resolve().parent.parent / "findings")
                  .glob("releases-*.json"))


def _notes(path: Path) -> dict[str, Any]:
    body = json.loads(path.read_text(encoding="utf-8"))
    notes = body.get("release_finding") or body["groupcheck"]
    return dict(notes)


def test_every_release_finding_is_kept() -> None:
    assert sorted(_notes(p)["finding"] for p in FINDINGS) == [f"F-R{n}" for n in range(1, 8)]


#: the default run's: one finding of the sticky family and two of the cooperative one, each a
#: window of releases with both ends inside the repository; the rest are tox -e heavy's
DEFAULT_FINDINGS = ("releases-sticky-I4a-rejoin-moves-2.8",
                    "releases-cooperative-sticky-I2-unsubscribed-member-3.0-3.4",
                    "releases-cooperative-sticky-I5-rack-aware-handover-3.5-3.6")


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=[] if p.stem in DEFAULT_FINDINGS else [pytest.mark.heavy])
    for p in FINDINGS], ids=lambda p: p.stem)
def test_a_release_finding_shows_on_exactly_its_releases(path: Path) -> None:
    notes = _notes(path)
    named = [*notes["present"], *notes["absent"]]
    releases = repo_releases(*named)
    result = bisect_file(str(path), [f"java@{v}:" for v in releases], settings=SETTINGS)
    assert not result.error, result.error
    assert result.invariant == notes["invariant"]
    assert result.present_in == [f"java@{v}:" for v in releases if v in notes["present"]]
    assert result.absent_in == [f"java@{v}:" for v in releases if v in notes["absent"]]


@pytest.mark.versions
@pytest.mark.wire
@pytest.mark.slow
def test_the_java_wire_finding_shows_on_every_release() -> None:
    """F-W1 (a member stalled past max.poll.interval.ms overlaps, documented) plays on real
    Java consumers of every release the Maven repository holds, and shows on each."""
    path = FINDINGS[0].parent / "wire-java-range-adversarial-stall-I1.json"
    releases = repo_releases()
    targets = [f"wire:java@{v}:range:adversarial" for v in releases]
    result = bisect_file(str(path), targets, settings=SETTINGS)
    assert not result.error, result.error
    assert result.invariant == "I1"
    assert result.present_in == targets
