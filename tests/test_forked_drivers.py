"""The Python member drivers are forked from a warm interpreter (`targets.wire.forked`), and
a forked driver is what a started one is: its own process and session, its client's answers,
a kill that reaches it alone, its exit code reported; a fork server that dies leaves the
drivers it forked observable, and the next driver still starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import cast

import pytest

from groupcheck.targets.wire.clients import DRIVER_ENV, argv
from groupcheck.targets.wire.driver_process import DriverProcess
from groupcheck.targets.wire.forked import ForkedProcess, ForkServer, launch

from helpers import TARGETS

pytestmark = pytest.mark.xdist_group("forked")

CLIENT = "kafka-python"
CLOSED_WITHIN = 5.0  # seconds; the server waits for nothing once its socket ends


def driver(events: list[object] | None = None) -> DriverProcess:
    sink = events if events is not None else []
    return DriverProcess(argv(CLIENT, ""), CLIENT, lambda _d, m: sink.append(m), DRIVER_ENV)


def test_a_python_driver_is_forked_into_a_process_and_session_of_its_own() -> None:
    first, second = driver(), driver()
    try:
        assert isinstance(first.proc, ForkedProcess) and isinstance(second.proc, ForkedProcess)
        assert first.proc.pid != second.proc.pid
        for child in (first, second):
            assert os.getsid(child.proc.pid) == child.proc.pid  # a kill reaches it alone
            assert child.call("hello")["client"] == CLIENT
    finally:
        first.close()
        second.close()
    assert first.proc.poll() == 0 and second.proc.poll() == 0  # shutdown: a clean exit


def test_a_kill_ends_the_killed_driver_only_and_reports_the_signal() -> None:
    victim, bystander = driver(), driver()
    try:
        victim.kill()
        assert victim.proc.wait(5) == -signal.SIGKILL
        assert not victim.alive
        assert bystander.call("hello")["client"] == CLIENT
    finally:
        bystander.close()


def _said(child: ForkedProcess) -> dict[str, object]:
    assert child.stdout is not None
    line = json.loads(child.stdout.read())
    for stream in (child.stdin, child.stdout, child.stderr):
        assert stream is not None
        stream.close()
    return cast(dict[str, object], line)


def test_an_exit_reported_before_its_launch_was_kept_is_not_lost() -> None:
    """Each child exits at once: its server may say so before the launch's answer is read."""
    env = {**os.environ, "PYTHONPATH": str(TARGETS)}
    server = ForkServer([sys.executable, "-m", "exiting_driver"], env)
    try:
        for _ in range(20):
            child = server.launch(env)
            assert child.wait(10) == 3
            assert _said(child)["event"] == "bye"
    finally:
        server.close()


def test_a_forked_driver_runs_with_the_environment_of_its_launch_not_its_servers() -> None:
    env = {**os.environ, "PYTHONPATH": str(TARGETS), "MARK": "at the server's start"}
    server = ForkServer([sys.executable, "-m", "exiting_driver"], env)
    try:
        marked = server.launch({**env, "MARK": "at the launch"})
        unmarked = server.launch({k: v for k, v in env.items() if k != "MARK"})
        assert marked.wait(10) == 3 and unmarked.wait(10) == 3
        assert _said(marked)["mark"] == "at the launch"
        assert _said(unmarked)["mark"] is None
    finally:
        server.close()


def test_a_dead_fork_server_leaves_its_drivers_observable_and_the_next_driver_starts() -> None:
    orphan = driver()
    server_pid = int(subprocess.run(["ps", "-o", "ppid=", "-p", str(orphan.proc.pid)],
                                    capture_output=True, text=True, check=True).stdout)
    os.kill(server_pid, signal.SIGKILL)
    try:
        assert orphan.call("hello")["client"] == CLIENT  # the driver outlives its server
        orphan.kill()
        assert orphan.proc.wait(10) == -1  # its exit is seen; the code died with the server
        replacement = driver()
        try:
            assert replacement.call("hello")["client"] == CLIENT
        finally:
            replacement.close()
    finally:
        orphan.close()


def test_a_command_that_is_not_a_python_driver_module_is_started_not_forked() -> None:
    child = launch([sys.executable, "-c", "print('started')"], dict(os.environ))
    assert isinstance(child, subprocess.Popen)
    assert child.communicate(timeout=10)[0] == b"started\n"


def test_closing_a_fork_server_that_has_launched_ends_it_at_once() -> None:
    """Its reader waits in ``recv`` on the socket: the server must see the end anyway (a
    closed descriptor alone would leave the socket open under that reader)."""
    env = {**os.environ, "PYTHONPATH": str(TARGETS)}
    server = ForkServer([sys.executable, "-m", "exiting_driver"], env)
    assert server.launch(env).wait(10) == 3
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < CLOSED_WITHIN
    assert server.lost
