"""The broker's framing on kio: every served request version decodes to what kio encoded,
every answer's header and body read back with kio, and what a real broker does with a
version or API it does not serve (KIP-511's ApiVersions fallback; anything else closes the
connection), and with bytes it cannot read.
"""

from __future__ import annotations

import datetime
import io
import socket
from typing import Any

import pytest

pytest.importorskip("kio")

from hypothesis import HealthCheck, given, reject, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from kio.index import load_request_schema, load_response_schema  # noqa: E402
from kio.schema.api_versions.v0 import ApiVersionsResponse  # noqa: E402
from kio.serial import entity_reader, entity_writer  # noqa: E402
from kio.static.primitive import Records  # noqa: E402

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.broker.protocol import (  # noqa: E402
    SUPPORTED,
    FrameError,
    build,
    decode_request,
    encode_request,
    encode_response,
)

st.register_type_strategy(Records, st.binary(max_size=64).map(Records))
SERVED = [(key, v) for key, (_, low, high) in sorted(SUPPORTED.items())
          for v in range(low, high + 1)]
IDS = [f"{SUPPORTED[k][0]}-v{v}" for k, v in SERVED]
FEW = settings(max_examples=4, deadline=None, database=None,
               suppress_health_check=list(HealthCheck))


def _kio_reads_back(body: Any) -> bool:
    """kio reads back the body it wrote. Its strategies reach values its own reader
    refuses: an int64 ``retention_time`` at the edge of ``timedelta`` ("timedelta
    milliseconds overflow"), for one."""
    schema = type(body)
    buffer = io.BytesIO()
    entity_writer(schema)(buffer, body)
    try:
        entity_reader(schema)(buffer.getvalue(), 0)
    except Exception:  # noqa: BLE001 - whatever kio's reader raises, it refused its own bytes
        return False
    return True


@pytest.mark.parametrize(("api_key", "version"), SERVED, ids=IDS)
def test_every_served_request_version_decodes_to_what_kio_encoded(api_key: int,
                                                                   version: int) -> None:
    """For any request kio can write and read back at this version, the broker reads back
    the same request, correlation id and client id (and refuses, with a FrameError, only
    what kio's own reader refuses)."""
    @FEW
    @given(st.from_type(load_request_schema(api_key, version)), st.integers(0, 2**31 - 1),
           st.one_of(st.none(), st.text(max_size=12)))
    def check(body: Any, correlation_id: int, client_id: str | None) -> None:
        try:
            frame = decode_request(encode_request(body, correlation_id, client_id)[4:])
        except FrameError:
            if not _kio_reads_back(body):
                reject()  # kio cannot read it either: nothing for the broker to match
            raise
        assert (frame.api_key, frame.api_version) == (api_key, version)
        assert (frame.correlation_id, frame.client_id, frame.body) == (
            correlation_id, client_id, body)

    check()


def test_a_request_kio_writes_but_cannot_read_is_a_frame_error_naming_its_offset() -> None:
    """kio writes an OffsetCommit v2 whose int64 retention time its own reader refuses (it
    overflows ``timedelta``): the broker answers with a FrameError that names the body and
    its offset, not an exception of kio's."""
    schema = load_request_schema(8, 2)
    body = schema(group_id="", generation_id_or_member_epoch=-1, member_id="",
                  retention_time=datetime.timedelta(days=106751991, seconds=14454,
                                                    microseconds=776000), topics=())
    assert not _kio_reads_back(body)
    with pytest.raises(FrameError, match=r"bad OffsetCommit v2 body: .*overflow") as caught:
        decode_request(encode_request(body, 7, None)[4:])
    assert caught.value.offset > 0


@pytest.mark.parametrize(("api_key", "version"), SERVED, ids=IDS)
def test_every_served_answer_version_reads_back_with_kio(api_key: int, version: int) -> None:
    """The answer's header version is the one kio names for the response (v0 for every
    ApiVersions answer, KIP-511), and its body reads back whole."""
    schema = load_response_schema(api_key, version)

    @FEW
    @given(st.from_type(schema), st.integers(0, 2**31 - 1))
    def check(body: Any, correlation_id: int) -> None:
        frame = encode_response(body, correlation_id)
        assert int.from_bytes(frame[:4], "big") == len(frame) - 4
        header, size = entity_reader(schema.__header_schema__)(frame, 4)
        try:
            again, used = entity_reader(schema)(frame, 4 + size)
        except ValueError:
            if not _kio_reads_back(body):
                reject()  # kio refuses its own bytes (see _kio_reads_back)
            raise
        assert header.correlation_id == correlation_id
        assert again == body and 4 + size + used == len(frame)

    check()


def test_build_fills_what_a_version_has_and_drops_what_it_lacks() -> None:
    data = {"throttle_time": 7, "error_code": 27, "generation_id": 3, "protocol_type": "consumer",
            "protocol_name": "range", "leader": "m1", "skip_assignment": False,
            "member_id": "m2", "members": []}
    old = build(load_response_schema(11, 2), data)
    new = build(load_response_schema(11, 9), data)
    assert not hasattr(old, "protocol_type") and new.protocol_type == "consumer"
    assert int(old.error_code) == int(new.error_code) == 27
    assert old.throttle_time.total_seconds() == 0.007


def _raw(broker: Broker, frame: bytes) -> bytes:
    """Send one frame; the answer's payload, or b"" when the broker closes the connection."""
    host, port = broker.bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(frame)
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data[4:]
            data += chunk
            if len(data) >= 4 and len(data) - 4 >= int.from_bytes(data[:4], "big"):
                return data[4:]


def _api_versions_frame(version_bytes: bytes, key_bytes: bytes = b"\x00\x12") -> bytes:
    body = build(load_request_schema(18, 3), {"client_software_name": "t",
                                              "client_software_version": "1"})
    frame = bytearray(encode_request(body, 41, "probe"))
    frame[4:6], frame[6:8] = key_bytes, version_bytes
    return bytes(frame)


def test_an_unknown_api_versions_version_gets_unsupported_version_in_the_v0_layout(
        broker: Broker) -> None:
    payload = _raw(broker, _api_versions_frame((99).to_bytes(2, "big")))
    assert int.from_bytes(payload[:4], "big") == 41  # response header v0: correlation id only
    answer, used = entity_reader(ApiVersionsResponse)(payload, 4)
    assert 4 + used == len(payload)
    assert int(answer.error_code) == 35
    ranges = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in answer.api_keys}
    assert ranges == {key: (low, high) for key, (_, low, high) in SUPPORTED.items()}


def test_an_api_the_broker_does_not_serve_closes_the_connection(broker: Broker) -> None:
    assert _raw(broker, _api_versions_frame(b"\x00\x00", key_bytes=(61).to_bytes(2, "big"))) == b""
    assert any("api-61 v0 not served" in note for note in broker.notes())


def test_a_request_that_cannot_be_read_closes_the_connection_with_a_note(
        broker: Broker) -> None:
    body = build(load_request_schema(12, 4), {"group_id": "g", "generation_id": 1,
                                              "member_id": "m", "group_instance_id": None})
    frame = encode_request(body, 5, "cut")
    cut = (len(frame) - 4 - 3).to_bytes(4, "big") + frame[4:-3]
    assert _raw(broker, cut) == b""
    note = next(n for n in broker.notes() if "Heartbeat v4" in n)
    assert "offset" in note and "field HeartbeatRequest" in note


def test_a_frame_larger_than_the_broker_accepts_is_refused(broker: Broker) -> None:
    assert _raw(broker, (200 * 1024 * 1024).to_bytes(4, "big")) == b""
    assert any("frame size" in note for note in broker.notes())


def test_create_topics_asking_for_more_partitions_than_memory_holds_is_invalid_partitions(
        broker: Broker) -> None:
    """Four bytes of a CreateTopics request can ask for 2**31 - 1 partitions: the broker
    answers INVALID_PARTITIONS past its bound (each partition is a log in memory) instead of
    allocating them, and still creates a topic within it; growing a topic is bounded alike."""
    from groupcheck.broker.store import MAX_TOPIC_PARTITIONS

    from helpers.broker_wire import RawClient

    client = RawClient(broker.bootstrap, "admin")

    def create(name: str, count: int) -> tuple[int, int]:
        answer = client.call(19, 7, {"topics": [{
            "name": name, "num_partitions": count, "replication_factor": 1,
            "assignments": [], "configs": []}], "timeout": 5000, "validate_only": False})
        topic = answer.topics[0]
        return int(topic.error_code), int(topic.num_partitions)

    assert create("huge", 2**31 - 1) == (37, -1)
    assert create("huge", MAX_TOPIC_PARTITIONS + 1) == (37, -1)
    assert create("small", 3) == (0, 3)
    with pytest.raises(Exception, match="at most"):
        broker.grow_topic("small", MAX_TOPIC_PARTITIONS + 1)
