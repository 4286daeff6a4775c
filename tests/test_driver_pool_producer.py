"""The records of a run are written through one producer driver shared by every thread: a
record the producer refuses replaces it for the next record, and leaves it running for the
records other threads are writing through it (closing it under them failed a whole KafkaJS
fault run with "driver exited (code 0)")."""

from __future__ import annotations

import sys
import threading

import pytest

from groupcheck.targets.wire.driver_pool import DriverPool
from groupcheck.targets.wire.driver_process import CommandFailed

from helpers import TARGETS

PRODUCER = f"cmd={sys.executable} {TARGETS / 'quiet_driver.py'}"


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
