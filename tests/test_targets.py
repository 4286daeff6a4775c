"""Target adapters: a user's Python assignor, kafka-python's assignors, a JSON-lines process,
and the codec targets — each as an assign function and, where it is an assignor, as a group
for the state machine."""

from __future__ import annotations

import base64
import json
import sys
import time
from pathlib import Path

import pytest

from groupcheck.engines.battery.fuzz import machine_config
from groupcheck.engines.battery.runner import answer, partition_sets, run_codec, run_prove
from groupcheck.impl.assign_op import run_assign
from groupcheck.model.events import read_events
from groupcheck.model.fuzz import FuzzResult, fuzz
from groupcheck.model.replay import replay_events
from groupcheck.properties.scope import Scope, build_request, enumerate_scope
from groupcheck.targets.processes.jsonl_process import (
    JsonlProcess,
    TargetAnswerError,
    TargetFailure,
)
from groupcheck.targets.registry import TargetError, make_group_target, resolve
from groupcheck.targets.target import Target

ROOT = Path(__file__).resolve().parent.parent
TINY = Scope.parse("members=2,topics=2,partitions=1")
PYTHON = f"{sys.executable} -m groupcheck jsonl"


def _same_assignment(a: dict, b: dict) -> bool:
    return a["assignment"] == b["assignment"] and a["userData"] == b["userData"]


@pytest.mark.parametrize("spec", [
    "groupcheck.impl.assignors.sticky:StickyAssignor",  # a class
    "groupcheck.impl.assignors.sticky:CooperativeStickyAssignor",
    "groupcheck.impl.assignors.range:RangeAssignor",
])
def test_python_target_answers_like_the_builtin(spec: str) -> None:
    """Our own assignor loaded as a user's: every request of a tiny scope gets exactly the
    answer run_assign gives (client mode: user data, owned partitions, codec round trip)."""
    target = resolve(f"python:{spec}")
    assert target.assign is not None and target.group is not None
    for config in enumerate_scope(TINY):
        request = build_request(target.assignor or "", config)
        assert _same_assignment(target.assign(request), run_assign(request)), request


def test_python_target_accepts_an_instance_and_copies_it(tmp_path, monkeypatch) -> None:
    (tmp_path / "userassignor.py").write_text(
        "from groupcheck.impl.assignors.sticky import StickyAssignor\n"
        "INSTANCE = StickyAssignor()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    target = resolve("python:userassignor:INSTANCE")
    assert target.assignor == "sticky" and target.balanced
    request = build_request("sticky", next(iter(enumerate_scope(TINY))))
    assert _same_assignment(target.assign(request), run_assign(request))


@pytest.mark.parametrize("spec", ["nosuchmodule:X", "groupcheck.impl.types:Nope",
                                  "groupcheck.impl.types:Cluster", "noattr"])
def test_python_target_rejects_what_is_not_an_assignor(spec: str) -> None:
    with pytest.raises(TargetError):
        resolve(f"python:{spec}")


def _ten_examples(target: Target) -> FuzzResult:
    """Ten examples of the state machine on the target's group: a count, not a budget."""
    assert target.group is not None
    return fuzz(target.group, machine_config(target), max_examples=10, shrink_seconds=5.0)


def test_python_target_drives_the_state_machine() -> None:
    """The user's assignor inside our consumers: a short clean fuzz run."""
    target = resolve("python:groupcheck.impl.assignors.range:RangeAssignor")
    result = _ten_examples(target)
    assert result.examples >= 10 and not result.failed, result.violations


# --- kafka-python ------------------------------------------------------------------------


def _kafka() -> None:
    pytest.importorskip("kafka.coordinator.assignors.cooperative_sticky")


def test_kafka_python_cooperative_round_one_hands_over_a_claimed_partition() -> None:
    """Bug zoo A.2-1, minimal case: member order (b, a), b owns t0-0..2, a (stale) claims
    t0-2; kafka-python gives a t0-2 in round 1 while b still claims it."""
    _kafka()
    target = resolve("kafka-python:cooperative-sticky")
    assert target.assign is not None
    answer = target.assign({"assignor": "cooperative-sticky", "partitions": {"t0": 3},
                            "members": {"b": {"topics": ["t0"], "generation": 1,
                                              "owned": [["t0", 0], ["t0", 1], ["t0", 2]]},
                                        "a": {"topics": ["t0"], "generation": 1,
                                              "owned": [["t0", 2]]}}})
    assert answer["assignment"] == {"b": [["t0", 0], ["t0", 1]], "a": [["t0", 2]]}
    assert answer["protocol"] == "COOPERATIVE"


def test_kafka_python_wire_facts() -> None:
    """What the adapter passes on is what kafka-python sends: cooperative subscriptions at
    v1 with empty user data (no generation anywhere), sticky user data with its own 2-byte
    version header (Java's StickyAssignor user data has none)."""
    _kafka()
    from groupcheck.targets.adapters.kafka_python_assignors import KafkaPythonAssignor

    coop = KafkaPythonAssignor("cooperative-sticky")
    assert coop.version == 1 and coop.subscription_user_data({"t"}) == b""
    assert resolve("kafka-python:cooperative-sticky").hints.subscription_versions == (1,)
    sticky = KafkaPythonAssignor("sticky")
    from groupcheck.impl.types import Assignment

    sticky.on_assignment(Assignment([("t", 0)]), 3)
    data = sticky.subscription_user_data({"t"})
    assert data is not None and data[:2] == b"\x00\x01"
    answer = resolve("kafka-python:sticky").assign({
        "partitions": {"t": 2}, "members": {"m": {"topics": ["t"], "owned": [["t", 0]],
                                                  "generation": 3}}})
    assert base64.b64decode(answer["userData"]["m"])[:2] == b"\x00\x01"


def test_kafka_python_group_runs_in_the_state_machine() -> None:
    _kafka()
    target = resolve("kafka-python:range")
    result = _ten_examples(target)
    assert result.examples >= 10 and not result.failed, result.violations


# --- JSON-lines --------------------------------------------------------------------------


def test_jsonl_target_answers_like_run_assign() -> None:
    target = resolve(f"jsonl:{PYTHON}", assignor="cooperative-sticky")
    try:
        assert target.assign is not None and not target.fork_safe
        for config in list(enumerate_scope(TINY))[:40]:
            request = build_request("cooperative-sticky", config)
            assert _same_assignment(target.assign(request), run_assign(request))
    finally:
        target.close()


def test_jsonl_error_answers_raise_and_the_process_goes_on() -> None:
    proc = JsonlProcess(PYTHON, timeout=20)
    try:
        with pytest.raises(TargetAnswerError):
            proc.call({"op": "nosuchop"})
        assert proc.call({"op": "ping"}) == {"pong": True}
        assert proc.starts == 1
    finally:
        proc.close()


def test_jsonl_crash_and_hang_are_target_failures_and_the_run_goes_on() -> None:
    crash = JsonlProcess(f"{sys.executable} -c \"import sys; sys.stdin.readline(); "
                         f"sys.exit(3)\"", timeout=20)
    with pytest.raises(TargetFailure, match="exited"):
        crash.request({"op": "ping"})
    with pytest.raises(TargetFailure):
        crash.request({"op": "ping"})  # restarted, crashes again
    assert crash.starts == 2 and crash.failures == 2
    hang = JsonlProcess(f"{sys.executable} -c \"import time; time.sleep(60)\"", timeout=0.5)
    started = time.perf_counter()
    with pytest.raises(TargetFailure, match="no answer within"):
        hang.request({"op": "ping"})
    assert time.perf_counter() - started < 10
    hang.close()


def test_prover_reports_a_crashing_jsonl_target_as_error_and_goes_on(tmp_path) -> None:
    target = resolve(f"jsonl:{sys.executable} -c \"import sys; sys.stdin.readline(); "
                     f"sys.exit(1)\"", assignor="range", timeout=20)
    result = run_prove(target, "members=1,topics=1,partitions=1", str(tmp_path))
    target.close()
    assert "ERROR" in result.findings and result.runs > 1
    assert "TargetFailure" in result.findings["ERROR"].violation
    assert result.findings["ERROR"].file and (tmp_path / result.findings["ERROR"].file).exists()


def test_jsonl_group_runs_in_the_state_machine() -> None:
    target = resolve(f"jsonl:{PYTHON}", assignor="sticky")
    try:
        result = _ten_examples(target)
        assert result.examples >= 10 and not result.failed, result.violations
    finally:
        target.close()


# --- codecs ------------------------------------------------------------------------------


def test_codec_battery_passes_ours_and_our_process(tmp_path) -> None:
    """Every writer/reader version pair round-trips (I10); our process's sticky user data
    carries exactly what each fresh member was given (I12; the codec alone writes none)."""
    for name, user_data in (("builtin:codec", 0), (f"jsonl:{PYTHON}", 6)):
        target = resolve(name)
        result = run_codec(target, str(tmp_path))
        target.close()
        assert not result.findings, (name, result.findings)
        assert result.judged["I10"] == 80 and result.judged["I12"] == user_data, result


def test_kafka_python_codec_writes_topics_in_caller_order(tmp_path) -> None:
    """kafka-python's encoder does not sort (Kafka's serializer does, KAFKA-12898)."""
    _kafka()
    result = run_codec(resolve("kafka-python:range"), str(tmp_path))
    assert "I10" in result.findings
    assert "topics is ['b', 'a'], expected ['a', 'b']" in result.findings["I10"].violation


def test_unknown_targets_are_one_line_errors() -> None:
    for bad in ("nope", "builtin:nope", "mutant:nope", "kafka-python:nope", "jsonl:"):
        with pytest.raises(TargetError):
            resolve(bad)


# --- findings ----------------------------------------------------------------------------

# Real-client findings (librdkafka-*, wire-*) depend on timing, so their exact text varies from
# run to run; tests/test_wire_long.py replays them on a fresh mock cluster and compares the
# invariant (tox -e wire). Kafka's own (java-*) need a JDK and Kafka's client:
# tests/test_java_target.py replays them; the differences between Kafka's releases
# (releases-*) are bisected over the releases by tests/test_release_findings.py. Every other
# finding replays to the same text.
FINDINGS = sorted(p for p in (ROOT / "findings").glob("*.json")
                  if not p.name.startswith(("librdkafka-", "java-", "wire-", "releases-")))


@pytest.mark.parametrize("path", FINDINGS, ids=[p.stem for p in FINDINGS])
def test_committed_findings_still_reproduce(path, tmp_path) -> None:
    """Every file under findings/ shows its violation again on the target it names."""
    _kafka()
    body = json.loads(path.read_text(encoding="utf-8"))
    if body.get("format") == "groupcheck-replay/1":
        outcome = replay_events(make_group_target(body["target"]), read_events(body["events"]))
        assert outcome.violations and outcome.violations[0] == body["violations"][0]
        return
    meta = body.pop("groupcheck")
    if meta["format"] == "groupcheck-codec/1":
        result = run_codec(resolve(meta["target"]), str(tmp_path))
        assert result.findings["I10"].violation == meta["violations"][0]
        return
    got = answer(resolve(meta["target"]).assign, body)
    assert got.get("assignment", got) == meta["answer"]
    if meta["invariant"] == "ERROR":
        assert "error" in got
    elif meta["invariant"] == "PARITY":
        assert partition_sets(got) != partition_sets({"assignment": meta["java"]})
        assert partition_sets({"assignment": meta["java"]}) == partition_sets(
            resolve(f"builtin:{body['assignor']}").assign(body))
    else:
        result = run_scenarios_on(meta["target"], body)
        assert meta["violation"] in result, result


def run_scenarios_on(target: str, request: dict) -> list[str]:
    """I1, I2 (validity), I5 and I6 of one answer, as the prover judges a round."""
    from groupcheck.properties.assignment import valid_targets
    from groupcheck.properties.generations import claim_hygiene

    got = resolve(target).assign(request)
    assignment = {m: [tuple(tp) for tp in ps] for m, ps in got["assignment"].items()}
    subs = {m: v["topics"] for m, v in request["members"].items()}
    found = valid_targets(assignment, subs, request["partitions"])
    if got["protocol"] == "COOPERATIVE":
        claims = {m: ([tuple(tp) for tp in v["owned"]], v["generation"])
                  for m, v in request["members"].items()}
        found += claim_hygiene(claims, assignment, "COOPERATIVE")
    return found
