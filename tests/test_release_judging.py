"""How a release's profile changes the judging, without Java: a stand-in profile of a release
with no generation and subscription v0-v1 only (what Kafka 2.8.0 reports).

* an invariant whose feature the release lacks is ``absent``: what an engine found of it is
  kept aside, never a failure, and the matrix shows it as such;
* the scenarios engine does not play a story whose contested claims only a generation
  settles;
* I10 reads a newer header at the reader's own highest layout, and holds an older writer to
  the content of topics and owned partitions, not their order."""

from __future__ import annotations

from typing import Any

from groupcheck.engines.battery.profile_gaps import absent_invariants, mark_absent, playable
from groupcheck.engines.battery.results import EngineResult, Finding
from groupcheck.engines.releases.matrix import cell_verdict
from groupcheck.properties.codec import codec_violations, expected_subscription_decode
from groupcheck.targets.profile import ReleaseProfile
from groupcheck.targets.target import Target

NO_GENERATION: dict[str, Any] = {
    "version": "2.8.0", "subscription_versions": {"writes": 1, "reads": [0, 1]},
    "assignment_versions": {"writes": 1, "reads": [0, 1]}, "generation_in": "none",
    "rack": False, "on_partitions_lost": True, "static_membership": True, "pause": None,
    "assignors": {"cooperative-sticky": ["COOPERATIVE", "EAGER"]}}


def _target(answer: dict[str, Any] | None) -> Target:
    profile = None if answer is None else ReleaseProfile.from_answer("java", answer)
    return Target("java@2.8.0:", "cooperative-sticky", profile=profile)


def test_a_release_without_generations_has_i6_and_i12_absent() -> None:
    absent = absent_invariants(_target(NO_GENERATION))
    assert set(absent) == {"I6", "I12"} and all("absent in 2.8.0" in w for w in absent.values())
    newer = {**NO_GENERATION, "version": "3.4.0", "generation_in": "subscription"}
    assert absent_invariants(_target(newer)) == {} == absent_invariants(_target(None))


def test_a_finding_of_an_absent_invariant_is_kept_aside_not_failed() -> None:
    result = EngineResult("prove", ("I1", "I6"))
    result.add(Finding("I6", "I6: t0-0 was given to m0 although m1 claims it", "f.json"))
    result.judged["I1"] = 10
    mark_absent(result, absent_invariants(_target(NO_GENERATION)))
    assert not result.failed and result.verdict("I6") == "absent"
    assert result.verdict("I1") == "holds" and result.why_not("I6").startswith(
        "not judged (absent in 2.8.0")
    assert result.verdict("I12") == "-"  # not this engine's: nothing to mark
    assert cell_verdict([result], "I6") == "absent"
    violated = EngineResult("fuzz", ("I6",))
    violated.add(Finding("I6", "I6: …", None))
    assert cell_verdict([result, violated], "I6") == "VIOLATED"


def _story(members: list[dict[str, Any]], steps: list[Any] | None = None) -> dict[str, Any]:
    return {"partitions": {"t0": 2}, "members": members, "steps": steps or []}


def test_the_scenarios_engine_skips_stories_only_a_generation_settles() -> None:
    old, new = _target(NO_GENERATION), _target(None)
    contested = _story([{"id": "a", "topics": ["t0"], "owned": [["t0", 0]]},
                        {"id": "b", "topics": ["t0"], "owned": [["t0", 0]]}])
    comeback = _story([{"id": "a", "topics": ["t0"], "owned": []}],
                      [[{"op": "stall", "member": "a"}], [{"op": "return", "member": "a"}]])
    plain = _story([{"id": "a", "topics": ["t0"], "owned": [["t0", 0]]},
                    {"id": "b", "topics": ["t0"], "owned": [["t0", 1]]}])
    assert not playable(old, contested) and not playable(old, comeback)
    assert playable(old, plain)
    assert all(playable(new, s) for s in (contested, comeback, plain))


X = {"topics": ["b", "a"], "userData": None, "owned": [("b", 1), ("a", 0)], "generation": -1,
     "rack": None}


def test_an_older_reader_reads_a_newer_header_at_its_own_highest_layout() -> None:
    assert expected_subscription_decode(X, 1, 2) is None  # a v2 reader needs a generation
    read = expected_subscription_decode(X, 1, 2, reader_highest=1)
    assert read is not None and read["version"] == 2 and read["remaining"] == 0
    newer = expected_subscription_decode({**X, "generation": 4}, 3, 3, reader_highest=1)
    assert newer is not None and newer["remaining"] > 0 and newer["generationId"] == -1


def test_an_older_writer_is_held_to_content_not_order() -> None:
    as_written = {"topics": ["b", "a"], "userData": None, "generationId": -1, "rackId": None,
                  "ownedPartitions": [("b", [1]), ("a", [0])], "version": 1, "remaining": 0}
    assert codec_violations(X, 1, 1, as_written)  # a v3-era writer sorts
    assert not codec_violations(X, 1, 1, as_written, ordered=False)
    lost = {**as_written, "ownedPartitions": [("b", [1])]}
    assert codec_violations(X, 1, 1, lost, ordered=False)
