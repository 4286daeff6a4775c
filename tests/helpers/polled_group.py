"""Consumers polled from the test's own thread (librdkafka's, as confluent-kafka exposes
them): poll until a condition holds, who owns what, whether every partition is owned."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class PolledGroup:
    """``consumers`` by name, all in one group over the partitions named in ``every``
    (``"<topic>-<partition>"``)."""

    def __init__(self, every: list[str]) -> None:
        self.every = sorted(every)
        self.consumers: dict[str, Any] = {}

    def poll_until(self, done: Callable[[], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, "the group did not get there in time"
            for c in self.consumers.values():
                c.poll(0.02)

    def owned(self) -> dict[str, list[str]]:
        return {n: sorted(f"{tp.topic}-{tp.partition}" for tp in c.assignment())
                for n, c in self.consumers.items()}

    def settled(self) -> bool:
        """Every consumer owns something, and every partition is owned once."""
        owned = self.owned()
        return all(owned.values()) and sorted(sum(owned.values(), [])) == self.every

    def close(self) -> None:
        for c in self.consumers.values():
            c.close()
