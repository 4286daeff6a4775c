"""The java and kafkajs member drivers on the wire (`wire:java:<assignor>`,
`wire:kafkajs:roundrobin`, and Java in a mixed group), on groupcheck's broker (the default
backend; tests/test_wire_backends.py compares them with the mock): the state machine's events
applied one by one, every invariant judged after each, by each
member's own client profile (java: `java`; KafkaJS documents no listener: `kip`).

Each test skips only when its runtime is missing (no java/javac or Kafka client jars, no
node ≥ 18 or npm; kio, which the broker is written in), with the reason. The long runs
(every Java assignor, the KafkaJS findings' timings) are in tests/test_drivers_long.py
(tox -e wire)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the default wire backend) needs kio")

from groupcheck.model.events import DomainEvent  # noqa: E402
from groupcheck.model.replay import replay_events, replay_file  # noqa: E402
from groupcheck.targets.wire.clients import hello  # noqa: E402

from helpers.environment import CLASSPATH, group_target_factory, missing  # noqa: E402
from helpers.wire_cases import smoke, with_profiles  # noqa: E402

FINDINGS = Path(__file__).resolve().parent.parent / "findings"
pytestmark = pytest.mark.wire


def need(*clients: str) -> None:
    for client in clients:
        reason = missing(client)
        if reason:
            pytest.skip(reason)


def run(target: str, events: list[DomainEvent]) -> list[str]:
    outcome = replay_events(group_target_factory(target)(), events)
    assert outcome.story, target
    return outcome.violations


def replay(name: str) -> tuple[dict[str, Any], list[str], list[str]]:
    """A finding's replay file run again: its content, the violations, the story."""
    data, outcome = replay_file(FINDINGS / name, lambda t: group_target_factory(t)())
    return data, outcome.violations, outcome.story


def test_java_driver_says_it_is_kafkas_client_with_its_four_assignors() -> None:
    need("java")
    info = hello("java", CLASSPATH)
    assert info.client == "java" and info.version.startswith("4.0.0")
    assert info.assignors == ("range", "roundrobin", "sticky", "cooperative-sticky")
    assert (info.profile, info.crash) == ("java", "kill")


def test_kafkajs_driver_says_it_has_round_robin_only_and_no_listener_semantics() -> None:
    need("kafkajs")
    info = hello("kafkajs")
    assert (info.client, info.version, info.assignors) == ("kafkajs", "2.2.4", ("roundrobin",))
    assert (info.profile, info.crash) == ("kip", "kill")


@pytest.mark.parametrize("assignor", [pytest.param("range", marks=pytest.mark.heavy),
                                      "cooperative-sticky"])
def test_wire_java_smoke_holds_every_invariant_under_the_java_profile(assignor: str) -> None:
    """Joins, a pause across a rebalance, a subscription change, records, a leave."""
    need("java")
    assert run(f"wire:java:{assignor}", with_profiles(smoke(assignor), "java")) == []


def test_wire_mixed_java_and_librdkafka_smoke_holds_every_invariant() -> None:
    """c1 is Kafka's Java consumer, c2 librdkafka: each leader decodes the other's
    subscription and assignment bytes, and each member is judged by its own profile."""
    need("java", "librdkafka")
    events = with_profiles(smoke("range"), "java", "librdkafka")
    assert run("wire:mixed:java+librdkafka:range", events) == []


def test_finding_kafkajs_never_tells_the_application_a_partition_went_away() -> None:
    """findings/wire-kafkajs-roundrobin-I1-no-revoke-callback.json: the second member gets
    partitions the first was never told it lost (KafkaJS has no revoke or lost callback)."""
    need("kafkajs")
    data, violations, story = replay("wire-kafkajs-roundrobin-I1-no-revoke-callback.json")
    assert data["target"] == "wire:kafkajs:roundrobin"
    assert violations and all(
        v.startswith("I1:") and "went to c2" in v and "while c1 still owned it" in v
        for v in violations), story


def test_finding_files_name_their_targets_and_events() -> None:
    for name in ("wire-kafkajs-roundrobin-I1-no-revoke-callback.json",
                 "wire-mixed-java-kafkajs-roundrobin-I11-no-shared-protocol.json"):
        data = json.loads((FINDINGS / name).read_text(encoding="utf-8"))
        assert data["format"] == "groupcheck-replay/1" and data["events"] and data["note"]
        assert data["invariant"] in name


@pytest.mark.slow  # three minutes of three clients' state machine: tox -e wire
def test_state_machine_runs_a_mixed_group_of_java_librdkafka_and_kafka_python() -> None:
    """Kafka's Java consumer, librdkafka and kafka-python in one range group under the state
    machine on groupcheck's broker, with errors, late answers and SyncGroup orders aimed at
    single members: each leader decodes the others' bytes, and nothing breaks outside the
    recorded findings of these clients."""
    import dataclasses

    from groupcheck.engines.battery.runner import machine_config
    from groupcheck.model.fuzz import fuzz

    from helpers.environment import resolve
    from helpers.wire_findings import unknown

    need("java", "librdkafka", "kafka-python")
    target = resolve("wire:mixed:java+librdkafka+kafka-python:range")
    assert target.group is not None
    config = dataclasses.replace(machine_config(target), initial_members=3)
    assert config.faults and config.delays and config.sync_orders
    result = fuzz(target.group, config, profile="wire", max_examples=2, seed_value=3,
                  shrink_seconds=60)
    clients = ("java", "librdkafka", "kafka-python")
    assert not unknown(clients, result.violations), (result.violations, result.events)
    assert result.steps >= 12
