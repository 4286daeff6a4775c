"""The records of a run are written through one producer driver shared by every thread: a
record the producer refuses replaces it for the next record, and leaves it running for the
records other threads are writing through it (closing it under them failed a whole KafkaJS
fault run with "driver exited (code 0)"); and a driver writes records sent at once through
one producer, connected before the first is sent."""

from __future__ import annotations

import sys
import threading

import pytest

from groupcheck.broker import Broker
from groupcheck.targets.wire.clients import DRIVER_ENV, argv
from groupcheck.targets.wire.driver_pool import DriverPool
from groupcheck.targets.wire.driver_process import CommandFailed, DriverProcess

from helpers import TARGETS
from helpers.environment import missing

PRODUCER = f"cmd={sys.executable} {TARGETS / 'quiet_driver.py'}"
RECORDS = 6


def test_a_refused_record_does_not_fail_another_threads_record_in_flight() -> None:
    pool = DriverPool()
    written: list[str] = []
    try:
        pool.produce(PRODUCER, "", "127.0.0.1:1", "warm", 0)  # the shared producer starts
        slow = threading.Thread(target=lambda: (
            pool.produce(PRODUCER, "", "127.0.0.1:1", "slow", 0), written.append("slow")))
        slow.start()
        with pytest.raises(CommandFailed, match="does not host"):
            pool.produce(PRODUCER, "", "127.0.0.1:1", "refused", 0)  # twice: fresh one too
        slow.join(10)
        assert written == ["slow"]
        pool.produce(PRODUCER, "", "127.0.0.1:1", "after", 0)  # a fresh producer writes on
    finally:
        pool.close()


@pytest.mark.wire
def test_the_kafkajs_driver_writes_records_sent_at_once_through_one_connected_producer(
        broker: Broker) -> None:
    """Its producer is made on the first record; records that came while it connected used
    to go to it unconnected ("The producer is disconnected")."""
    if reason := missing("kafkajs"):
        pytest.skip(reason)
    broker.create_topic("burst", 1)
    driver = DriverProcess(argv("kafkajs", ""), "kafkajs", lambda _d, _m: None, DRIVER_ENV)
    try:
        sent = [driver.send("produce", bootstrap=broker.bootstrap, topic="burst",
                            partition=0, value=str(n)) for n in range(RECORDS)]
        acks = [driver.wait(number, "produce") for number in sent]
        assert [a.get("error") for a in acks] == [None] * RECORDS
    finally:
        driver.close()
