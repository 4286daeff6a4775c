"""A fenced static member's close, on Kafka's Java client: the harness waits for a close as long
as the client documents it may take (its own 30 s, plus a revoke callback's commitSync bounded
by default.api.timeout.ms), and a static duplicate's fenced member, with or without commits in
onPartitionsRevoked, says it was fenced and closes within that bound (a harness error
otherwise); having heard it, it polls no more, so it never rejoins to fence its twin."""

from __future__ import annotations

import sys

import pytest

from groupcheck.model.event_types import Join
from groupcheck.model.group_events import Partitions, Produce, Settle
from groupcheck.model.replay import replay_events
from groupcheck.model.static_events import StaticDuplicate
from groupcheck.targets.wire import driver_process
from groupcheck.targets.wire.driver_process import DriverError, DriverProcess

from helpers.environment import group_target_factory, missing

SLOW_ACK = """
import json, sys, time
for line in sys.stdin:
    command = json.loads(line)
    time.sleep(0.6)
    print(json.dumps({"ack": command["id"]}), flush=True)
"""


@pytest.mark.heavy  # the fenced Java member's close within its bound runs by default
def test_a_close_is_waited_for_by_its_own_bound_and_other_commands_by_theirs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver_process, "COMMAND_TIMEOUT", 0.2)
    monkeypatch.setattr(driver_process, "CLOSE_TIMEOUT", 5.0)
    driver = DriverProcess([sys.executable, "-c", SLOW_ACK], "slow", lambda _d, _m: None)
    try:
        assert driver.call("close", member="a").get("ack") == 1
        with pytest.raises(DriverError, match="did not answer pause in 0s"):
            driver.call("pause", member="a")
    finally:
        driver.close()


def test_the_close_bound_covers_the_java_close_and_a_callback_commit() -> None:
    java_close_s, default_api_timeout_s = 30.0, 60.0
    assert driver_process.bound("close") > java_close_s + default_api_timeout_s
    assert driver_process.bound("pause") == driver_process.COMMAND_TIMEOUT


@pytest.mark.wire
@pytest.mark.parametrize("style", [pytest.param("none", marks=pytest.mark.heavy), "revoke"])
def test_a_fenced_java_static_member_stops_polling_and_closes_within_its_bound(
        style: str) -> None:
    pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")
    reason = missing("java")
    if reason:
        pytest.skip(reason)
    story = [Partitions("t0", 3), *[Produce("t0", p) for p in range(3)],
             Join("a", ("t0",), ("cooperative-sticky",), group_instance_id="ia",
                  commit_style=style),
             Join("b", ("t0",), ("cooperative-sticky",), commit_style=style), Settle(),
             StaticDuplicate("a", "c"), Settle()]
    outcome = replay_events(group_target_factory("wire:java:cooperative-sticky")(), story)
    assert any("FencedInstanceIdException" in line for line in outcome.story), outcome.story
    assert outcome.violations == [], outcome.story  # the fenced one never rejoins to fence c
