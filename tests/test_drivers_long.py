"""The java and kafkajs drivers' long wire runs (tox -e wire): every assignor each client
has, a mixed group of three clients, and the replays of the findings that take a minute
(the group must be seen idle before it counts as never settling)."""

from __future__ import annotations

import pytest

pytest.importorskip("confluent_kafka")
#: minutes of real clients: run by ``tox -e wire`` (``pytest -m wire``), not by default
pytestmark = [pytest.mark.wire, pytest.mark.slow]

from helpers.wire_cases import slow_revoke, smoke, with_profiles  # noqa: E402
from test_drivers import need, replay, run  # noqa: E402


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_wire_java_smoke_every_assignor(assignor: str) -> None:
    need("java")
    assert run(f"wire:java:{assignor}", with_profiles(smoke(assignor), "java")) == []


def test_finding_java_member_stalled_past_max_poll_interval_overlaps_until_its_next_poll(
        ) -> None:
    """findings/wire-java-range-adversarial-stall-I1.json: Java's heartbeat thread takes the
    stalled member out of the group, the other member gets its partitions at once, and the
    stalled application is told (onPartitionsLost) only when it polls again."""
    need("java")
    data, violations, story = replay("wire-java-range-adversarial-stall-I1.json")
    assert violations and all(v.startswith("I1:") and "while c2 still owned it" in v
                              for v in violations), story


def test_wire_java_revoke_callback_slower_than_the_rebalance() -> None:
    need("java")
    violations = run("wire:java:range:adversarial", with_profiles(slow_revoke("range"), "java"))
    assert all(v.startswith("I1") for v in violations), violations


def test_wire_mixed_java_librdkafka_kafka_python_smoke() -> None:
    need("java", "librdkafka", "kafka-python")
    events = with_profiles(smoke("range"), "java", "librdkafka", "kip")
    assert run("wire:mixed:java+librdkafka+kafka-python:range", events) == []


def test_finding_java_and_kafkajs_cannot_share_a_group() -> None:
    """findings/wire-mixed-java-kafkajs-roundrobin-I11-no-shared-protocol.json: KafkaJS's round
    robin is named RoundRobinAssigner, Java's roundrobin; the KafkaJS member is refused
    (INCONSISTENT_GROUP_PROTOCOL) and the group never holds both."""
    need("java", "kafkajs")
    data, violations, story = replay(
        "wire-mixed-java-kafkajs-roundrobin-I11-no-shared-protocol.json")
    assert violations == ["I11: the group is idle but not settled"], story
    assert any("incompatible" in line for line in story), story
