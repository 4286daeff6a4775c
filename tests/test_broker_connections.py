"""The broker's connections within Kafka's limits: a frame size above socket.request.max.bytes
(or negative) refused on its 4 bytes alone, a size within the limit never allocated ahead of
its bytes, idle connections and stalled partial frames closed, a parked JoinGroup never
taken for idle, and past ``max_connections`` a new connection closed at once while the
others go on.

Timeouts are short and configured per broker. Tolerances: a close must not come before
its bound (asyncio's timers do not fire early; 50 ms of slack for the client's own clock
starting a little before the broker's), and must come within the bound plus
``LATE`` seconds (a busy 2-core machine runs other engineers' work beside this).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker, BrokerConfig  # noqa: E402
from groupcheck.broker.client import KafkaConnection  # noqa: E402
from groupcheck.broker.fuzz_frames import sample_frame  # noqa: E402

LATE = 3.0
EARLY = 0.05


def _connect(broker: Broker) -> socket.socket:
    host, port = broker.bootstrap.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=15)
    return sock


def _closed_after(sock: socket.socket) -> float:
    """Seconds until the broker closes ``sock`` (reading and dropping what it sends)."""
    started = time.monotonic()
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def _served(broker: Broker) -> bool:
    with KafkaConnection(broker.bootstrap, "probe") as c:
        return int(c.call(18, 3, {"client_software_name": "probe",
                                  "client_software_version": "1"}).error_code) == 0


@pytest.fixture
def small() -> Iterator[Broker]:
    config = BrokerConfig(socket_request_max_bytes=1024, connections_max_idle_ms=60_000,
                          partial_frame_timeout_ms=300, max_connections=3)
    with Broker(config) as b:
        yield b


@pytest.mark.parametrize("size", [1025, -1, -2**31])
def test_a_frame_size_past_the_limit_or_negative_is_refused_on_its_four_bytes(
        small: Broker, size: int) -> None:
    """Only the size is sent: the broker closes at once (well before the 300 ms stall
    bound), so it never waited for, let alone allocated, a body."""
    with _connect(small) as sock:
        sock.sendall(size.to_bytes(4, "big", signed=True))
        assert _closed_after(sock) < 0.3
    assert any(f"frame size {size} refused (socket.request.max.bytes 1024)" in note
               for note in small.notes())
    assert _served(small)


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def test_a_frame_size_within_the_limit_is_not_allocated_ahead_of_its_bytes() -> None:
    """100 MiB announced (Kafka's default limit), 10 bytes sent: while the broker waits for
    the rest, it holds the 10 bytes, not 100 MiB (the broker runs in this process: its RSS
    is measured during the wait; a buffer of the announced size, zero-filled, would add 100
    MiB)."""
    with Broker(BrokerConfig(partial_frame_timeout_ms=1000)) as broker:
        before = _rss_kib()
        with _connect(broker) as sock:
            sock.sendall((100 * 1024 * 1024).to_bytes(4, "big") + bytes(10))
            time.sleep(0.3)  # the broker has read the 14 bytes (loopback) and waits
            during = _rss_kib()
            assert _closed_after(sock) < 1.0 + LATE
        assert during - before < 20 * 1024
        assert any("partial frame stalled: 10 of 104857600 bytes" in n for n in broker.notes())


def test_a_partial_frame_that_stalls_is_closed_after_the_bound_from_its_last_byte(
        small: Broker) -> None:
    with _connect(small) as sock:
        sock.sendall(b"\x00\x00")  # half a size
        took = _closed_after(sock)
    assert 0.3 - EARLY <= took < 0.3 + LATE
    assert any("partial frame stalled: 2 of 4 bytes, none for 300 ms" in n
               for n in small.notes())


def test_a_frame_dribbled_byte_by_byte_within_the_bound_is_served(small: Broker) -> None:
    """100 ms between bytes, under the 300 ms bound: each byte restarts the clock (Kafka
    counts any byte as activity), so the whole ApiVersions (v0: 16 bytes) is answered."""
    frame = sample_frame(18, 0)
    with _connect(small) as sock:
        for i in range(len(frame)):
            sock.sendall(frame[i:i + 1])
            time.sleep(0.1)
        answer = sock.recv(65536)
    assert len(answer) > 4 and int.from_bytes(answer[4:8], "big") == 1  # correlation id


def test_an_idle_connection_is_closed_after_connections_max_idle_ms() -> None:
    with Broker(BrokerConfig(connections_max_idle_ms=300)) as broker:
        with _connect(broker) as sock:
            sock.sendall(sample_frame(18, 3))
            assert sock.recv(65536)  # a request answered: the idle clock starts again
            took = _closed_after(sock)
        assert 0.3 - EARLY <= took < 0.3 + LATE
        assert any("idle for 300 ms (connections.max.idle.ms)" in n for n in broker.notes())


def test_a_join_group_parked_past_the_idle_bound_is_not_closed_as_idle() -> None:
    """group.initial.rebalance.delay.ms of 1 s parks the first JoinGroup for 1 s, more
    than three idle bounds: the answer comes, the connection is still open."""
    config = BrokerConfig(connections_max_idle_ms=300, initial_rebalance_delay_ms=1000)
    with Broker(config) as broker, KafkaConnection(broker.bootstrap, "parked") as c:
        started = time.monotonic()
        joined = c.call(11, 3, {"group_id": "parked", "session_timeout": 10_000,
                                "rebalance_timeout": 10_000, "member_id": "",
                                "protocol_type": "consumer",
                                "protocols": [{"name": "range", "metadata": b""}]})
        assert int(joined.error_code) == 0 and time.monotonic() - started >= 1.0 - EARLY
        assert int(c.call(12, 3, {"group_id": "parked", "generation_id": joined.generation_id,
                                  "member_id": joined.member_id,
                                  "group_instance_id": None}).error_code) in (0, 27)
        assert not any("idle" in n for n in broker.notes())


def test_past_max_connections_a_new_connection_is_closed_and_the_others_go_on(
        small: Broker) -> None:
    held = [KafkaConnection(small.bootstrap, f"held-{i}") for i in range(3)]
    try:
        for c in held:  # each accepted and served before the next connects
            assert int(c.call(18, 0, {}).error_code) == 0
        with _connect(small) as extra:
            assert _closed_after(extra) < 0.3
        assert any("refused, 3 connections open (max_connections 3)" in n
                   for n in small.notes())
        for c in held:
            assert int(c.call(18, 0, {}).error_code) == 0
    finally:
        held.pop().close()
    deadline = time.monotonic() + LATE
    while small.open_connections() > 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert _served(small)  # a slot is free again
    finally:
        for c in held:
            c.close()
