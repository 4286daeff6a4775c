"""Kafka's own message classes read the frames groupcheck's broker reads and writes, and read
them as kio does (`targets.processes.second_reader`), without a real client.

One in-process broker keeps every frame (``keep_frames``) of a scripted conversation over
`broker_wire.RawClient`: each API the broker serves, at its newest and an old version, a group
of one that joins, syncs, commits, produces, fetches and leaves. One JVM reads them all.
The real clients' frames are read the same way in ``test_broker_clients.py``.
"""

from __future__ import annotations

import datetime
import io
from typing import Any

import pytest

pytest.importorskip("kio")

from kio.records.schema import NewRecordBatch, Record  # noqa: E402
from kio.records.writers import write_new_batch  # noqa: E402
from kio.static.primitive import i8, i16, i32, i64  # noqa: E402

from groupcheck.broker import Broker, BrokerConfig  # noqa: E402
from groupcheck.broker.protocol import SUPPORTED, unsupported_api_versions  # noqa: E402
from groupcheck.targets.processes.java_frames import Frame, JavaFrameReader  # noqa: E402
from groupcheck.targets.processes.second_reader import (  # noqa: E402
    differences,
    frames_of,
    kio_reading,
    second_reading,
)

from helpers.broker_wire import RawClient  # noqa: E402

TOPIC, GROUP, OLD_GROUP = "orders", "g", "g-old"


def _batch(values: list[bytes]) -> bytes:
    now = datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC)
    records = tuple(Record(attributes=i8(0), timestamp=now, offset=i64(i), key=None, value=v,
                           headers=()) for i, v in enumerate(values))
    out = io.BytesIO()
    write_new_batch(out, NewRecordBatch(producer_id=i64(-1), producer_epoch=i16(-1),
                                        base_sequence=i32(-1), records=records,
                                        attributes=i16(0)))
    return out.getvalue()


def _cluster_calls(c: RawClient) -> None:
    c.call(18, 3, {"client_software_name": "second-reader", "client_software_version": "1"})
    c.call(18, 0, {})
    c.call(19, 7, {"topics": [{"name": TOPIC, "num_partitions": 2, "replication_factor": 1,
                               "assignments": [], "configs": []}], "timeout": 5000})
    c.call(3, 12, {"topics": [{"topic_id": None, "name": TOPIC}],
                   "allow_auto_topic_creation": False,
                   "include_topic_authorized_operations": False})
    c.call(3, 1, {"topics": None})
    c.call(10, 4, {"key_type": 0, "coordinator_keys": [GROUP]})
    c.call(10, 0, {"key": GROUP})
    c.call(22, 4, {"transactional_id": None, "transaction_timeout": 60_000})
    c.call(0, 9, {"transactional_id": None, "acks": -1, "timeout": 5000, "topic_data": [
        {"name": TOPIC, "partition_data": [{"index": 0, "records": _batch([b"a", b"bc"])}]}]})
    c.call(0, 3, {"transactional_id": None, "acks": 1, "timeout": 5000, "topic_data": [
        {"name": TOPIC, "partition_data": [{"index": 1, "records": _batch([b"d"])}]}]})
    c.call(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": TOPIC, "partitions": [{"partition_index": 0, "timestamp": -2}]}]})
    c.call(2, 1, {"replica_id": -1, "topics": [
        {"name": TOPIC, "partitions": [{"partition_index": 1, "timestamp": -1}]}]})
    for version in (12, 4):
        c.call(1, version, {"max_wait": 0, "min_bytes": 1, "topics": [{"topic": TOPIC,
               "partitions": [{"partition": p, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
                              for p in (0, 1)]}], "forgotten_topics_data": []})


def _group_calls(c: RawClient) -> None:
    joined = c.join(GROUP, [TOPIC])
    member, generation = joined.member_id, int(joined.generation_id)
    c.send_sync(GROUP, member, generation, {member: [(TOPIC, 0), (TOPIC, 1)]})
    c.receive()
    c.heartbeat(GROUP, member, generation)
    c.call(8, 8, {"group_id": GROUP, "generation_id_or_member_epoch": generation,
                  "member_id": member, "group_instance_id": None, "topics": [
                      {"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 2,
                                                      "committed_metadata": "m"}]}]})
    c.call(9, 8, {"groups": [{"group_id": GROUP, "topics": [
        {"name": TOPIC, "partition_indexes": [0, 1]}]}]})
    c.call(9, 1, {"group_id": GROUP, "topics": [{"name": TOPIC, "partition_indexes": [0]}]})
    c.call(15, 5, {"groups": [GROUP], "include_authorized_operations": True})
    c.call(15, 0, {"groups": [GROUP]})
    c.call(16, 4, {"states_filter": ["Stable"]})
    c.call(16, 0, {})
    c.leave(GROUP, member)
    old = c.call(11, 3, {"group_id": OLD_GROUP, "session_timeout": 10_000,
                         "rebalance_timeout": 30_000, "member_id": "", "protocol_type": "consumer",
                         "protocols": [{"name": "range", "metadata": b"\0\1"}]})
    c.call(14, 0, {"group_id": OLD_GROUP, "generation_id": old.generation_id,
                   "member_id": old.member_id, "assignments": []})
    c.call(12, 0, {"group_id": OLD_GROUP, "generation_id": old.generation_id,
                   "member_id": old.member_id})
    c.call(8, 2, {"group_id": OLD_GROUP, "generation_id_or_member_epoch": -1, "member_id": "",
                  "retention_time": -1, "topics": []})
    c.call(13, 0, {"group_id": OLD_GROUP, "member_id": old.member_id})


@pytest.fixture(scope="module")
def frames() -> list[Frame]:
    """The conversation's frames, and the broker's KIP-511 answer to an unknown ApiVersions
    version (read as the v0 answer it is)."""
    with Broker(BrokerConfig(topics={TOPIC: 2}, keep_frames=True)) as broker:
        with RawClient(broker.bootstrap, "second-reader") as client:
            _cluster_calls(client)
            _group_calls(client)
        found = frames_of(broker.exchanges())
    fallback = unsupported_api_versions(7)[4:]
    return [*found, Frame("response", 18, 0, fallback, "KIP-511 ApiVersions answer")]


def test_the_conversation_covers_every_api_the_broker_serves(frames: list[Frame]) -> None:
    assert {f.api_key for f in frames} == set(SUPPORTED)
    assert {f.direction for f in frames} == {"request", "response"}


def test_kafkas_classes_read_every_frame_the_broker_read_and_wrote_as_kio_does(
        frames: list[Frame], java_frame_reader: JavaFrameReader) -> None:
    disagreements = second_reading(frames, java_frame_reader)
    assert disagreements == [], "\n".join(d.line() for d in disagreements)


def test_kafkas_reading_carries_what_the_client_sent(frames: list[Frame],
                                                     java_frame_reader: JavaFrameReader) -> None:
    join = next(f for f in frames if f.direction == "request" and f.api_key == 11
                and f.api_version == 9)
    [reading] = java_frame_reader.read([join])
    assert reading["header"]["client_id"] == "second-reader"
    assert reading["header"]["request_api_version"] == 9
    body = reading["body"]
    assert (body["group_id"], body["session_timeout_ms"]) == (GROUP, 10_000)
    assert [p["name"] for p in body["protocols"]] == ["range"]
    produce = next(f for f in frames if f.direction == "request" and f.api_key == 0)
    [produced] = java_frame_reader.read([produce])
    sent = produced["body"]["topic_data"][0]["partition_data"][0]["records"]
    assert sent == _batch([b"a", b"bc"]).hex()


def test_a_field_read_differently_is_reported_with_its_path_and_both_values(
        frames: list[Frame], java_frame_reader: JavaFrameReader) -> None:
    sync = next(f for f in frames if f.direction == "request" and f.api_key == 14
                and f.api_version == 5)
    [kafka] = java_frame_reader.read([sync])
    ours: dict[str, Any] = kio_reading(sync)
    assert differences(kafka, ours) == []
    ours["body"]["assignments"][0]["assignment"] = "00"
    ours["body"]["protocol_name"] = None
    del ours["header"]["client_id"]
    assert differences(kafka, ours) == [
        ("header.client_id", "second-reader", "<absent>"),
        ("body.protocol_name", "range", None),
        ("body.assignments[0].assignment", kafka["body"]["assignments"][0]["assignment"], "00"),
    ]


def test_a_short_frame_or_bytes_after_the_body_are_refused_by_kafkas_classes(
        frames: list[Frame], java_frame_reader: JavaFrameReader) -> None:
    heartbeat = next(f for f in frames if f.api_key == 12 and f.direction == "request")
    longer = Frame("request", 12, heartbeat.api_version, heartbeat.payload + b"\0")
    shorter = Frame("request", 12, heartbeat.api_version, heartbeat.payload[:-3])
    too_long, too_short = java_frame_reader.read([longer, shorter])
    assert "1 bytes left after the Heartbeat" in too_long["error"]
    assert "error" in too_short
    assert second_reading([longer, shorter], java_frame_reader) == []  # kio refuses them too


def test_a_frame_kafkas_classes_refuse_but_kio_reads_is_a_disagreement(
        frames: list[Frame], java_frame_reader: JavaFrameReader) -> None:
    """Metadata's topic list became nullable in v1 (null: every topic); a v1 request with a
    null list, read as v0, is refused by Kafka's classes and read by kio."""
    every_topic = next(f for f in frames if f.direction == "request" and f.api_key == 3
                       and f.api_version == 1)
    as_v0 = Frame("request", 3, 0, every_topic.payload, "Metadata v1 read as v0")
    [disagreement] = second_reading([as_v0], java_frame_reader)
    assert (disagreement.frame, disagreement.path) == ("Metadata v1 read as v0", "(frame)")
    assert "non-nullable field topics" in disagreement.kafka
    assert disagreement.kio == "read"
