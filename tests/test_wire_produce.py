"""``produce`` on a partition the broker does not have answers at once and creates nothing.

The shrinker (`model.event_shrink.minimize`) replays sub-lists of a failing event list, so
a ``produce`` can come without the ``partitions`` event that made its topic. Before the
fix, ``check --target wire:java@2.8.0:cooperative-sticky`` (whose fuzz finds something to
shrink) ended in ``driver java@2.8.0 did not answer produce in 60s``: the producer's
Metadata request auto-created the topic with one partition and ``send`` waited, in
``KafkaProducer.waitOnMetadata``, for a partition 1 that never came (``max.block.ms``
60 s, the harness's whole command timeout)."""

from __future__ import annotations

import collections
import time
from types import SimpleNamespace
from typing import Any

import pytest

from groupcheck.targets.wire.driver_process import COMMAND_TIMEOUT
from groupcheck.targets.wire.wire_group import WireGroup

from helpers.environment import resolve


def _group(topics: dict[str, int]) -> tuple[WireGroup, list[dict[str, Any]]]:
    """A WireGroup whose backend has ``topics`` and whose driver pool only records calls."""
    calls: list[dict[str, Any]] = []

    def produce(client: str, classpath: str, bootstrap: str, topic: str,
                partition: int) -> None:
        calls.append({"cmd": "produce", "client": client, "topic": topic,
                      "partition": partition})

    group = WireGroup.__new__(WireGroup)
    group.backend = SimpleNamespace(topics=topics, bootstrap="127.0.0.1:1",  # type: ignore[assignment]
                                    failure=lambda: None)
    group.infos = {"java": SimpleNamespace(name="java")}  # type: ignore[dict-item]
    group.order, group.classpaths, group.produced = ["java"], {}, collections.Counter()
    group.pool = SimpleNamespace(produce=produce, failure=lambda: None)  # type: ignore[assignment]
    return group, calls


def test_produce_skips_a_partition_the_backend_does_not_have() -> None:
    group, calls = _group({"t0": 1})
    group.produce("t1", 0)  # no such topic
    group.produce("t0", 1)  # no such partition
    assert calls == []
    group.produce("t0", 0)
    assert [(c["cmd"], c["topic"], c["partition"]) for c in calls] == [("produce", "t0", 0)]
    assert group.produced == {("t0", 0): 1}  # what settles on a backend without watermarks


def test_the_java_driver_bounds_the_producers_metadata_wait() -> None:
    from groupcheck.targets.processes.java_runtime import driver_sources

    source = driver_sources("java_member_src", package="groupcheck.targets.wire.drivers")
    driver = source["JavaDriver.java"].decode()
    assert '"max.block.ms"' in driver  # send()'s wait, then get()'s: both within the timeout
    assert "PRODUCE_TIMEOUT_S = 15;" in driver and 2 * 15 < COMMAND_TIMEOUT


@pytest.mark.parametrize("assignor", ("cooperative-sticky",))
def test_a_shrunk_produce_without_its_topic_answers_on_kafka_2_8(assignor: str) -> None:
    from helpers.kafka_releases import repo_releases

    pytest.importorskip("kio", reason="groupcheck's broker needs kio")
    repo_releases("2.8.0")
    resolved = resolve(f"wire:java@2.8.0:{assignor}")
    assert resolved.group is not None
    group = resolved.group()
    try:
        started = time.monotonic()
        group.produce("t0", 1)  # the shrunk story: its "partitions t0 3" event dropped
        assert time.monotonic() - started < 5
        assert "t0" not in group.backend.topics  # type: ignore[attr-defined]
    finally:
        group.close()
