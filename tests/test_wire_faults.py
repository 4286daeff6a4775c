"""The broker's new fault kinds on real librdkafka consumers, each aimed at one of two: the
coordinator moved on one member's Heartbeat (both find the new node and the group goes on),
one member's connection closed instead of its Heartbeat answer, and one member's OffsetFetch
answered past its request timeout (that member, alone, times the request out).
"""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("kio")
confluent_kafka = pytest.importorskip("confluent_kafka")

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.targets.wire.timeouts import past_request_timeout  # noqa: E402

from helpers.polled_group import PolledGroup  # noqa: E402

TOPIC, GROUP = "t", "g"
ALL = [f"{TOPIC}-{p}" for p in range(4)]
SOCKET_TIMEOUT_MS = 1500  # librdkafka's request timeout, for every request but the group's
#: librdkafka looks for timed-out requests once a second: past the timeout by more than that
MARGIN_S = 2.0
pytestmark = [pytest.mark.wire,
              pytest.mark.broker_config(topics={TOPIC: 4}, initial_rebalance_delay_ms=500)]


class Logs(logging.Handler):
    """What one consumer's librdkafka logged."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


class Members(PolledGroup):
    """Two librdkafka consumers, a and b, polled from the test's thread."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(ALL)
        self.logs = {n: Logs() for n in ("a", "b")}
        for name, logs in self.logs.items():
            logger = logging.getLogger(f"{__name__}.{name}")
            logger.addHandler(logs)
            logger.setLevel(logging.DEBUG)
            self.consumers[name] = confluent_kafka.Consumer({
                "bootstrap.servers": bootstrap, "group.id": GROUP, "client.id": name,
                "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
                "socket.timeout.ms": SOCKET_TIMEOUT_MS,
                "partition.assignment.strategy": "range"}, logger=logger)
            self.consumers[name].subscribe([TOPIC])


def _heartbeat_after_steering(broker: Broker, member: str) -> bool:
    """Has ``member`` had a Heartbeat answered without error since steering fired?"""
    exchanges = broker.exchanges()
    fired = [e.seq for e in exchanges if e.steering]
    return bool(fired) and any(e.seq > fired[0] and e.who.client_id == member
                               and e.api == "Heartbeat" and e.error_code == 0
                               for e in exchanges)


@pytest.mark.broker_config(topics={TOPIC: 4}, initial_rebalance_delay_ms=500, nodes=2)
def test_a_coordinator_moved_on_one_consumers_heartbeat_is_found_again_by_both(
        broker: Broker) -> None:
    members = Members(broker.bootstrap)
    try:
        members.poll_until(members.settled)
        before, mark = members.owned(), len(broker.exchanges())
        broker.move_coordinator("b", "Heartbeat")
        # node 0 answers every group request NOT_COORDINATOR now: an answered heartbeat
        # is node 1's
        members.poll_until(lambda: _heartbeat_after_steering(broker, "a")
                           and _heartbeat_after_steering(broker, "b"))
        later = broker.exchanges()[mark:]
        moved = [e for e in later if e.steering]
        assert [e.who.client_id for e in moved] == ["b"] and broker.coordinator_of(GROUP) == 1
        assert {e.who.client_id for e in later
                if e.api == "FindCoordinator" and e.seq > moved[0].seq} == {"a", "b"}
        assert members.owned() == before
        assert broker.violations() == []
    finally:
        members.close()


def test_a_connection_closed_before_one_consumers_answer_leaves_the_other_alone(
        broker: Broker) -> None:
    members = Members(broker.bootstrap)
    try:
        members.poll_until(members.settled)
        before, mark = members.owned(), len(broker.exchanges())
        broker.close_before_answer("b", "Heartbeat")
        members.poll_until(lambda: _heartbeat_after_steering(broker, "b"))
        later = broker.exchanges()[mark:]
        assert [(e.who.client_id, e.answered_ms) for e in later if e.steering] == [("b", None)]
        assert [e.api for e in later if e.who.client_id == "a" and e.error_code] == []
        assert sum("withheld" in line for line in broker.notes()) == 1
        assert members.owned() == before
    finally:
        members.close()


def test_an_answer_past_one_consumers_request_timeout_times_out_that_consumer_only(
        broker: Broker) -> None:
    seconds = past_request_timeout("librdkafka", {"request_timeout_ms": SOCKET_TIMEOUT_MS},
                                   "OffsetFetch", margin_s=MARGIN_S)
    broker.delay("b", "OffsetFetch", seconds)
    members = Members(broker.bootstrap)
    try:
        members.poll_until(lambda: members.settled() and any(
            "Timed out OffsetFetchRequest" in line for line in members.logs["b"].lines))
        assert not any("Timed out" in line for line in members.logs["a"].lines)
        delayed = [e for e in broker.exchanges() if e.steering]
        assert [e.who.client_id for e in delayed] == ["b"]
    finally:
        members.close()
