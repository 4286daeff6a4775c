"""A wire story (a state-machine replay file recorded on a ``wire:`` target) in a bisection:
over ``--versions`` each Java release becomes ``wire:java@V:<assignor>`` and plays the story
there; an assignor-level target, which cannot play what happened on the wire, says n/a with
its reason and never absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.engines import bisect_file, load_counterexample, story_targets
from groupcheck.engines.releases.bisection import NA
from groupcheck.targets.processes.maven_repo import release_order

from helpers.kafka_releases import repo_releases

DATA = Path(__file__).parent / "data"
RECORDED = DATA / "wire-java_2.8.0-cooperative-sticky-stale-claim-I6.json"
MIXED = Path(__file__).parent.parent / "findings" / \
    "wire-mixed-java-kafkajs-roundrobin-I11-no-shared-protocol.json"
ASSIGNOR_LEVEL = DATA / "sticky_v0_replay.json"


def _story(tmp_path: Path, target: str, events: list[dict[str, object]]) -> str:
    path = tmp_path / "story.json"
    path.write_text(json.dumps({"format": "groupcheck-replay/1", "target": target,
                                "invariant": "I1", "violations": [], "events": events}))
    return str(path)


#: one member joins a two-partition topic and the group settles: the least a wire group plays
SETTLED = [{"op": "partitions", "topic": "t0", "count": 2},
           {"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["range"],
            "profile": "java"},
           {"op": "settle"}]


def test_a_wire_storys_releases_become_wire_targets_at_that_release() -> None:
    saved = load_counterexample(str(RECORDED))
    assert story_targets(saved, ["java@3.4.0:", "java@4.0.0-SNAPSHOT:", "java@3.0.0:"],
                         ["java@3.0.0:"]) == [
        "wire:java@3.4.0:cooperative-sticky", "wire:java@4.0.0-SNAPSHOT:cooperative-sticky",
        "java@3.0.0:"]
    assert story_targets(saved, ["java@3.4.0:"], [], "range") == ["wire:java@3.4.0:range"]
    assert story_targets(load_counterexample(str(MIXED)), ["java@3.4.0:"], []) == [
        "wire:mixed:java@3.4.0+kafkajs:roundrobin"]


def test_an_assignor_level_storys_targets_stay_as_named() -> None:
    saved = load_counterexample(str(ASSIGNOR_LEVEL))
    assert story_targets(saved, ["java@3.4.0:", "builtin:sticky"], []) == [
        "java@3.4.0:", "builtin:sticky"]


def test_a_wire_story_on_an_assignor_level_target_is_na_with_its_reason() -> None:
    found = bisect_file(str(RECORDED), ["builtin:cooperative-sticky", "builtin:range"])
    assert [o.verdict for o in found.outcomes] == [NA, NA]
    assert all("an assignor-level target cannot play wire events (recorded on "
               "wire:java@2.8.0:cooperative-sticky)" in o.text for o in found.outcomes)
    assert found.absent_in == [] and found.summary().startswith("played on no target")


def test_a_wire_event_makes_a_story_without_a_wire_target_na_too(tmp_path: Path) -> None:
    path = _story(tmp_path, "builtin:range",
                  [*SETTLED[:2], {"op": "idle", "ms": 10}, SETTLED[2]])
    found = bisect_file(path, ["builtin:range"])
    assert found.outcomes[0].verdict == NA
    assert "events only a wire group performs" in found.outcomes[0].text


@pytest.mark.wire
def test_a_wire_story_over_two_java_releases_plays_on_wire_targets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    held = sorted(repo_releases(), key=release_order)
    repo_releases("3.4.0")
    low = "3.4.0"
    high = held[held.index(low) + 1] if held[-1] != low else held[-2]
    low, high = sorted((low, high), key=release_order)  # two releases next to each other
    path = _story(tmp_path, f"wire:java@{low}:range", SETTLED)
    assert main(["bisect", path, "--versions", f"{low}..{high}", "--quiet", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["result"]
    played = [(o["target"], o["verdict"]) for o in result["outcomes"]]
    assert [target for target, _ in played] == [f"wire:java@{low}:range",
                                                 f"wire:java@{high}:range"]
    assert all(verdict == "absent" for _, verdict in played), played
    assert [w["verdict"] for w in result["windows"]] == ["absent"]
