"""Answers a client never read: Kafka's broker serves the requests a connection had sent
before its client closed it, and drops their answers; groupcheck's broker does too, and marks
each such exchange ``unread`` (so that no judgment gives meaning to an answer its client
never saw)."""

from __future__ import annotations

import socket
import time

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402

from helpers.broker_wire import form_pair, sync_both  # noqa: E402

GROUP, TOPIC = "g", "t"
pytestmark = pytest.mark.broker_config(topics={TOPIC: 4})


def _pipelined_heartbeats(broker: Broker, hang_up: bool) -> list[bool]:
    """b sends two heartbeats at once, the first answer delayed 0.3 s, and (``hang_up``)
    closes its end before either answer: each heartbeat exchange's ``unread``."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    sync_both(p, GROUP, TOPIC)
    p.a.receive(), p.b.receive()
    broker.delay("b", "Heartbeat", 0.3)
    request = {"group_id": GROUP, "generation_id": 2, "member_id": p.b_id,
               "group_instance_id": None}
    p.b.send(12, 4, request)
    p.b.send(12, 4, request)
    if hang_up:
        p.b.sock.shutdown(socket.SHUT_WR)
    else:
        p.b.receive(), p.b.receive()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        beats = [e for e in broker.exchanges() if e.api == "Heartbeat" and
                 e.who.client_id == "b"]
        if len(beats) == 2 and all(e.answered_ms is not None for e in beats):
            return [e.unread for e in beats]
        time.sleep(0.05)
    raise AssertionError("the broker never answered both heartbeats")


def test_answers_written_after_the_client_hung_up_are_marked_unread(broker: Broker) -> None:
    """Kafka's broker serves what a closed connection had sent and drops the answers: so
    does groupcheck's, and marks them never read (a client gives no answer it never read
    a meaning: `member_ids`)."""
    assert _pipelined_heartbeats(broker, hang_up=True) == [True, True]
    assert "(unread: the client had closed the connection)" in [
        e for e in broker.exchanges() if e.api == "Heartbeat"][-1].line()


def test_answers_a_client_waits_for_are_not_marked_unread(broker: Broker) -> None:
    assert _pipelined_heartbeats(broker, hang_up=False) == [False, False]
