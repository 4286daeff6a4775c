"""Every real client completes a rebalance on groupcheck's broker, and every request it sent
and answer it got round-trips through kio byte for byte and reads the same with Kafka's own
message classes (`second_reader`).

One broker per client (module scope): a group of two joins, syncs, heartbeats, consumes the
records produced through the broker and leaves. Java and KafkaJS are skipped only where
their runtime is missing. A kafka-python run that shows one of its recorded findings is
expected (xfail) only by the tests of the run's outcome; the broker's checks and the two
readings of every frame hold whatever the client did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("kio")

from kio.serial import entity_reader  # noqa: E402

from groupcheck.broker import Broker, BrokerConfig, Exchange  # noqa: E402
from groupcheck.broker.protocol import encode_request  # noqa: E402
from groupcheck.targets.processes.java_frames import JavaFrameReader  # noqa: E402
from groupcheck.targets.processes.second_reader import frames_of, second_reading  # noqa: E402
from groupcheck.targets.wire.silence import COORDINATOR_APIS, rejoined_after_sync  # noqa: E402

from helpers.broker_clients import (  # noqa: E402
    SESSION_TIMEOUT,
    ClientRun,
    java_classes,
    kafkajs_home,
    ready,
    run_aiokafka,
    run_java,
    run_kafka_python,
    run_kafkajs,
    run_librdkafka,
)
from helpers.wire_findings import (  # noqa: E402
    heartbeated,
    kafka_python_dropped_join,
    kafka_python_hang,
    silent_story,
)

TOPIC, PARTITIONS, RECORDS = "orders", 4, 12
CLIENTS = ("librdkafka", "kafka-python", "aiokafka", "java", "kafkajs")


def _heartbeated(broker: Broker, client: str) -> Callable[[], bool]:
    """Has the broker answered a Heartbeat of each of the client's two members?"""
    return lambda: {f"{client}-a", f"{client}-b"} <= heartbeated(broker.exchanges())


def _run(client: str, broker: Broker, group: str) -> ClientRun:
    bootstrap, heartbeated = broker.bootstrap, _heartbeated(broker, client)
    if client == "librdkafka":
        pytest.importorskip("confluent_kafka")
        return run_librdkafka(bootstrap, TOPIC, group, RECORDS, heartbeated)
    if client == "kafka-python":
        pytest.importorskip("kafka")
        return run_kafka_python(bootstrap, TOPIC, group, RECORDS, heartbeated)
    if client == "aiokafka":
        pytest.importorskip("aiokafka")
        return run_aiokafka(bootstrap, TOPIC, group, RECORDS, heartbeated)
    if client == "java":
        return run_java(java_classes(), bootstrap, TOPIC, group, RECORDS)
    return run_kafkajs(kafkajs_home(), bootstrap, TOPIC, group, RECORDS)


#: (client, its run, the broker, the recorded finding the run showed or None)
Story = tuple[str, ClientRun, Broker, str | None]


def _finding_shown(client: str, run: ClientRun, broker: Broker) -> str | None:
    """kafka-python's recorded findings, whether or not the run settled: its hang, or its
    dropped joins when they did harm (the run did not end healthy)."""
    if client != "kafka-python":
        return None
    hang = kafka_python_hang(silent_story(broker.exchanges(), int(SESSION_TIMEOUT * 1000)),
                             {client})
    if hang is not None or (ready(run, RECORDS) and _heartbeated(broker, client)()):
        return hang
    return kafka_python_dropped_join(rejoined_after_sync(broker.exchanges()), {client})


@pytest.fixture(scope="module", params=CLIENTS)
def story(request: pytest.FixtureRequest) -> Iterator[Story]:
    client = request.param
    config = BrokerConfig(topics={TOPIC: PARTITIONS}, keep_frames=True)
    with Broker(config) as broker:
        group = f"group-{client}"
        run = _run(client, broker, group)
        finding = _finding_shown(client, run, broker)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            description = broker.describe_group(group)
            if description is not None and description.state == "Empty":
                break
            time.sleep(0.05)
        yield client, run, broker, finding


def test_group_of_two_splits_every_partition_and_reads_every_record(story: Story) -> None:
    client, run, _, finding = story
    if finding is not None:
        pytest.xfail(finding)
    assert sorted(run.assigned) == [f"{client}-a", f"{client}-b"]
    owned = [p for parts in run.assigned.values() for p in parts]
    assert sorted(owned) == sorted(f"{TOPIC}-{p}" for p in range(PARTITIONS))
    assert all(run.assigned.values()), run.assigned
    assert run.records == RECORDS


def test_each_member_joins_syncs_heartbeats_and_leaves_without_error(story: Story) -> None:
    client, _, broker, finding = story
    if finding is not None:
        pytest.xfail(finding)
    answered = {(e.who.client_id, e.api) for e in broker.exchanges() if e.error_code in (0, None)
                and e.answered_ms is not None}
    for member in (f"{client}-a", f"{client}-b"):
        for api in COORDINATOR_APIS:
            assert (member, api) in answered, f"{member} has no successful {api}: " + " | ".join(
                e.line() for e in broker.exchanges()
                if e.api in (*COORDINATOR_APIS, "OffsetCommit"))
    description = broker.describe_group(f"group-{client}")
    assert description is not None and description.state == "Empty"
    assert description.generation >= 1


def test_broker_side_checks_hold_on_every_subscription_and_assignment(story: Story) -> None:
    _, _, broker, _ = story
    verdicts = broker.verdicts()
    assert {"I10", "I1", "I2", "I6"} <= {v.invariant for v in verdicts}
    assert [v for v in verdicts if not v.holds] == []
    assert broker.notes() == []


def _decoded_again(exchange: Exchange) -> tuple[Any, Any]:
    response_type = type(exchange.response)
    raw = exchange.raw_response
    assert raw is not None
    header, size = entity_reader(response_type.__header_schema__)(raw, 0)
    body, used = entity_reader(response_type)(raw, size)
    assert size + used == len(raw), "trailing bytes after the response body"
    return header, body


def test_every_request_and_answer_round_trips_through_kio(story: Story) -> None:
    """Per API version the client used: the request as decoded re-encodes to the client's
    exact bytes, and the answer's bytes decode to the answer the broker built. A run that
    showed a recorded finding may never have consumed: only the APIs up to the group's
    first rebalance are then required."""
    _, _, broker, finding = story
    versions: dict[tuple[str, int], int] = {}
    for exchange in broker.exchanges():
        if exchange.raw_response is None:
            continue
        again = encode_request(exchange.request, exchange.correlation_id,
                               exchange.client_id)[4:]
        assert again == exchange.raw_request, f"{exchange.api} v{exchange.api_version}"
        header, body = _decoded_again(exchange)
        assert header.correlation_id == exchange.correlation_id
        assert body == exchange.response, f"{exchange.api} v{exchange.api_version}"
        versions[(exchange.api, exchange.api_version)] = versions.get(
            (exchange.api, exchange.api_version), 0) + 1
    wanted = {"ApiVersions", "Metadata", "FindCoordinator", "JoinGroup", "SyncGroup"}
    if finding is None:
        wanted |= {*COORDINATOR_APIS, "Produce", "Fetch", "OffsetCommit"}
    assert {api for api, _ in versions} >= wanted


def test_kafkas_message_classes_read_every_frame_of_the_run_as_the_broker_does(
        story: Story, java_frame_reader: JavaFrameReader) -> None:
    """Each request the client sent and each answer it got, read by Kafka's generated
    classes at the version asked, field for field what kio read."""
    _, _, broker, _ = story
    frames = frames_of(broker.exchanges())
    assert {f.direction for f in frames} == {"request", "response"}
    disagreements = second_reading(frames, java_frame_reader)
    assert disagreements == [], "\n".join(d.line() for d in disagreements[:40])
