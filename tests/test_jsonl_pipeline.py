"""The pipelined process transport (`JsonlProcess.stream`): many requests in flight, answers
matched by the id they echo or by order, and each request's failure its own — a hang, a
crash, garbage or half a line fails the request it is blamed on, and the requests after it
go to a fresh process."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

from groupcheck.targets.processes.jsonl_process import (
    JsonlProcess,
    JsonlTarget,
    Outcome,
    TargetAnswerError,
    TargetFailure,
    TargetTimeout,
)
from groupcheck.targets.processes.process_window import Window, request_line

from helpers.vectors import load

SERVER = Path(__file__).resolve().parent / "targets" / "jsonl_pipeline_server.py"


def _process(mode: str, k: int = -1, *, window: int = 16, timeout: float = 20) -> JsonlProcess:
    return JsonlProcess([sys.executable, str(SERVER), mode, str(k)], timeout, window=window)


def _run(process: JsonlProcess, count: int) -> list[Outcome]:
    try:
        return list(process.stream({"op": "ping", "n": i} for i in range(count)))
    finally:
        process.close()


def _echoes(outcomes: list[Outcome]) -> list[Any]:
    return [o if isinstance(o, TargetFailure) else o.get("echo") for o in outcomes]


def test_a_request_line_carries_our_id_in_place_of_the_callers() -> None:
    assert request_line({"op": "ping", "id": "theirs"}, 7) == b'{"id":7,"op":"ping"}\n'
    assert request_line({}, 8) == b'{"id":8}\n'
    assert request_line({"s": "\udc80"}, 9) == b'{"id":9,"s":"\\udc80"}\n'


@pytest.mark.parametrize("mode", ["ids", "noid"])
def test_answers_come_back_in_request_order_with_ids_echoed_or_not(mode: str) -> None:
    process = _process(mode)
    outcomes = _run(process, 300)
    assert _echoes(outcomes) == list(range(300))
    assert all("id" not in o for o in outcomes if isinstance(o, dict))
    assert process.starts == 1 and process.failures == 0


def test_out_of_order_answers_are_matched_by_id() -> None:
    process = _process("reorder", 10, window=20)
    assert _echoes(_run(process, 200)) == list(range(200))


def test_a_timeout_in_a_full_window_names_its_request_and_the_rest_go_to_a_fresh_process(
        ) -> None:
    process = _process("hang", 20, window=8, timeout=1.5)
    started = time.perf_counter()
    outcomes = _run(process, 40)
    assert time.perf_counter() - started < 15
    hung = outcomes[20]
    assert isinstance(hung, TargetTimeout) and hung.request == {"op": "ping", "n": 20}
    assert "no answer within 1.5s" in str(hung)
    assert _echoes(outcomes[:20] + outcomes[21:]) == [*range(20), *range(21, 40)]
    assert process.starts == 2 and process.failures == 1


@pytest.mark.parametrize(("mode", "why"), [("crash", "exited (code 3)"),
                                           ("garbage", "not JSON"),
                                           ("partial", "cut short")])
def test_a_crash_or_garbage_mid_window_fails_that_request_only(mode: str, why: str) -> None:
    process = _process(mode, 5, window=16)
    outcomes = _run(process, 30)
    failed = outcomes[5]
    assert isinstance(failed, TargetFailure) and not isinstance(failed, TargetTimeout)
    assert why in str(failed)
    assert _echoes(outcomes[:5] + outcomes[6:]) == [*range(5), *range(6, 30)]
    assert process.starts == 2


def test_an_error_answer_is_that_requests_alone() -> None:
    process = _process("error", 3)
    outcomes = _run(process, 10)
    assert outcomes[3] == {"error": "Boom: request K"}
    assert _echoes(outcomes[:3] + outcomes[4:]) == [*range(3), *range(4, 10)]
    target = JsonlTarget("jsonl:test", _process("error", 3), "range")
    try:
        answers = list(target.assign_many({"n": i} for i in range(6)))  # type: ignore[misc]
    finally:
        target.close()
    assert isinstance(answers[3], TargetAnswerError) and "Boom" in str(answers[3])
    assert [a.get("echo") for a in answers if isinstance(a, dict)] == [0, 1, 2, 4, 5]


def test_no_more_requests_than_the_window_are_in_flight() -> None:
    outcomes = _run(_process("window", window=8), 50)
    assert _echoes(outcomes) == list(range(50))
    assert isinstance(outcomes[0], dict) and outcomes[0]["seen"] == 8


def test_leaving_a_stream_with_requests_in_flight_kills_the_process() -> None:
    process = _process("ids")
    try:
        stream = process.stream({"op": "ping", "n": i} for i in range(100))
        assert _echoes([next(stream), next(stream)]) == [0, 1]
        stream.close()
        assert process.io is None
        assert process.request({"op": "ping", "n": 5}) == {"echo": 5}
        assert process.starts == 2
    finally:
        process.close()


def test_a_request_inside_an_open_stream_of_the_same_thread_is_refused() -> None:
    process = _process("ids")
    try:
        stream = process.stream({"op": "ping", "n": i} for i in range(3))
        next(stream)
        with pytest.raises(RuntimeError, match="out of turn"):
            process.request({"op": "ping", "n": 9})
        stream.close()
    finally:
        process.close()


def test_the_window_matches_by_id_and_else_the_oldest_request() -> None:
    window = Window(4)
    first, second = window.add({"n": 0}), window.add({"n": 1})
    window.line(first), window.line(second)
    assert window.answer({"id": second.ident, "echo": 1}) is second
    assert list(window.ready()) == []
    assert window.answer({"echo": 0}) is first
    assert list(window.ready()) == [{"echo": 0}, {"echo": 1}]
    with pytest.raises(TargetFailure, match="no request in flight"):
        window.answer({"id": 99})


def _report_files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_the_prover_over_a_jsonl_target_matches_the_prover_in_process(
        assignor: str, tmp_path: Path) -> None:
    """Batched through a process or called in process, one assignor (with a bug, so there
    are counterexamples) gets the same verdicts, counts, gaps and counterexample files."""
    from groupcheck.impl.assign_op import run_assign
    from groupcheck.properties.scope import Scope
    from groupcheck.properties.scope.prover import prove
    from groupcheck.targets.registry import resolve

    sys.path.insert(0, str(SERVER.parent))
    try:
        from jsonl_drops_a_partition import mutate
    finally:
        sys.path.remove(str(SERVER.parent))

    def in_process(request: Any) -> Any:
        return mutate(request, dict(run_assign(request)))

    scope = Scope.parse("members=2,topics=2,partitions=1,generations=2")
    target = resolve(f"jsonl:{sys.executable} {SERVER.parent / 'jsonl_drops_a_partition.py'}",
                     assignor=assignor)
    assert target.batch is not None
    try:
        batched = prove(target.assign, assignor, scope, target="t", workers=1,
                        failures=tmp_path / "batched", assign_many=target.batch)
    finally:
        target.close()
    plain = prove(in_process, assignor, scope, target="t", workers=1,
                  failures=tmp_path / "plain")
    assert batched.violations and batched.violations == plain.violations
    assert batched.configurations == plain.configurations
    assert batched.assign_calls == plain.assign_calls and batched.gaps == plain.gaps
    assert ({i: c.file and Path(c.file).name for i, c in batched.counterexamples.items()}
            == {i: c.file and Path(c.file).name for i, c in plain.counterexamples.items()})
    assert _report_files(tmp_path / "batched") == _report_files(tmp_path / "plain")


def test_the_vectors_engine_over_a_jsonl_target_matches_the_builtin(tmp_path: Path) -> None:
    """The golden vectors sent through the window judge as the builtin called in process."""
    from groupcheck.engines.battery.golden import AssignVector, run_vectors
    from groupcheck.targets.registry import resolve

    lines = cast(list[AssignVector], load("assign.jsonl"))  # skips without the vectors
    target = resolve(f"jsonl:{sys.executable} -m groupcheck jsonl", assignor="sticky")
    try:
        piped = run_vectors(target, str(tmp_path / "piped"), lines)
    finally:
        target.close()
    local = run_vectors(resolve("builtin:sticky"), str(tmp_path / "local"), lines)
    assert piped.runs == local.runs > 0
    assert {k: v for k, v in piped.judged.items() if k != "TIMEOUT"} == {
        k: v for k, v in local.judged.items() if k != "TIMEOUT"}
    assert sorted(piped.findings) == sorted(local.findings)
