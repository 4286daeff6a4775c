"""The wire log's merge: events of several drivers are released in stamp order once every
driver's output is known to have passed them (its latest stamp, or a barrier's ack), never
after a guessed delay — so a driver that is slow to write (a busy machine) delays the merge
but cannot reorder it; and a driver's acks are barriers, end to end through a real process."""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace
from typing import Any

from groupcheck.targets.wire.driver_process import DriverProcess
from groupcheck.targets.wire.log import WireLog
from groupcheck.targets.wire.silence import silent_after_sync


def _event(member: str, kind: str, ts: int) -> dict[str, Any]:
    return {"event": "callback_end", "member": member, "kind": kind, "ts": ts,
            "partitions": [["t0", 0]], "generation": 1, "memberId": member}


def _order(log: WireLog) -> list[tuple[str, str]]:
    with log.cond:
        log.release()
        return [(e.member, e.kind) for e in log.entries]


def test_an_event_waits_until_every_other_driver_has_passed_its_stamp() -> None:
    """c1's revoke ended first (stamp 100) but reaches the harness after c2's assign (stamp
    200), long after any delay a grace would allow: c2's assign is held until c1's stream is
    past 200, and then both come out in stamp order."""
    log, pings = WireLog(), []
    d1, d2 = object(), object()
    log.open_stream(d1, 0, lambda: pings.append("d1"))
    log.open_stream(d2, 0, lambda: pings.append("d2"))
    log.receive(2, _event("c2", "assigned", 200), d2)
    time.sleep(0.1)
    assert _order(log) == [] and pings == ["d1"]  # d1 is asked for a barrier, once
    assert _order(log) == [] and pings == ["d1"]
    log.receive(1, _event("c1", "revoked", 100), d1)
    assert _order(log) == [("c1", "revoked")]  # d1 has only passed 100 so far
    log.synced(d1, 300)  # the barrier's ack: d1 stamped nothing else before 300
    assert _order(log) == [("c1", "revoked"), ("c2", "assigned")]
    assert log.late == 0


def test_a_closed_stream_holds_nothing_back() -> None:
    """A driver whose output ended (it was killed, or shut down) is not waited for."""
    log = WireLog()
    d1, d2 = object(), object()
    log.open_stream(d1, 0, lambda: None)
    log.open_stream(d2, 0, lambda: None)
    log.receive(2, _event("c2", "assigned", 200), d2)
    assert _order(log) == []
    log.close_stream(d1)
    assert _order(log) == [("c2", "assigned")]


def test_one_stream_releases_at_once() -> None:
    log = WireLog()
    d1 = object()
    log.open_stream(d1, 0, lambda: None)
    log.receive(1, _event("c1", "assigned", 50), d1)
    assert _order(log) == [("c1", "assigned")]


ECHO = """
import json, sys, time
for line in sys.stdin:
    cmd = json.loads(line)
    print(json.dumps({"event": "records", "member": "m", "ts": time.monotonic_ns(),
                      "records": []}), flush=True)
    print(json.dumps({"ack": cmd["id"], "client": "toy"}), flush=True)
"""


def test_a_barrier_ack_moves_the_stream_past_its_send_time() -> None:
    """Through a real child process: the barrier's ack reaches ``on_sync`` with the time it
    was sent, after the event the driver wrote before it; the ack is not kept for a waiter,
    and the end of the driver's output reaches ``on_close``."""
    synced: list[int] = []
    closed: list[DriverProcess] = []
    events: list[dict[str, Any]] = []
    driver = DriverProcess([sys.executable, "-c", ECHO], "toy",
                           lambda _d, m: events.append(m),
                           on_sync=lambda _d, ns: synced.append(ns),
                           on_close=closed.append)
    try:
        before = time.monotonic_ns()
        driver.barrier()
        deadline = time.monotonic() + 30
        while not synced and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(synced) == 1 and before <= synced[0] <= events[0]["ts"]
        assert driver.call("hello")["client"] == "toy"  # ordinary acks still reach waiters
        assert len(synced) == 2
    finally:
        driver.kill()
    deadline = time.monotonic() + 30
    while not closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert closed == [driver]


def _exchange(who: str, api: str, at: int, generation: int = 0, error: int = 0) -> Any:
    request = SimpleNamespace(generation_id=generation)
    return SimpleNamespace(who=SimpleNamespace(client_id=who), api=api, request=request,
                           received_ms=at, answered_ms=at + 1, error_code=error)


def test_a_member_silent_after_its_syncgroup_answer_is_named_with_its_generation() -> None:
    """kafka-python's hang (findings/wire-kafka-python-range-subscription-change-I11.json)
    as the broker sees it: b's SyncGroup of generation 2 is answered and b sends its
    coordinator nothing for longer than its session timeout (only a LeaveGroup when it
    closes), while a heartbeats on; a SyncGroup answered with an error, or a quick
    heartbeat after it, is no silence."""
    log = [_exchange("a", "SyncGroup", 100, 2), _exchange("b", "SyncGroup", 100, 2),
           _exchange("c", "SyncGroup", 100, 2, error=27),
           *(_exchange("a", "Heartbeat", t) for t in range(600, 9000, 500)),
           _exchange("b", "LeaveGroup", 9000)]
    assert silent_after_sync(log, 6000) == {"b": 2}
    assert silent_after_sync(log, 9000) == {}
    assert silent_after_sync(log[:3], 6000) == {}  # nobody's clock has moved on yet
