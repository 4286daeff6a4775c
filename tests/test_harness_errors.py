"""A failure of groupcheck's own machinery ends the run as groupcheck's error (`HarnessError`),
never as a verdict on the client: it is raised by the target's next call wherever the thread
that failed runs (a driver's reader, the pool's closers, the broker's loop, the mock's
proxy), and every engine lets it through — not judged, not shrunk, not saved. A target's
own exception that is no harness error keeps today's handling (an ERROR finding).

The in-process tests run the builtin group or the quiet driver (no client library); the last
one injects a failure into a real librdkafka run.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis.errors import FlakyStrategyDefinition

from groupcheck.engines import many_clients
from groupcheck.engines.battery import fuzz as battery_fuzz
from groupcheck.engines.saved import files as saved_files
from groupcheck.model import fuzz as model_fuzz
from groupcheck.model.events import read_events
from groupcheck.model.machine import ViolationFound, config_for
from groupcheck.model.replay import save
from groupcheck.model.saved_files import read as read_saved
from groupcheck.properties.group import GroupTarget, MemberSpec
from groupcheck.properties.harness import HarnessError
from groupcheck.targets.target import Target
from groupcheck.targets.wire.driver_pool import DriverPool
from groupcheck.targets.wire.driver_process import DriverProcess
from groupcheck.targets.wire.log import WireLog

from helpers import TARGETS
from helpers.environment import missing, resolve

QUIET = TARGETS / "quiet_driver.py"


class FailingGroup:
    """A builtin group whose harness fails at its ``fail_at``-th call of ``join``."""

    def __init__(self, inner: GroupTarget, fail_at: int, error: Exception) -> None:
        self.inner, self.fail_at, self.error, self.calls = inner, fail_at, error, 0

    def join(self, member: str, spec: MemberSpec) -> None:
        self.calls += 1
        if self.calls >= self.fail_at:
            raise self.error
        self.inner.join(member, spec)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def failing(fail_at: int, error: Exception) -> tuple[Target, list[FailingGroup]]:
    target = resolve("builtin:range")
    assert target.group is not None
    inner, made = target.group, []

    def group() -> GroupTarget:
        made.append(FailingGroup(inner(), fail_at, error))
        return made[-1]  # type: ignore[return-value]

    target.group = group
    return target, made


def harness_error() -> HarnessError:
    return HarnessError("groupcheck's own sync-order-c1 thread failed: KeyError: 1",
                        thread="sync-order-c1", traceback_text="Traceback ...")


def test_the_state_machine_lets_a_harness_error_through_unjudged_and_unshrunk(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def no_shrinking(*_: Any, **__: Any) -> Any:
        raise AssertionError("a harness error was shrunk")

    monkeypatch.setattr(model_fuzz, "minimize", no_shrinking)
    target, made = failing(3, harness_error())
    assert target.group is not None
    with pytest.raises(HarnessError, match="sync-order-c1") as err:
        model_fuzz.fuzz(target.group, config_for("range"), max_examples=50)
    assert err.value.traceback_text == "Traceback ..."
    met = [g.calls >= 3 for g in made]  # the example that met it was the last: no replay
    assert met.count(True) == 1 and met[-1]
    assert "reproduce" not in capsys.readouterr().out


def test_a_failing_example_that_does_not_replay_alike_keeps_the_failure_it_met() -> None:
    """Real clients do not always let the machine draw the same way twice: Hypothesis's
    replay of the failing example then raises Flaky. The run's failure is the violation the
    example met, else the target's own exception; with none, Hypothesis failed on its own
    (a harness error, never an ERROR finding)."""
    flaky = FlakyStrategyDefinition("Inconsistent data generation!")
    found = ViolationFound(["I1: t0-0 assigned to c1, c2"], [])
    broke = RuntimeError("the assignor broke")
    assert model_fuzz.first_failure(flaky, [broke, found]) is found
    assert model_fuzz.first_failure(flaky, [broke]) is broke
    missing = model_fuzz.first_failure(flaky, [])
    assert isinstance(missing, HarnessError) and "FlakyStrategyDefinition" in str(missing)


def test_the_fuzz_engine_raises_a_harness_error_and_saves_nothing(tmp_path: Path) -> None:
    target, _ = failing(2, harness_error())
    with pytest.raises(HarnessError):
        battery_fuzz.run_fuzz(target, 30, str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_a_target_that_raises_something_else_is_still_an_error_finding(tmp_path: Path) -> None:
    target, _ = failing(2, RuntimeError("the assignor broke"))
    result = battery_fuzz.run_fuzz(target, 30, str(tmp_path))
    assert result.findings["ERROR"].violation == (
        "ERROR: the group raised RuntimeError: the assignor broke")


def test_replaying_a_file_on_a_harness_that_fails_raises_instead_of_a_verdict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = [{"op": "partitions", "topic": "t0", "count": 2},
              {"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["range"]},
              {"op": "settle"}]
    path = save(tmp_path, "builtin:range", read_events(events),
                ["I1: t0-0 assigned to c1, c2"], 0)
    target, _ = failing(1, harness_error())
    monkeypatch.setattr(saved_files, "group_target", lambda *_, **__: target)
    with pytest.raises(HarnessError):
        saved_files.replay_events_file(read_saved(path), target=None, assignor=None)


def test_many_clients_end_the_run_on_a_group_threads_exception(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Quiet:
        def close(self) -> None:
            pass

    def broken(g: many_clients.GroupPlan, *_: Any) -> many_clients.GroupResult:
        if g.group == "g01":
            raise KeyError("a bug of ours")
        return many_clients.GroupResult(g.group, g.clients, "holds")

    info = many_clients.ClientInfo("quiet", "quiet", "0", ("range",), "kip", "command")
    monkeypatch.setattr(many_clients, "_infos", lambda *_: ({"quiet": info}, {"quiet": ""}))
    monkeypatch.setattr(many_clients, "start_broker", lambda **_: Quiet())
    monkeypatch.setattr(many_clients, "_play", broken)
    plans = (many_clients.GroupPlan("g00", ("quiet",), "range"),
             many_clients.GroupPlan("g01", ("quiet",), "range"))
    scenario = many_clients.LoadScenario("two", plans, True)
    with pytest.raises(HarnessError, match="group-g01 thread failed: KeyError"):
        many_clients.run(scenario, many_clients.Settings())


def _quiet_group() -> Any:
    pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")
    from groupcheck.targets.wire.wire_group import WireGroup

    return WireGroup("wire:quiet:range", (f"cmd={sys.executable} {QUIET}",), "range")


def test_a_driver_reader_that_raises_ends_the_next_call_at_once_not_at_its_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: WireLog, source: int, message: dict[str, Any]) -> None:
        raise ValueError(f"cannot log {message.get('event')}")

    group = _quiet_group()
    try:
        group.set_partitions("t0", 2)
        group.join("c1", MemberSpec(topics=("t0",), assignors=("range",)))
        monkeypatch.setattr(WireLog, "receive", broken)
        began = time.monotonic()
        with pytest.raises(HarnessError, match="stdout reader thread failed: ValueError"):
            group.leave("c1")  # the driver's 'closed' event reaches the broken log
        assert time.monotonic() - began < 10
    finally:
        monkeypatch.undo()
        group.close()


def test_a_driver_event_the_wire_log_cannot_read_is_a_harness_error() -> None:
    log = WireLog()
    log.receive(1, {"event": "callback_end", "member": "c1", "kind": "assigned",
                    "generation": "seven", "ts": 1})
    with log.cond, pytest.raises(HarnessError, match="cannot read.*seven"):
        log.release()


def test_the_broker_loop_failing_is_the_wire_groups_harness_error() -> None:
    group = _quiet_group()
    try:
        broker = group.backend.broker

        def tick() -> None:
            raise RuntimeError("a timer of the broker")

        broker._loop.call_soon_threadsafe(tick)
        deadline = time.monotonic() + 10
        while broker.failure() is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with pytest.raises(HarnessError, match="groupcheck-broker event loop thread failed"):
            group.view()
    finally:
        group.close()


def test_a_pool_thread_that_raises_while_closing_is_the_pools_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: DriverProcess) -> None:
        raise OSError("cannot close")

    pool = DriverPool()
    driver = pool.start(f"cmd={sys.executable} {QUIET}")
    try:
        monkeypatch.setattr(DriverProcess, "close", broken)
        pool.close()
        failure = pool.failure()
        assert failure is not None and failure.kind == "OSError"
        assert failure.thread.startswith("close-")
    finally:
        monkeypatch.undo()
        driver.close()


def test_a_proxy_thread_that_raises_is_the_proxys_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from groupcheck.targets.wire.backends import mock_proxy

    def broken(*_: Any) -> socket.socket:
        raise LookupError("upstream")

    connect = socket.create_connection
    monkeypatch.setattr(mock_proxy.socket, "create_connection", broken)
    proxy = mock_proxy.Proxy(("127.0.0.1", 9))
    try:
        with connect(("127.0.0.1", proxy.port), timeout=5):
            deadline = time.monotonic() + 10
            while proxy.failures.first is None:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        assert proxy.failures.first.thread == "proxy-accept"
    finally:
        monkeypatch.undo()
        proxy.close()


@pytest.mark.wire
@pytest.mark.skipif(bool(missing("librdkafka")), reason=missing("librdkafka"))
def test_a_real_wire_run_whose_reader_fails_raises_and_saves_no_counterexample(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """librdkafka consumers on groupcheck's broker; the wire log fails on the tenth event a
    driver hands on: the fuzz engine raises the harness error and saves nothing."""
    receive: Callable[..., None] = WireLog.receive
    seen = [0]

    def tenth(self: WireLog, source: int, message: dict[str, Any]) -> None:
        seen[0] += 1
        if seen[0] == 10:
            raise ValueError("the wire log broke")
        receive(self, source, message)

    monkeypatch.setattr(WireLog, "receive", tenth)
    target = resolve("wire:librdkafka:range")
    try:
        with pytest.raises(HarnessError, match="reader thread failed: ValueError"):
            battery_fuzz.run_fuzz(target, 120, str(tmp_path))
    finally:
        target.close()
    assert seen[0] >= 10 and list(tmp_path.iterdir()) == []
