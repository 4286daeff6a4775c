"""Every assignor a target answers is checked by default; ``--assignor`` narrows; a
malformed user assignor is one sentence and exit code 2 from every command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.targets.offers import expand, parse_assignors, probe
from groupcheck.targets.registry import Target, TargetError

from helpers import TARGETS
from helpers.user_assignors import SOURCE as MALFORMED

SERVICE = f"jsonl:{sys.executable} {TARGETS / 'partial_service.py'}"
BROKEN = SERVICE + " --broken-range"


def _close(offers) -> None:
    for offer in offers:
        if offer.target is not None:
            offer.target.close()


def test_a_jsonl_target_offers_every_kafka_assignor_and_says_which_it_does_not_support(
) -> None:
    offers = expand(SERVICE)
    try:
        assert [o.label for o in offers] == ["range", "roundrobin", "sticky",
                                             "cooperative-sticky"]
        refused = {o.label: o.error for o in offers if not o.supported}
        assert list(refused) == ["roundrobin"]
        assert "roundrobin is not implemented here" in refused["roundrobin"]
        assert all(o.target.assignor == o.label for o in offers if o.target is not None)
    finally:
        _close(offers)


def test_assignor_option_is_repeatable_and_takes_comma_lists() -> None:
    assert parse_assignors(["range, sticky", "sticky", "cooperative-sticky"]) == [
        "range", "sticky", "cooperative-sticky"]
    offers = expand(SERVICE, ["sticky"])
    try:
        assert [(o.label, o.supported) for o in offers] == [("sticky", True)]
    finally:
        _close(offers)


@pytest.mark.parametrize(("text", "wanted", "says"), [
    (SERVICE, ["roundrobin"], "does not support roundrobin"),
    (SERVICE, ["nope"], "is not one of range, roundrobin, sticky, cooperative-sticky"),
    ("builtin:sticky", ["range"], "runs sticky only"),
    ("python:groupcheck.targets.zoo.escapes", ["nope"], "names no assignor of the module"),
])
def test_narrowing_to_what_a_target_does_not_offer_is_a_usage_error(text, wanted, says) -> None:
    with pytest.raises(TargetError, match=says):
        expand(text, wanted)


def test_a_module_offers_every_assignor_it_defines_and_narrows_by_attribute_or_name() -> None:
    offers = expand("python:groupcheck.targets.zoo.escapes")
    assert {o.label for o in offers} >= {"WholeTopicAssignor", "LeastLoadedAssignor",
                                         "SharedStateStickyAssignor"}
    assert all(o.supported for o in offers)
    (whole,) = expand("python:groupcheck.targets.zoo.escapes", ["whole-topic"])
    assert whole.label == "WholeTopicAssignor" and whole.target.assignor == "whole-topic"
    assert whole.target.balance == "sticky" and "not declared" in whole.target.balance_why
    assert not whole.target.sticky


def test_probing_asks_what_the_target_resolved_to_whatever_its_kind() -> None:
    """A target that only has ``call`` (as ``java:`` will) is asked through it."""
    def call(request):
        if request["assignor"] == "range":
            return {"error": "IllegalArgumentException: no such assignor"}
        return {"assignment": {"m0": [["t0", 0]]}, "userData": {"m0": None}}

    assert probe(Target("any:thing", "range", call=call)) == (
        "IllegalArgumentException: no such assignor")
    assert probe(Target("any:thing", "sticky", call=call)) is None


def test_check_finds_a_defect_in_one_assignor_only_and_reports_the_unsupported_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--target", BROKEN, "--budget", "30", "--first", "--json",
                 "--failures", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and not report["ok"]
    assert report["assignors"]["roundrobin"] == {
        "supported": False,
        "error": "UnsupportedAssignor: roundrobin is not implemented here"}
    range_ = report["assignors"]["range"]
    assert range_["balance"].startswith("range (Kafka's rule")
    found = {inv: body for e in range_["engines"].values()
             for inv, body in e["violations"].items()}
    assert "I3" in found and "split" in found["I3"]["violation"]
    assert found["I3"]["afterSeconds"] <= 30


def _malformed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "userassignors.py").write_text(MALFORMED, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.parametrize(("attr", "names"), [
    ("Strings", "'supported_protocols' holds 'EAGER', not a RebalanceProtocol"),
    ("NoName", "'name' must be a non-empty string, not None"),
    ("ListAnswer", "'assign' must return a dict of member id to Assignment, not list"),
    ("PlainLists", "'assign' returned list for member 'm0'"),
    ("NotAMethod", "'on_assignment' must be a method, not int"),
    ("BadContract", "'balance' must be one of 'range', 'roundrobin', 'sticky', 'none'"),
])
def test_a_malformed_assignor_is_one_sentence_and_exit_2_from_every_command(
        attr: str, names: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _malformed(tmp_path, monkeypatch)
    target = f"python:userassignors:{attr}"
    replay = tmp_path / "story.json"
    replay.write_text(json.dumps({"format": "groupcheck-replay/1", "target": target,
                                  "events": []}), encoding="utf-8")
    commands = [["check", "--target", target, "--budget", "1"],
                ["fuzz", "--target", target, "--max-examples", "1"],
                ["prove", "--target", target, "--scope", "members=1,topics=1,partitions=1"],
                ["diff", "--target", target, "--target", "builtin:range"],
                ["replay", str(replay)]]
    for command in commands:
        assert main(command + ([] if command[0] == "replay" else
                               ["--failures", str(tmp_path)])) == 2, command
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and names in err[0], (command, err)


def test_a_module_with_one_malformed_assignor_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _malformed(tmp_path, monkeypatch)
    (good,) = expand("python:userassignors:RoundRobinish")
    assert good.target.balance == "range" and good.target.assignor == "my-assignor"
    with pytest.raises(TargetError, match="userassignors:"):
        expand("python:userassignors")


def test_diff_compares_every_assignor_both_targets_answer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", "--target", SERVICE, "--target", BROKEN, "--no-vectors",
                 "--scope", "members=2,topics=1,partitions=2,generations=1,claims=1",
                 "--budget", "30", "--failures", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "[range]\nDISAGREE" in out
    for same in ("sticky", "cooperative-sticky"):
        assert f"[{same}]\n" in out and f"[{same}]\nDISAGREE" not in out
    assert "[roundrobin]" not in out  # neither side supports it
    (saved,) = tmp_path.glob("diff-*.json")
    assert json.loads(saved.read_text(encoding="utf-8"))["assignor"] == "range"
