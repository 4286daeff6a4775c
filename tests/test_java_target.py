"""Kafka's own Java client as the ``java:`` target: the contract's ops, every engine, hangs,
the findings it confirms, and the rack-aware flap played on it.

Hangs use the four requests of ``data/general_loop.jsonl``, on which Kafka's sticky general
path never returns; their time limits are kept to a few seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import replay_record, run_chain
from groupcheck.audit.targets import AuditTargetError
from groupcheck.cli import main
from groupcheck.engines.battery.fuzz import machine_config
from groupcheck.engines.battery.runner import run_battery, run_prove, run_vectors
from groupcheck.engines.differential.search import DiffResult, describe, run_diff
from groupcheck.engines.resolving import expand_targets, resolve_audit_target
from groupcheck.engines.saved.requests import replay_request
from groupcheck.impl.assign_op import run_assign
from groupcheck.model.fuzz import fuzz
from groupcheck.targets.processes.java_runtime import driver_command
from groupcheck.targets.processes.jsonl_process import TargetAnswerError, TargetTimeout
from groupcheck.targets.processes.process_window import request_line
from groupcheck.targets.registry import Target, resolve

from helpers.environment import CLASSPATH, SETTINGS
from helpers.kafka_java import java_command

java_command()  # skip the module (or fail under GROUPCHECK_REQUIRE_KAFKA) without Java
DATA = Path(__file__).resolve().parent / "data"
FINDINGS = sorted((Path(__file__).resolve().parent.parent / "findings").glob("java-*.json"))
LOOPS = [json.loads(x)["request"] for x in (DATA / "general_loop.jsonl").read_text()
         .splitlines()]
HANG = 2.0  # seconds: the time limit of the tests that hang Kafka's assignor


@pytest.fixture
def sticky() -> Any:
    target = resolve("java:", assignor="sticky", settings=SETTINGS)
    yield target
    target.close()


def _hanging(timeout: float) -> Target:
    return resolve("java:", assignor="sticky", timeout=timeout, settings=SETTINGS)


def test_the_driver_answers_every_op_and_goes_on_after_bad_ones(sticky: Target) -> None:
    call = sticky.call
    assert call is not None
    assert call({"op": "ping"}) == {"pong": True}
    wire = call({"op": "encode_subscription", "version": 3, "topics": ["b", "a"],
                 "owned": [["b", 0]], "generation": 4, "rack": "r1", "userData": None})
    decoded = call({"op": "decode_subscription", "hex": wire["hex"]})
    assert decoded["topics"] == ["a", "b"] and decoded["generation"] == 4
    assert decoded["data"]["rackId"] == "r1" and decoded["remaining"] == 0
    assert call({"op": "user_data", "assignor": "cooperative-sticky", "topics": ["t"],
                 "owned": [], "generation": 7}) == {"userData": "AAAABw=="}
    assert call({"op": "nosuch"})["error"].startswith("InvalidRequestError: unknown op")
    assert "InvalidRequestError" in call({"op": "assign", "assignor": "fifo",
                                          "members": {}})["error"]
    assert call({"op": "ping"}) == {"pong": True}
    assert sticky.closers and sticky.timeout is not None


def test_the_driver_echoes_request_ids_error_answers_included() -> None:
    """The driver answers in order and echoes each id; an id of another type is a request
    error answered without one; a request without an id is answered without one."""
    lines = [request_line({"op": "ping"}, 41), request_line({"op": "nosuch"}, 42),
             b'{"op":"ping","id":"s-1"}\n', b'{"op":"ping","id":1.5}\n', b'{"op":"ping"}\n']
    out = subprocess.run(driver_command("", SETTINGS.kafka_classpath), input=b"".join(lines),
                         capture_output=True, timeout=120, check=True).stdout
    answers = [json.loads(x) for x in out.splitlines()]
    assert answers[0] == {"pong": True, "id": 41}
    assert answers[1]["id"] == 42 and answers[1]["error"].startswith("InvalidRequestError")
    assert answers[2] == {"pong": True, "id": "s-1"}
    assert "'id' must be a string or an integer" in answers[3]["error"]
    assert "id" not in answers[3] and answers[4] == {"pong": True}


@pytest.mark.heavy
def test_the_java_target_agrees_with_the_builtins_on_ordinary_groups() -> None:
    """Range and roundrobin have no deviation from Kafka: on the scope prover's small
    configurations (stale and conflicting claims included) both answer alike."""
    from groupcheck.properties.scope import Scope, build_request, enumerate_scope

    for assignor in ("range", "roundrobin"):
        target = resolve("java:", assignor=assignor, settings=SETTINGS)
        try:
            assert target.assign is not None
            for config in enumerate_scope(Scope.parse("members=2,topics=2,partitions=2")):
                request = build_request(assignor, config)
                assert target.assign(request)["assignment"] == \
                    run_assign(request)["assignment"], request
        finally:
            target.close()


def test_check_on_kafkas_sticky_finds_a_partition_for_a_member_without_topics(
        tmp_path: Path) -> None:
    """The scope prover on Kafka's client: two members, one partition, one member
    subscribed to nothing gets it (I2; groupcheck's D2 answers otherwise)."""
    target = resolve("java:", assignor="sticky", settings=SETTINGS)
    try:
        result = run_battery(target, budget=10, scope="members=2,topics=1,partitions=1",
                             failures=str(tmp_path), engines=("prove", "codec"))
    finally:
        target.close()
    prove = next(e for e in result.engines if e.engine == "prove")
    codec = next(e for e in result.engines if e.engine == "codec")
    assert "I2" in prove.findings and "does not subscribe" in prove.findings["I2"].violation
    assert prove.findings["I2"].size == 2 and "TIMEOUT" in prove.checked
    assert codec.judged["I10"] == 80 and codec.judged["I12"] > 0 and not codec.findings


def test_the_state_machine_drives_kafkas_assignor() -> None:
    target = resolve("java:", assignor="range", settings=SETTINGS)
    assert target.group is not None
    try:  # ten examples: a count, not a budget
        result = fuzz(target.group, machine_config(target), max_examples=10,
                      shrink_seconds=5.0)
    finally:
        target.close()
    assert result.examples >= 10 and not result.failed, result.violations


# --- hangs ----------------------------------------------------------------------------------


def test_a_hang_is_a_timeout_and_a_fresh_jvm_answers_the_next_request() -> None:
    target = _hanging(HANG)
    assert target.assign is not None and target.call is not None
    try:
        started = time.perf_counter()
        with pytest.raises(TargetTimeout) as caught:
            target.assign(LOOPS[2])
        assert isinstance(caught.value, TimeoutError)
        assert time.perf_counter() - started < HANG + 5
        answer = target.assign({"op": "assign", "assignor": "sticky", "partitions": {"t": 2},
                                "members": {"m": {"topics": ["t"], "owned": [],
                                                  "generation": None}}})
        assert answer["assignment"] == {"m": [["t", 0], ["t", 1]]}
    finally:
        target.close()


def test_the_golden_vector_engine_reports_a_hang_as_timeout_with_its_request(
        tmp_path: Path) -> None:
    target = _hanging(HANG)
    try:
        result = run_vectors(target, str(tmp_path),
                             lines=[{"request": LOOPS[2], "response": {}, "case": "loop"}])
    finally:
        target.close()
    assert set(result.findings) == {"TIMEOUT"}
    saved = json.loads(Path(result.findings["TIMEOUT"].file or "").read_text())
    assert saved["members"] == LOOPS[2]["members"]


def test_the_audit_reports_a_hang_as_timeout_and_goes_on() -> None:
    """The audit's own alarm interrupts the call; the JVM is killed so that its late answer
    never answers the next call, and the replay record keeps the request."""
    target = resolve_audit_target("sticky@java:", SETTINGS)
    result = run_chain(target, {"kind": "requests", "requests": [LOOPS[2]]}, timeout=HANG)
    assert result.verdicts["TIMEOUT"] == 1 and result.verdicts["ERROR"] is None
    assert replay_record(target, {}, result, 0, None)["requests"] == [LOOPS[2]]
    small = {"op": "assign", "assignor": "sticky", "mode": "client", "partitions": {"t": 1},
             "members": {"m": {"topics": ["t"], "owned": [], "generation": None}}}
    after = run_chain(target, {"kind": "requests", "requests": [small]}, timeout=30)
    assert not after.violated and after.rounds[0]["response"]["assignment"] == {
        "m": [["t", 0]]}


def test_prover_and_diff_report_a_hanging_process_as_timeout(tmp_path: Path) -> None:
    hang = f"{sys.executable} -c \"import sys, time; sys.stdin.readline(); time.sleep(60)\""
    target = resolve(f"jsonl:{hang}", assignor="range", timeout=0.5)
    try:
        result = run_prove(target, "members=1,topics=1,partitions=1", str(tmp_path))
        assert set(result.findings) == {"TIMEOUT"}
        saved = json.loads(Path(result.findings["TIMEOUT"].file or "").read_text())
        assert saved["op"] == "assign" and saved["groupcheck"]["invariant"] == "TIMEOUT"
        diff = run_diff(resolve("builtin:range"), target, assignor="range",
                        scope="members=1,topics=1,partitions=1", vectors=False)
    finally:
        target.close()
    assert diff.timeout == "b" and diff.request is not None
    assert describe(diff, "builtin:range", target.name).startswith("TIMEOUT after 1 ")


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_a_line_that_is_not_json_gets_an_error_naming_its_offset_and_the_driver_goes_on(
        ) -> None:
    """The driver's one JSON reader (shared with the wire layer's member driver) answers a
    malformed line with an InvalidRequestError naming the character where it broke."""
    from groupcheck.targets.processes.java_runtime import driver_command

    lines = ['{"op": "ping"', '[1, 2', '{"op": "ping"} x', '{"op": "ping"}']
    done = subprocess.run(driver_command("", CLASSPATH), input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=120, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    errors = [a.get("error", "") for a in answers[:3]]
    assert all(e.startswith("InvalidRequestError: line is not JSON: ") for e in errors), errors
    # where each line broke: its end (twice), then the first character after the value
    assert [e.rsplit(" ", 1)[-1] for e in errors] == ["13", "5", "15"], errors
    assert answers[3] == {"pong": True}


def test_a_jvm_stuck_in_kafkas_loop_exits_when_its_caller_dies() -> None:
    """A caller killed outright cannot kill the JVM: the driver exits when its parent does,
    rather than spin in Kafka's endless loop for ever."""
    code = ("import json, os, subprocess, sys, time\n"
            "from groupcheck.targets.processes.java_runtime import driver_command\n"
            f"p = subprocess.Popen(driver_command('', {CLASSPATH!r}), stdin=subprocess.PIPE, "
            "stdout=subprocess.PIPE, text=True)\n"
            f"p.stdin.write({json.dumps(json.dumps(LOOPS[2]))} + '\\n'); p.stdin.flush()\n"
            "time.sleep(1.0); print(p.pid, flush=True); os._exit(0)\n")
    pid = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, check=True).stdout)
    deadline = time.monotonic() + 15
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    orphaned = _running(pid)
    if orphaned:
        os.kill(pid, signal.SIGKILL)
    assert not orphaned


# --- Kafka's own findings -------------------------------------------------------------------


@pytest.mark.parametrize("path", FINDINGS, ids=[p.stem for p in FINDINGS])
def test_kafkas_own_findings_reproduce_on_kafkas_client(path: Path) -> None:
    """Every findings/java-* request shows its violation again on java:, with Kafka's
    recorded answer; groupcheck's builtin answers it without the violation."""
    body = json.loads(path.read_text(encoding="utf-8"))
    meta = body.pop("groupcheck")
    target = resolve(meta["target"], timeout=HANG, settings=SETTINGS)
    try:
        answer, found = replay_request(target, body)
    finally:
        target.close()
    assert found and found[0].split(":")[0] == meta["invariant"], found
    if meta["invariant"] == "TIMEOUT":
        assert answer is None
    elif meta["invariant"] == "ERROR":
        assert found[0] == meta["violation"]
    else:
        assert answer is not None and answer["assignment"] == meta["answer"]
        assert meta["violation"] in found
    ours, own = replay_request(resolve(f"builtin:{body['assignor']}"), body)
    assert not own and ours is not None and ours["assignment"] == meta["groupcheck"]


def test_replay_command_reproduces_the_endless_loop_on_java(
        capsys: pytest.CaptureFixture[str]) -> None:
    path = next(p for p in FINDINGS if "TIMEOUT" in p.name)
    assert main(["replay", str(path), "--timeout", str(HANG)]) == 1
    out = capsys.readouterr().out
    assert "reproduced: TIMEOUT" in out and "on java:" in out
    assert main(["replay", str(path), "--target", "builtin:sticky"]) == 0


def test_kafkas_client_flaps_on_the_rack_aware_chain_as_groupcheck_does() -> None:
    """Audit seed 0, scenario 96646: at every rebalance and follow-up of the chain Kafka's
    CooperativeStickyAssignor answers exactly as groupcheck's builtin, so the flap (I11, the
    group never settles) is Kafka's own."""
    spec = json.loads((DATA / "rack_aware_flap_spec.json").read_text(encoding="utf-8"))
    java = run_chain(resolve_audit_target("cooperative-sticky@java:", SETTINGS), spec)
    ours = run_chain(resolve_audit_target("builtin:cooperative-sticky"), spec)
    assert len(java.rounds) == len(ours.rounds) >= 9
    for theirs, mine in zip(java.rounds, ours.rounds, strict=True):
        assert theirs["request"] == mine["request"]
        assert theirs["response"]["assignment"] == mine["response"]["assignment"]
    assert java.verdicts["I11"] == 1 and java.violations == ours.violations


# --- the audit's targets --------------------------------------------------------------------


def test_the_audit_runs_java_as_one_target_per_assignor() -> None:
    assert expand_targets(["java:", "builtin:range"], SETTINGS) == [
        "range@java:", "roundrobin@java:", "sticky@java:", "cooperative-sticky@java:",
        "builtin:range"]
    target = resolve_audit_target("roundrobin@java:", SETTINGS)
    assert target.assignor == "roundrobin" and target.codec is not None
    with pytest.raises(TargetAnswerError):
        target.assign({"op": "assign", "assignor": "roundrobin", "members": []})
    with pytest.raises(AuditTargetError, match="unknown assignor 'fifo'"):
        resolve_audit_target("fifo@java:")
    with pytest.raises(AuditTargetError, match="does not exist"):
        resolve_audit_target("range@java:/no/such/kafka.jar")


def test_the_default_classpath_reads_java_colon_in_every_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``java:`` (the default classpath) ends in a colon: no message puts another colon
    after it (``java::``), in check's summary, its usage errors, diff or the audit."""
    assert main(["check", "--target", "java:", "--assignor", "nope"]) == 2
    assert main(["check", "--target", "java:", "--assignor", "range", "--budget", "1",
                 "--failures", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "1 assignor(s) of java: checked" in out.out
    assert "java: may answer" in out.err
    request = {"assignor": "range", "partitions": {"t": 1},
               "members": {"m": {"topics": ["t"]}}}
    shown = describe(DiffResult(1, 0.1, "scope", request, {"assignment": {"m": [["t", 0]]}},
                                {"assignment": {"m": []}}, (1, 1)), "builtin:range", "java:")
    with pytest.raises(AuditTargetError) as caught:
        resolve_audit_target("fifo@java:")
    for text in (out.out, out.err, shown, str(caught.value)):
        assert "java::" not in text, text


@pytest.mark.parametrize("scenario", [pytest.param(20579, marks=pytest.mark.heavy), 31727,
                                      pytest.param(74829, marks=pytest.mark.heavy)])
def test_kafkas_client_plays_the_slow_and_cycling_rack_aware_chains_as_groupcheck_does(
        scenario: int) -> None:
    """The default audit's rack-aware cooperative-sticky stories that settle late (K3: the
    36th follow-up of scenario 20579) or cycle (K4): Kafka's client gets the same requests
    and gives the identical answer at every call."""
    from groupcheck.audit.scenarios import random_spec
    from groupcheck.properties.deviations import same_shared

    spec = random_spec(0, scenario)
    java = run_chain(resolve_audit_target("cooperative-sticky@java:", SETTINGS), spec)
    ours = run_chain(resolve_audit_target("builtin:cooperative-sticky"), spec)
    assert len(java.rounds) == len(ours.rounds) > 10
    for theirs, mine in zip(java.rounds, ours.rounds, strict=True):
        assert theirs["request"] == mine["request"]
        assert same_shared(theirs["response"], mine["response"])
    assert java.inherited == ours.inherited and ours.inherited.get("I11", "").startswith("K")
