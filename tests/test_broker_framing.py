"""The broker on hostile bytes, as Kafka's broker takes them: unknown tagged fields skipped at
any depth (KIP-482), every length checked against the bytes left before anything is
allocated, Kafka's lenient reads (a boolean byte, a string that is not UTF-8), ApiVersions
answered INVALID_REQUEST where Kafka's isValid fails, and every other unreadable request
one log line and a closed connection — never an exception in the event loop.

The frames with tagged fields are written here byte by byte, not with the broker's walk,
so that a walk that misplaces a section cannot agree with itself.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import socket
import struct
from typing import Any

import pytest

pytest.importorskip("kio")

from kio.index import load_request_schema, load_response_schema  # noqa: E402
from kio.serial import entity_reader  # noqa: E402

from groupcheck.broker import Broker, data_apis  # noqa: E402
from groupcheck.broker.fuzz_frames import (  # noqa: E402
    MUTATIONS,
    SERVED,
    frame_of,
    payload_of,
    sample,
    sample_frame,
)
from groupcheck.broker.protocol import FrameError, decode_request, encode_request  # noqa: E402
from groupcheck.broker.request_scan import uvarint  # noqa: E402

pytestmark = pytest.mark.broker_config(min_session_timeout_ms=100)


def _compact(text: str | bytes | None) -> bytes:
    if text is None:
        return b"\x00"
    raw = text.encode() if isinstance(text, str) else text
    return uvarint(len(raw) + 1) + raw


def _tags(*fields: tuple[int, bytes]) -> bytes:
    return uvarint(len(fields)) + b"".join(uvarint(t) + uvarint(len(v)) + v for t, v in fields)


UNKNOWN = ((7, b"new"), (300, b""), (2**20, bytes(40)))  # a few, one with a 3-byte tag


def _header(api_key: int, version: int, correlation: int, tags: bytes = b"\x00") -> bytes:
    """Request header v2: the client id is a legacy string even here."""
    return struct.pack(">hhih", api_key, version, correlation, 2) + b"fz" + tags


def _join_v6(tags_top: bytes, tags_protocol: bytes, member_id: str = "") -> bytes:
    protocol = _compact("range") + _compact(b"\x00\x01") + tags_protocol
    return (_compact("g-tags") + struct.pack(">ii", 6000, 3000) + _compact(member_id) +
            _compact(None) + _compact("consumer") + uvarint(2) + protocol + tags_top)


def _heartbeat_v4(tags: bytes) -> bytes:
    return _compact("g-tags") + struct.pack(">i", 1) + _compact("m") + _compact(None) + tags


def _plain_body(api_key: int, version: int, payload: bytes) -> Any:
    schema = load_request_schema(api_key, version)
    header, size = entity_reader(schema.__header_schema__)(payload, 0)
    return entity_reader(schema)(payload, size)[0]


@pytest.mark.parametrize(("api_key", "version", "body"), [
    (12, 4, _heartbeat_v4(b"\x00")), (11, 6, _join_v6(b"\x00", b"\x00")),
    (18, 3, _compact("fz") + _compact("1") + b"\x00")],
    ids=["Heartbeat", "JoinGroup", "ApiVersions"])
def test_unknown_tagged_fields_in_the_header_are_skipped(api_key: int, version: int,
                                                         body: bytes) -> None:
    plain = _header(api_key, version, 9) + body
    tagged = _header(api_key, version, 9, _tags(*UNKNOWN)) + body
    frame = decode_request(tagged)
    assert (frame.correlation_id, frame.client_id) == (9, "fz")
    assert frame.body == _plain_body(api_key, version, plain)


def test_unknown_tagged_fields_in_a_body_are_skipped_at_every_depth() -> None:
    plain = _header(11, 6, 3) + _join_v6(b"\x00", b"\x00")
    deep = _header(11, 6, 3) + _join_v6(_tags((1, b"top")), _tags(*UNKNOWN))
    assert decode_request(deep).body == _plain_body(11, 6, plain)
    heartbeat = _header(12, 4, 4) + _heartbeat_v4(_tags(*UNKNOWN))
    assert decode_request(heartbeat).body.member_id == "m"


def test_a_known_tagged_field_is_still_read_beside_unknown_ones() -> None:
    """Fetch v12's ClusterId is tag 0; kio writes it, the broker reads it, and an unknown
    tag after it (and one sent as null) changes nothing."""
    written = payload_of(encode_request(dataclasses.replace(sample(1, 12), cluster_id="c1"),
                                        1, None))
    assert written.endswith(_tags((0, _compact("c1"))))
    extra = written[:-len(_tags((0, _compact("c1"))))] + _tags((0, _compact("c1")), (5, b"x"))
    assert decode_request(extra).body.cluster_id == "c1"
    null = written[:-len(_tags((0, _compact("c1"))))] + _tags((0, b"\x00"))
    assert decode_request(null).body.cluster_id is None


def test_a_length_past_the_bytes_left_is_refused_before_anything_is_allocated() -> None:
    """A 5-byte count of 2**34 items: kio alone allocates it first and the process aborts
    (this test would die, not fail); the walk refuses it, as it refuses a legacy count of
    2**31 - 1, a tagged field's size past the end and a string past Kafka's 32767 bytes."""
    cases = {
        "compact array": _header(15, 5, 1) + uvarint(2**34 + 1) + _compact("g"),
        "legacy array": struct.pack(">hhih", 15, 0, 1, -1) + struct.pack(">i", 2**31 - 1),
        "tagged size": _header(12, 4, 1, uvarint(1) + uvarint(9) + uvarint(2**28)),
        "long string": _header(12, 4, 1) + uvarint(40_000) + b"g" * 40_000,
    }
    for what, payload in cases.items():
        with pytest.raises(FrameError) as caught:
            decode_request(payload)
        assert "left" in str(caught.value) or "invalid length" in str(caught.value), what


def test_null_where_kafka_forbids_it_is_refused_and_lenient_reads_follow_kafka() -> None:
    with pytest.raises(FrameError, match="non-nullable"):
        decode_request(_header(12, 4, 1) + _compact(None) + _heartbeat_v4(b"\x00")[2:])
    metadata = bytearray(payload_of(encode_request(sample(3, 9), 1, "fz")))
    flag = len(metadata) - 4  # allow_auto_topic_creation, two more booleans, no tags
    metadata[flag] = 7  # Kafka reads any byte but 0 as true; kio only 0 and 1
    assert decode_request(bytes(metadata)).body.allow_auto_topic_creation is True
    bad_utf8 = _header(12, 4, 1) + _compact(b"g\xff") + _heartbeat_v4(b"\x00")[7:]
    assert decode_request(bad_utf8).body.group_id == "g\ufffd"
    legacy_null = struct.pack(">hhih", 12, 3, 1, -1) + struct.pack(">h", 1) + b"g" + \
        struct.pack(">ih", 1, 1) + b"m" + struct.pack(">h", -7)
    assert decode_request(legacy_null).body.group_instance_id is None


@pytest.mark.parametrize(("api_key", "version"), SERVED,
                         ids=[f"{k}-v{v}" for k, v in SERVED])
def test_every_cut_and_mutation_of_a_served_request_is_a_request_or_a_frame_error(
        api_key: int, version: int) -> None:
    """Every prefix of a sample request, and 60 seeded mutations of it: the broker reads a
    request or raises FrameError, nothing else (kio's KeyError, ValueError, MemoryError)."""
    payload = payload_of(sample_frame(api_key, version))
    rng = random.Random(api_key * 100 + version)
    inputs = [payload[:n] for n in range(len(payload))]
    inputs += [rng.choice(list(MUTATIONS.values()))(payload, rng) for _ in range(60)]
    for data in inputs:
        try:
            decode_request(data)
        except FrameError:
            pass


# -- on the wire ------------------------------------------------------------------------------


def _exchange(broker: Broker, *frames: bytes) -> list[bytes]:
    """Send ``frames`` at once and end the sending side; the answers' payloads, until the
    broker closes or 5 s pass."""
    host, port = broker.bootstrap.rsplit(":", 1)
    answers: list[bytes] = []
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"".join(frames))
        sock.shutdown(socket.SHUT_WR)  # the broker answers what it read, then sees the end
        data = b""
        try:
            while len(answers) < len(frames):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
                while len(data) >= 4 and len(data) - 4 >= int.from_bytes(data[:4], "big"):
                    size = int.from_bytes(data[:4], "big")
                    answers.append(data[4:4 + size])
                    data = data[4 + size:]
        except ConnectionResetError:
            pass
    return answers


def _answer(api_key: int, version: int, payload: bytes) -> Any:
    schema = load_response_schema(api_key, version)
    _, size = entity_reader(schema.__header_schema__)(payload, 0)
    return entity_reader(schema)(payload, size)[0]


def test_requests_with_unknown_tagged_fields_are_served_over_the_wire(broker: Broker) -> None:
    join = frame_of(_header(11, 6, 1, _tags(*UNKNOWN)) + _join_v6(_tags((3, b"x")),
                                                                  _tags(*UNKNOWN)))
    versions = frame_of(_header(18, 3, 2, _tags((1, b"y"))) + _compact("fz") + _compact("1") +
                        _tags(*UNKNOWN))
    joined, listed = _exchange(broker, join, versions)
    assert int(_answer(18, 3, listed).error_code) == 0
    named = _answer(11, 6, joined)
    assert int(named.error_code) == 79 and named.member_id  # MEMBER_ID_REQUIRED (KIP-394)
    rejoin = frame_of(_header(11, 6, 4, _tags(*UNKNOWN)) + _join_v6(
        _tags((3, b"x")), _tags(*UNKNOWN), named.member_id))
    member = _answer(11, 6, _exchange(broker, rejoin)[0])
    assert int(member.error_code) == 0 and member.member_id == named.member_id
    heartbeat = frame_of(_header(12, 4, 3, _tags(*UNKNOWN)) + _compact("g-tags") +
                         struct.pack(">i", member.generation_id) + _compact(member.member_id) +
                         _compact(None) + _tags((99, b"z")))
    assert int(_answer(12, 4, _exchange(broker, heartbeat)[0]).error_code) == 0


def test_an_api_versions_request_kafka_finds_invalid_is_answered_invalid_request(
        broker: Broker) -> None:
    """Kafka's isValid: a software name with a space fails; the answer has error 42 and no
    ranges, and the connection stays open for the next request."""
    bad = frame_of(_header(18, 3, 5) + _compact("my client") + _compact("1") + b"\x00")
    good = sample_frame(18, 3, correlation_id=6)
    first, second = _exchange(broker, bad, good)
    refused = _answer(18, 3, first)
    assert int(refused.error_code) == 42 and refused.api_keys == ()
    assert int(_answer(18, 3, second).error_code) == 0
    assert any("ApiVersions v3" in n and "INVALID_REQUEST" in n for n in broker.notes())


@pytest.mark.parametrize("cut", ["body", "frame"])
def test_an_unreadable_request_is_one_log_line_and_a_closed_connection(
        broker: Broker, cut: str, caplog: pytest.LogCaptureFixture,
        capfd: pytest.CaptureFixture[str]) -> None:
    """A Heartbeat cut short (in its body with an honest size, or by the frame itself, the
    client then closing): one WARNING line naming connection, API, version and why; the next
    request on the same bytes is never read; another connection is served."""
    payload = payload_of(sample_frame(12, 4))
    frames = [frame_of(payload[:-3]), sample_frame(18, 3)] if cut == "body" else \
        [frame_of(payload[:-3], len(payload))]
    with caplog.at_level(logging.INFO, logger="groupcheck.broker"):
        assert _exchange(broker, *frames) == []
        assert int(_answer(18, 3, _exchange(broker, sample_frame(18, 3))[0]).error_code) == 0
    lines = [r for r in caplog.records if r.name == "groupcheck.broker"]
    assert len(lines) == 1 and lines[0].exc_info is None
    message = lines[0].getMessage()
    assert "\n" not in message and message.startswith("conn ")
    assert ("Heartbeat v4" in message) if cut == "body" else ("cut short" in message)
    assert "connection closed" in message
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Unhandled exception" not in err


def test_a_bug_in_a_handler_is_an_internal_error_line_not_a_traceback(
        broker: Broker, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The boundary holds a real bug too, and keeps it visible: one ``internal error`` line
    (where it was raised), the count up by one, the connection closed, the broker serving."""
    def broken(*_: Any) -> Any:
        raise RuntimeError("handler bug")

    monkeypatch.setitem(data_apis.HANDLERS, 10, broken)
    before = broker.internal_errors()
    assert _exchange(broker, sample_frame(10, 4)) == []
    assert broker.internal_errors() == before + 1
    note = broker.notes()[-1]
    assert "FindCoordinator v4: internal error RuntimeError: handler bug at" in note
    monkeypatch.undo()
    assert int(_answer(18, 3, _exchange(broker, sample_frame(18, 3))[0]).error_code) == 0
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Unhandled exception" not in err


def test_hostile_frames_leave_no_internal_error_and_the_broker_serving(
        broker: Broker, capfd: pytest.CaptureFixture[str]) -> None:
    """Two seeded mutations of every served request version, pipelined behind a valid one:
    each is answered or closed, none is an internal error or a traceback."""
    rng = random.Random(7)
    before = broker.internal_errors()
    for api_key, version in SERVED:
        payload = payload_of(sample_frame(api_key, version))
        for _ in range(2):
            mutated = rng.choice(list(MUTATIONS.values()))(payload, rng)
            _exchange(broker, sample_frame(18, 0), frame_of(mutated))
    assert broker.internal_errors() == before
    assert int(_answer(18, 3, _exchange(broker, sample_frame(18, 3))[0]).error_code) == 0
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Unhandled exception" not in err


@pytest.mark.parametrize(("api_key", "version"), [(11, 0), (11, 9), (12, 4), (13, 5), (14, 5)])
def test_a_group_request_with_an_empty_group_id_is_invalid_group_id(
        broker: Broker, api_key: int, version: int) -> None:
    """Kafka's isValidGroupId: JoinGroup, Heartbeat, LeaveGroup and SyncGroup need a group
    id; the coordinator never sees the request and no group "" appears."""
    answer = _answer(api_key, version, _exchange(broker, sample_frame(api_key, version,
                                                                     group=""))[0])
    assert int(answer.error_code) == 24
    assert "" not in broker.group_ids()


@pytest.mark.parametrize(("api_key", "version"), [(12, 0), (12, 4), (13, 0), (13, 5), (14, 0),
                                                  (14, 5)])
def test_a_request_naming_a_group_the_broker_never_had_leaves_no_group_behind(
        broker: Broker, api_key: int, version: int) -> None:
    """Kafka's coordinator creates a group on JoinGroup only: a Heartbeat, SyncGroup or
    LeaveGroup for a group it does not know is UNKNOWN_MEMBER_ID (a LeaveGroup from v3 says
    so per member) and the group does not appear in ListGroups."""
    answer = _answer(api_key, version, _exchange(broker, sample_frame(api_key, version,
                                                                     group="never-joined"))[0])
    members = getattr(answer, "members", ())
    errors = {int(answer.error_code)} | {int(m.error_code) for m in members}
    assert 25 in errors and errors <= {0, 25}, errors
    assert "never-joined" not in broker.group_ids()
    _exchange(broker, sample_frame(11, 5, group="joined-once"))
    assert "joined-once" in broker.group_ids()
