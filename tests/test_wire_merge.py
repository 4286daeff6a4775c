"""The merged log of a wire group keeps causes before their effects across driver processes,
in the default run (no client library): a driver's line is handed on before anything its
act caused (the pipes are drained before events are released); a librdkafka revoke callback
logs its end before it hands the partitions back; without a drain check the grace follows
slow deliveries."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from groupcheck.targets.wire.driver_process import DriverProcess
from groupcheck.targets.wire.drivers.host import DriverOutput, Listener
from groupcheck.targets.wire.drivers.messages import DriverEvent
from groupcheck.targets.wire.log import MAX_GRACE_NS, MERGE_GRACE_NS, WireLog


def _event(member: str, kind: str, ts: int, phase: str = "callback_end") -> dict[str, Any]:
    return {"event": phase, "member": member, "kind": kind, "ts": ts,
            "partitions": [["t0", 0]]}


@contextlib.contextmanager
def _held(script: str, seq: int | None = None) -> Iterator[tuple[DriverProcess, threading.Event]]:
    """A driver running ``script`` whose reader thread is held on its line numbered ``seq``
    (on any line: None), yielded once the line got there, with the event that lets it go;
    killed at the end (a script that reads no command would wait out a shutdown's bound)."""
    arrived, go = threading.Event(), threading.Event()

    def hold(_driver: DriverProcess, message: DriverEvent) -> None:
        if seq is None or message.get("seq") == seq:
            arrived.set()
            go.wait(10)

    driver = DriverProcess([sys.executable, "-c", script], "held", hold)
    try:
        assert arrived.wait(10)
        yield driver, go
    finally:
        go.set()
        driver.kill()
        driver.close()


def test_a_line_read_but_not_handed_on_keeps_the_driver_undrained() -> None:
    """While the reader thread is still handing a line on, the driver is not drained."""
    talk = ("import json, sys\n"
            "print(json.dumps({'event': 'closed', 'member': 'c1', 'seq': 0, 'ts': 1}),"
            " flush=True)\n"
            "sys.stdout.write('{\"event\": \"closed\"')\nsys.stdout.flush()\n"
            "sys.stdin.readline()\n")
    with _held(talk) as (driver, go):
        assert not driver.drained()  # one line on its way to the log, half a line waiting
        go.set()
        time.sleep(0.2)
        assert not driver.drained()  # the half line still has no end
    assert driver.drained()


def test_a_driver_that_never_stops_writing_holds_back_no_line_stamped_before_the_horizon(
        ) -> None:
    """One JVM hosts every fault point's consumers: its pipe is never empty, and a group
    waiting for it to empty waited out its settle bound (Java 3.2.0's full fault scope). A
    line stamped after the horizon, handed on, shows every line stamped before it is out,
    while a line stamped before the horizon still being handed on holds it back."""
    chatter = ("import json, sys, time\n"
               "seq = 0\n"
               "while True:\n"
               "    print(json.dumps({'event': 'closed', 'member': 'c1', 'seq': seq,"
               " 'ts': time.monotonic_ns()}), flush=True)\n"
               "    seq += 1\n"
               "    time.sleep(0.001)\n")
    with _held(chatter, seq=0) as (driver, go):
        horizon = time.monotonic_ns()
        assert not driver.drained(horizon)  # its first line is still being handed on
        go.set()
        deadline = time.monotonic() + 10
        while not driver.drained(horizon) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert driver.drained(horizon)


def test_events_wait_for_undrained_pipes_and_go_at_once_when_they_are_drained() -> None:
    drained = [False]
    log = WireLog(lambda _horizon: drained[0])
    stamp = time.monotonic_ns()
    log.receive(1, _event("c1", "revoked", stamp))
    log.receive(2, _event("c2", "assigned", stamp + 1))
    time.sleep(3 * MERGE_GRACE_NS / 1e9)
    with log.cond:
        assert log.release() == 2 and log.entries == []  # a pipe still holds data
    drained[0] = True
    with log.cond:
        assert log.release() == 0
    assert [e.kind for e in log.entries] == ["revoked", "assigned"]


def test_with_nothing_received_yet_an_undrained_pipe_still_counts_as_an_event_on_its_way() -> None:
    """The wire group shows a completed generation only when nothing is waiting: a revoke's
    end still in a pipe (its reader thread not scheduled yet) must count, or the generation
    it preceded is judged with the partitions still owned (a false I5)."""
    drained = [False]
    log = WireLog(lambda _horizon: drained[0])
    with log.cond:
        assert log.release() == 1
    drained[0] = True
    with log.cond:
        assert log.release() == 0


def test_an_undrained_pipe_holds_back_even_old_events() -> None:
    """A reader thread of a starved harness can wait its turn for seconds: age alone never
    lets an event past a pipe that still holds a line."""
    log = WireLog(lambda _horizon: False)
    log.receive(1, _event("c1", "revoked", time.monotonic_ns() - 10 * MAX_GRACE_NS))
    log.receive(2, _event("c2", "assigned", time.monotonic_ns() - 5 * MAX_GRACE_NS))
    with log.cond:
        assert log.release() == 2 and log.entries == []


def test_a_revoke_that_hands_partitions_back_itself_logs_its_end_first() -> None:
    """librdkafka rejoins while ``unassign`` is being served: the end must be out first;
    an assign logs its end once its call returned."""
    order: list[str] = []

    class EventOrder(DriverOutput):
        def event(self, name: str, member: str, **fields: Any) -> None:
            order.append(f"{name}:{fields['kind']}")

    listener = Listener(EventOrder(), "c1", lambda: (1, "m"), lambda: None)
    for kind in ("revoked", "lost", "assigned"):
        listener.callback(kind, [("t0", 0)], lambda kind=kind: order.append(f"apply:{kind}"))
    assert order == ["callback_start:revoked", "callback_end:revoked", "apply:revoked",
                     "callback_start:lost", "callback_end:lost", "apply:lost",
                     "callback_start:assigned", "apply:assigned", "callback_end:assigned"]


def test_the_merge_grace_grows_with_slow_deliveries_so_a_late_revoke_keeps_its_place() -> None:
    log = WireLog()
    now = time.monotonic_ns()
    for i in range(3):  # deliveries 150 ms after their stamps, from a busy machine
        log.receive(1, {"event": "records", "member": "c1", "ts": now - 150_000_000 + i,
                        "records": []})
    assert log.grace() >= 2 * 150_000_000 > MERGE_GRACE_NS
    with log.cond:
        log.release()
    stamp = time.monotonic_ns()
    log.receive(2, {"event": "callback_end", "member": "c2", "kind": "assigned", "ts": stamp,
                    "partitions": [["t0", 0]]})
    time.sleep(2 * MERGE_GRACE_NS / 1e9)  # past the fixed grace, the revoke still on its way
    with log.cond:
        log.release()
    log.receive(1, {"event": "callback_end", "member": "c1", "kind": "revoked",
                    "ts": stamp - 1_000_000, "partitions": [["t0", 0]]})
    assert log.wait_for(lambda: len(log.entries) == 2, log.grace() / 1e9 + 1)
    assert [e.kind for e in log.entries] == ["revoked", "assigned"] and log.late == 0
