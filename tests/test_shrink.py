"""Shrinking failing group stories (audit/story_shrink.py) and ``groupcheck shrink``."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import replay_record, run_chain
from groupcheck.audit.scenarios import random_spec, spec_size
from groupcheck.audit.story_parts import drop_members, drop_partitions, partitions
from groupcheck.audit.story_shrink import Failure, ShrinkError, shrink_story
from groupcheck.cli import main
from groupcheck.engines.battery.scenarios import run_scenarios_engine, story_target
from groupcheck.targets.registry import resolve

DATA = Path(__file__).parent / "data"


def _failing(target_name: str, invariant: str, count: int = 3000) -> tuple[Any, dict[str, Any]]:
    """The first story of seed 0 that breaks ``invariant`` on the target (found by playing
    the stories in order, as the audit does)."""
    story = story_target(resolve(target_name))
    for index in range(count):
        spec = random_spec(0, index)
        if run_chain(story, spec).verdicts[invariant] == 1:
            return story, spec
    raise AssertionError(f"no story of the first {count} breaks {invariant}")


def _assert_each_part_is_needed(story: Any, spec: dict[str, Any], invariant: str,
                                parts: list[Any], drop: Any) -> None:
    """1-minimal: without any one of ``parts`` the story no longer breaks ``invariant``."""
    for part in parts:
        smaller = copy.deepcopy(spec)
        drop(smaller, {part})
        assert run_chain(story, smaller).verdicts[invariant] != 1, part


def test_a_defect_of_groups_over_twenty_shrinks_to_twenty_one_members() -> None:
    """`DropsInCrowds` loses a partition only with more than 20 members: the smallest
    story that shows it has exactly 21, and dropping any one of them loses the failure."""
    story, spec = _failing("python:story_assignors:DropsInCrowds", "I2")
    result = shrink_story(spec, story, seconds=120)
    assert result.complete and result.failure == Failure("I2")
    assert result.after["members"] == 21 and result.after["partitions"] == 1
    assert result.after["rounds"] == 1 and result.before["members"] > 21
    _assert_each_part_is_needed(story, result.spec, "I2",
                                [m["id"] for m in result.spec["members"]], drop_members)


def test_a_sticky_defect_of_four_members_shrinks_to_four_and_a_partition() -> None:
    story, spec = _failing("python:story_assignors:RotatingSticky", "I4")
    result = shrink_story(spec, story, seconds=120)
    assert result.failure == Failure("I4")
    assert result.after["members"] == 4 and result.after["partitions"] >= 1
    assert run_chain(story, result.spec).verdicts["I4"] == 1
    _assert_each_part_is_needed(story, result.spec, "I4", partitions(result.spec),
                                drop_partitions)


def test_shrinking_the_same_story_twice_gives_the_same_story() -> None:
    story, spec = _failing("python:story_assignors:RotatingSticky", "I4")
    one = shrink_story(spec, story, seconds=120)
    two = shrink_story(spec, story, seconds=120)
    assert one.complete and two.complete
    assert one.spec == two.spec and one.runs == two.runs


def test_the_extra_predicate_keeps_what_it_asks_for() -> None:
    """A candidate is kept only where the caller's predicate agrees (``--reference``)."""
    story, spec = _failing("python:story_assignors:DropsInCrowds", "I2")
    plain = shrink_story(spec, story, seconds=120)
    kept = shrink_story(spec, story, seconds=120,
                        keep=lambda s: len(s["members"]) >= 25)
    assert plain.after["members"] == 21
    assert kept.after["members"] == 25 and kept.failure.seen_in(kept.chain)


def test_a_kafka_rule_stays_the_same_rule() -> None:
    """An I6 that rule K1 explains shrinks to a story where K1 still explains it."""
    story, spec = _failing("builtin:cooperative-sticky", "I6")
    original = run_chain(story, spec)
    assert original.inherited.get("I6") == "K1"
    result = shrink_story(spec, story, seconds=120)
    assert result.failure == Failure("I6", "K1")
    assert result.chain.inherited.get("I6") == "K1" and not result.chain.own_violation
    assert result.after["members"] <= result.before["members"]


def test_a_story_that_holds_or_a_request_chain_is_refused() -> None:
    story = story_target(resolve("builtin:range"))
    with pytest.raises(ShrinkError, match="does not fail"):
        shrink_story(random_spec(0, 1), story)
    with pytest.raises(ShrinkError, match="only a story"):
        shrink_story({"kind": "requests", "requests": []}, story)


def test_the_shrunk_rack_aware_flap_still_flaps_on_cooperative_sticky() -> None:
    """The smallest cycling group in the findings (shrunk from audit seed 0, scenario 96646):
    still changing after Kafka's rack-aware horizon of follow-ups, its answers repeating,
    so rule K4 labels it Kafka's own, as the story it was shrunk from."""
    record = json.loads((DATA / "rack_aware_flap_shrunk.json").read_text(encoding="utf-8"))
    original = json.loads((DATA / "rack_aware_flap_spec.json").read_text(encoding="utf-8"))
    story = story_target(resolve("builtin:cooperative-sticky"))
    result = run_chain(story, record["spec"])
    assert result.verdicts["I11"] == 1 and result.inherited.get("I11") == "K4"
    assert any("no settled assignment after 8 follow-up rebalance(s); the answers cycle" in v
               for v in result.violations)
    assert len(record["spec"]["members"]) < len(original["members"])
    assert sum(record["spec"]["partitions"].values()) < sum(original["partitions"].values())


def test_groupcheck_shrink_writes_a_file_that_replays(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    story, spec = _failing("python:story_assignors:DropsInCrowds", "I2")
    record = replay_record(story, spec, run_chain(story, spec), 7, 0)
    source = tmp_path / "cex.json"
    source.write_text(json.dumps(record), encoding="utf-8")
    out = tmp_path / "small.json"
    assert main(["shrink", str(source), "--out", str(out), "--budget", "120"]) == 0
    printed = capsys.readouterr().out
    assert "-> 21 members, 1 partitions, 1 rebalance(s)" in printed
    shrunk = json.loads(out.read_text(encoding="utf-8"))
    assert shrunk["format"] == "groupcheck-audit-chain/1" and shrunk["invariant"] == "I2"
    assert shrunk["shrink"]["from"] == spec_size(spec)
    assert main(["replay", str(out)]) == 1
    assert "reproduced: I2" in capsys.readouterr().out


def test_groupcheck_shrink_refuses_what_it_cannot_shrink(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"assignor": "range", "partitions": {"t": 1},
                                   "members": {"a": {"topics": ["t"]}},
                                   "groupcheck": {"format": "groupcheck-scenario/1"}}))
    assert main(["shrink", str(request), "--target", "builtin:range"]) == 2
    assert "does not fail on builtin:range" in capsys.readouterr().err
    passing = tmp_path / "story.json"
    passing.write_text(json.dumps(random_spec(0, 1)))
    assert main(["shrink", str(passing), "--target", "builtin:range"]) == 2
    assert "does not fail" in capsys.readouterr().err
    assert main(["shrink", str(tmp_path / "missing.json"), "--target", "builtin:range"]) == 2
    assert main(["shrink", str(passing)]) == 2
    assert "names no target" in capsys.readouterr().err


def test_groupcheck_shrink_shrinks_a_state_machine_replay(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    source = DATA / "sticky_v0_replay.json"
    out = tmp_path / "small.json"
    assert main(["shrink", str(source), "--out", str(out), "--budget", "60"]) == 0
    shrunk = json.loads(out.read_text(encoding="utf-8"))
    before = json.loads(source.read_text(encoding="utf-8"))
    assert shrunk["format"] == "groupcheck-replay/1"
    assert len(shrunk["events"]) <= len(before["events"])
    assert "I1" in shrunk["violations"][0]
    assert main(["replay", str(out)]) == 1


def test_the_engine_saves_its_finding_shrunk(tmp_path: Path) -> None:
    target = resolve("python:story_assignors:DropsInCrowds")
    result = run_scenarios_engine(target, 60.0, str(tmp_path), seed=0, count=400)
    finding = result.findings["I2"]
    assert finding.size == 21 and "shrunk from" in finding.detail
    record = json.loads(Path(str(finding.file)).read_text(encoding="utf-8"))
    assert record["shrink"]["to"]["members"] == 21
    assert record["spec"]["seed"] == 0
    assert run_chain(story_target(target), record["spec"]).verdicts["I2"] == 1


def test_groupcheck_shrink_makes_a_saved_request_smaller(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """A request file is shrunk too (the one reader of saved files): kafka-python's sticky
    finding with two members of an unrelated topic added loses them again, keeps I2, and the
    written request file replays it."""
    pytest.importorskip("kafka", reason="kafka-python (the peers extra) runs the finding")
    finding = Path(__file__).parent.parent / "findings" / \
        "kafka-python-sticky-I2-partition-to-non-subscriber.json"
    body = json.loads(finding.read_text(encoding="utf-8"))
    body["partitions"]["v"] = 3
    body["members"]["m9"] = {"topics": ["v"], "owned": [], "generation": None}
    body["members"]["m8"] = {"topics": ["v", "u"], "owned": [], "generation": None}
    bigger, out = tmp_path / "bigger.json", tmp_path / "smaller.json"
    bigger.write_text(json.dumps(body), encoding="utf-8")
    assert main(["shrink", str(bigger), "--out", str(out), "--budget", "60"]) == 0
    printed = capsys.readouterr().out
    assert "shrunk I2 on kafka-python:sticky from 6 to" in printed
    shrunk = json.loads(out.read_text(encoding="utf-8"))
    assert len(shrunk["members"]) < 6 and "v" not in shrunk["partitions"]
    assert shrunk["groupcheck"]["invariant"] == "I2"
    assert main(["replay", str(out)]) == 1
    assert "reproduced: I2" in capsys.readouterr().out
