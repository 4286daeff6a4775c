"""aiokafka gives up an answer after its ``request_timeout_ms``, whatever the request
(`targets.wire.timeouts` models it so, and the fault engine's delay points hold an answer
past it): a Heartbeat answer held 3 s is given up at the member's 1 s timeout and the member
heartbeats again, on aiokafka against groupcheck's broker."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from groupcheck.broker import Broker
from groupcheck.targets.wire.timeouts import past_request_timeout, request_timeout_ms

aiokafka = pytest.importorskip("aiokafka")

pytestmark = [pytest.mark.wire, pytest.mark.broker_config(topics={"t": 2})]

TIMEOUT_MS = 1000
CONFIG = {"request_timeout_ms": TIMEOUT_MS, "session_timeout_ms": 6000}


class GaveUp(logging.Handler):
    """When aiokafka logged that a heartbeat's answer did not come."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.at: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "Heartbeat send request failed" in record.getMessage():
            self.at.append(time.monotonic())


async def _held_heartbeat(broker: Broker, gave_up: GaveUp) -> tuple[float, float]:
    consumer = aiokafka.AIOKafkaConsumer(
        "t", bootstrap_servers=broker.bootstrap, group_id="g", client_id="a",
        session_timeout_ms=6000, heartbeat_interval_ms=300, request_timeout_ms=TIMEOUT_MS)
    await consumer.start()
    try:
        while not consumer.assignment():
            await consumer.getmany(timeout_ms=100)
        delay = past_request_timeout("aiokafka", CONFIG, "Heartbeat", margin_s=2.0)
        broker.delay("a", "Heartbeat", delay)
        held = time.monotonic()
        while not gave_up.at and time.monotonic() - held < delay:
            await consumer.getmany(timeout_ms=100)
        return held, delay
    finally:
        await consumer.stop()


def test_aiokafka_gives_a_held_heartbeat_up_at_its_request_timeout(broker: Broker) -> None:
    assert request_timeout_ms("aiokafka", CONFIG, "Heartbeat") == TIMEOUT_MS
    gave_up = GaveUp()
    logger = logging.getLogger("aiokafka.consumer.group_coordinator")
    logger.addHandler(gave_up)
    try:
        held, delay = asyncio.run(_held_heartbeat(broker, gave_up))
    finally:
        logger.removeHandler(gave_up)
    assert gave_up.at, "aiokafka waited out the held answer"
    waited = gave_up.at[0] - held
    # the held request goes out within one heartbeat interval of the rule; then 1 s
    assert TIMEOUT_MS / 1000 <= waited + 0.3 < delay, waited
