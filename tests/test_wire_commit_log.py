"""groupcheck's broker backend keeps every OffsetCommit its coordinator answered (member,
generation, offsets, each partition's error) and each partition's log start and high
watermark."""

from __future__ import annotations

import time

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
pytest.importorskip("kio")

from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend  # noqa: E402

TOPIC = "t0"


def _consumer(bootstrap: str, name: str) -> object:
    return confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "g", "client.id": name,
        "enable.auto.commit": False, "auto.offset.reset": "earliest",
        "session.timeout.ms": 2000, "heartbeat.interval.ms": 300})


def _produce(bootstrap: str, count: int) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(TOPIC, value=str(i).encode(), partition=0)
    assert producer.flush(10) == 0


def _read(consumer: object, count: int) -> list[int]:
    offsets: list[int] = []
    deadline = time.monotonic() + 30
    while len(offsets) < count and time.monotonic() < deadline:
        message = consumer.poll(0.2)  # type: ignore[attr-defined]
        if message is not None and message.error() is None:
            offsets.append(message.offset())
    return offsets


@pytest.fixture()
def backend() -> object:
    made = GroupcheckBackend(frozenset({"librdkafka"}), 2000)
    yield made
    made.close()


def test_an_accepted_commit_is_logged_with_its_member_generation_and_offsets(
        backend: GroupcheckBackend) -> None:
    backend.create_topic(TOPIC, 1)
    _produce(backend.bootstrap, 3)
    consumer = _consumer(backend.bootstrap, "c1")
    consumer.subscribe([TOPIC])
    try:
        assert _read(consumer, 3) == [0, 1, 2]
        before = time.monotonic_ns()
        consumer.commit(asynchronous=False)
        after = time.monotonic_ns()
        generation = max(r.generation for r in backend.rounds())
    finally:
        consumer.close()
    [commit] = backend.commits()
    assert (commit.group, commit.client_id, commit.generation) == ("g", "c1", generation)
    assert commit.member_id and commit.offsets == ((TOPIC, 0, 3),)
    assert commit.errors == (0,) and commit.error_names() == (None,)
    assert before <= commit.ts <= after
    assert backend.log_ends() == {(TOPIC, 0): (0, 3)}


def test_a_refused_commit_is_logged_with_its_error_and_read_once(
        backend: GroupcheckBackend) -> None:
    backend.create_topic(TOPIC, 1)
    _produce(backend.bootstrap, 2)
    consumer = _consumer(backend.bootstrap, "c1")
    consumer.subscribe([TOPIC])
    try:
        assert _read(consumer, 2) == [0, 1]
        backend.inject_error("commit", "REBALANCE_IN_PROGRESS", "c1")
        with pytest.raises(confluent_kafka.KafkaException):
            consumer.commit(asynchronous=False)
        first = backend.commits()
        consumer.commit(asynchronous=False)
        second = backend.commits()
    finally:
        consumer.close()
    assert [c.error_names() for c in first] == [("REBALANCE_IN_PROGRESS",)]
    assert [c.error_names() for c in second] == [("REBALANCE_IN_PROGRESS",), (None,)]
    assert second[1].offsets == ((TOPIC, 0, 2),) and second[0].seq < second[1].seq
