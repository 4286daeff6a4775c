"""The librdkafka mock cluster's defects that Kafka's Java client runs into, each shown twice:
the raw mock misbehaving, and the mock backend of a group with Java members (its proxy,
targets/wire/backends/mock.py, the one place they are handled) answering as a Kafka broker does. The
requests are written frame by frame with kio's message classes, as Java sends them, so no JVM
is needed here. Plus the guard every group gets (protocol-vote), and the table that keeps
Java's handling away from groups without Java."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("confluent_kafka")
pytest.importorskip("kio")

from groupcheck.targets.wire.backends import mock as W  # noqa: E402
from groupcheck.targets.wire.backends.mock_binding import MockCluster  # noqa: E402

from helpers.mock_wire import (  # noqa: E402
    Connection,
    decode_response,
    entry,
    join_request,
    schema,
    sync_request,
)

UNSUPPORTED_VERSION, INVALID_REQUEST = 35, 42


@pytest.fixture
def mock() -> Iterator[MockCluster]:
    with MockCluster() as cluster:
        yield cluster


class Handled:
    """The mock backend of a group with Java members: ``bootstraps`` is its proxy."""

    def __init__(self) -> None:
        self.backend = W.MockBackend(frozenset({"java"}), session_timeout_ms=3000)
        self.bootstraps = self.backend.bootstrap


@pytest.fixture
def proxy() -> Iterator[Handled]:
    handled = Handled()
    try:
        yield handled
    finally:
        handled.backend.close()


def api_versions_v4() -> Any:
    return schema(18, 4)(client_software_name="apache-kafka-java",
                         client_software_version="4.0.0")


# --- D-apiversions ----------------------------------------------------------------------------


def test_raw_mock_answers_apiversions_v4_in_a_layout_java_reads_as_a_20_minute_throttle(
        mock: MockCluster) -> None:
    _, answer = Connection(mock.bootstraps).ask(18, 4, api_versions_v4())
    assert int(answer.error_code) == UNSUPPORTED_VERSION
    assert answer.throttle_time.total_seconds() * 1000 == 1_179_648
    assert answer.api_keys == ()


def test_proxy_answers_apiversions_v4_with_unsupported_version_in_the_v0_layout(
        proxy: Handled) -> None:
    connection = Connection(proxy.bootstraps)
    connection.send(18, 4, api_versions_v4())
    _, answer = decode_response(18, 0, connection.receive())
    ranges = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in answer.api_keys}
    assert int(answer.error_code) == UNSUPPORTED_VERSION
    assert ranges[18] == (0, 2)  # the client retries at v2, which the mock reads
    _, retry = connection.ask(18, 2, schema(18, 2)())  # and the retry is answered well
    advertised = {int(k.api_key): int(k.max_version) for k in retry.api_keys}
    assert int(retry.error_code) == 0 and advertised[11] == 5 and advertised[14] == 3


# --- D-flexible -------------------------------------------------------------------------------


def test_raw_mock_advertises_flexible_group_versions_then_drops_a_joingroup_v6(
        mock: MockCluster) -> None:
    connection = Connection(mock.bootstraps)
    _, versions = connection.ask(18, 2, schema(18, 2)())
    advertised = {int(k.api_key): int(k.max_version) for k in versions.api_keys}
    assert advertised[11] >= 6 and advertised[14] >= 4 and advertised[12] >= 4
    connection.send(11, 6, join_request(6, "g"))
    assert connection.receive() == b""  # the mock misparses it and closes the connection


def test_raw_mock_leavegroup_v3_answer_lacks_the_member_list(mock: MockCluster) -> None:
    connection = Connection(mock.bootstraps)
    _, joined = connection.ask(11, 5, join_request(5, "g"))
    leave = schema(13, 3)
    connection.send(13, 3, leave(group_id="g", members=(entry(leave, "members")(
        member_id=joined.member_id, group_instance_id=None),)))
    with pytest.raises(Exception, match="exhausted"):
        decode_response(13, 3, connection.receive())


def test_proxy_caps_the_group_apis_to_the_versions_the_mock_reads(
        proxy: Handled) -> None:
    connection = Connection(proxy.bootstraps)
    _, versions = connection.ask(18, 2, schema(18, 2)())
    advertised = {int(k.api_key): int(k.max_version) for k in versions.api_keys}
    assert {k: advertised[k] for k in W.MOCK_PARSES} == W.MOCK_PARSES
    assert advertised[3] >= 9  # the other APIs keep the mock's own ranges
    _, joined = connection.ask(11, 5, join_request(5, "g"))
    assert int(joined.error_code) == 0
    leave = schema(13, 2)
    _, left = connection.ask(13, 2, leave(group_id="g", member_id=joined.member_id))
    assert int(left.error_code) == 0


# --- D-sync-order -----------------------------------------------------------------------------


def form_group_of_two(bootstrap: str) -> tuple[Connection, Connection, Any, Any]:
    """Two members in one generation: a joins alone, b joins, a rejoins; both answers."""
    a, b = Connection(bootstrap), Connection(bootstrap)
    _, first = a.ask(11, 5, join_request(5, "g"))
    a.ask(14, 3, sync_request(3, "g", int(first.generation_id), first.member_id,
                              {first.member_id: b"a-alone"}))
    b.send(11, 5, join_request(5, "g"))
    time.sleep(0.2)
    a.send(11, 5, join_request(5, "g", member_id=first.member_id))
    answers = {}
    for name, connection in (("a", a), ("b", b)):
        answers[name] = decode_response(11, 5, connection.receive())[1]
    leader = answers["a"] if answers["a"].members else answers["b"]
    assert leader.generation_id == answers["b"].generation_id == answers["a"].generation_id
    if leader is answers["a"]:
        return a, b, answers["a"], answers["b"]
    return b, a, answers["b"], answers["a"]


def test_raw_mock_answers_a_follower_syncing_after_the_leader_with_a_null_assignment(
        mock: MockCluster) -> None:
    leader, follower, lead, follow = form_group_of_two(mock.bootstraps)
    generation = int(lead.generation_id)
    plan = {lead.member_id: b"for-leader", follow.member_id: b"for-follower"}
    _, answer = leader.ask(14, 3, sync_request(3, "g", generation, lead.member_id, plan))
    assert answer.assignment == b"for-leader"
    follower.send(14, 3, sync_request(3, "g", generation, follow.member_id, {}))
    raw = follower.receive()
    # error INVALID_REQUEST, then a null (-1 length) assignment: Java rejects the frame
    assert raw[-6:] == INVALID_REQUEST.to_bytes(2, "big") + b"\xff\xff\xff\xff"
    with pytest.raises(Exception):  # noqa: B017 - kio refuses a null non-nullable field
        decode_response(14, 3, raw)


def test_proxy_holds_the_leaders_sync_until_the_follower_has_synced(
        proxy: Handled) -> None:
    leader, follower, lead, follow = form_group_of_two(proxy.bootstraps)
    generation = int(lead.generation_id)
    plan = {lead.member_id: b"for-leader", follow.member_id: b"for-follower"}
    leader.send(14, 3, sync_request(3, "g", generation, lead.member_id, plan))
    time.sleep(0.3)  # the leader's SyncGroup is first, by far
    answers: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: answers.update(
        leader=decode_response(14, 3, leader.receive())[1]))
    reader.start()
    _, mine = follower.ask(14, 3, sync_request(3, "g", generation, follow.member_id, {}))
    reader.join(10)
    assert int(mine.error_code) == 0 and mine.assignment == b"for-follower"
    assert answers["leader"].assignment == b"for-leader"


def test_proxy_lets_a_lone_members_sync_go_at_once(proxy: Handled) -> None:
    """Nobody to wait for: the leader's SyncGroup is not held."""
    leader = Connection(proxy.bootstraps)
    _, first = leader.ask(11, 5, join_request(5, "g"))
    started = time.monotonic()
    _, answer = leader.ask(14, 3, sync_request(3, "g", int(first.generation_id),
                                               first.member_id, {first.member_id: b"x"}))
    assert answer.assignment == b"x" and time.monotonic() - started < 1.0
    assert proxy.backend.held == []


# --- protocol-vote (every group) ---------------------------------------------------------------

MIXED_PROTOCOLS = """
import socket, sys, time
sys.path.insert(0, sys.argv[1])
from groupcheck.targets.wire.backends.mock_binding import MockCluster
from helpers.mock_wire import Connection, join_request
with MockCluster() as mock:
    a, b = Connection(mock.bootstraps), Connection(mock.bootstraps)
    _, first = a.ask(11, 5, join_request(5, "g", protocol="roundrobin"))
    b.send(11, 5, join_request(5, "g", protocol="RoundRobinAssigner"))
    time.sleep(0.2)
    a.send(11, 5, join_request(5, "g", member_id=first.member_id, protocol="roundrobin"))
    time.sleep(10)
print("survived")
"""


def test_raw_mock_aborts_its_process_when_a_member_shares_no_protocol() -> None:
    """Java's roundrobin and KafkaJS's RoundRobinAssigner in one group: the mock's leader
    election asserts, and the process hosting the mock dies (run in a child process)."""
    import subprocess
    import sys
    from pathlib import Path

    child = subprocess.run([sys.executable, "-c", MIXED_PROTOCOLS, str(Path(__file__).parent)],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode < 0 and "survived" not in child.stdout  # SIGABRT
    assert "Assertion" in child.stderr and "protocol" in child.stderr


@pytest.mark.parametrize("clients", [{"java"}, {"librdkafka"}, {"kafkajs", "java"}])
def test_backend_refuses_a_join_sharing_no_protocol_as_kafka_does(clients: set[str]) -> None:
    backend = W.MockBackend(frozenset(clients), session_timeout_ms=3000)
    try:
        a = Connection(backend.bootstrap, client_id="c1")
        b = Connection(backend.bootstrap, client_id="c2")
        _, first = a.ask(11, 5, join_request(5, "g", protocol="roundrobin"))
        assert int(first.error_code) == 0
        _, refused = b.ask(11, 5, join_request(5, "g", protocol="RoundRobinAssigner"))
        assert int(refused.error_code) == 23  # INCONSISTENT_GROUP_PROTOCOL
        _, joined = b.ask(11, 5, join_request(5, "g", protocol="roundrobin"))
        assert int(joined.error_code) == 0 or int(joined.error_code) == 27
    finally:
        backend.close()


def test_javas_handling_is_given_only_to_groups_with_java_members() -> None:
    assert W.DEFECTS_BY_CLIENT["java"] == ("api-versions", "flexible-versions", "sync-order",
                                           "sync-error-null")
    for clients, expected in (({"librdkafka"}, ["protocol-vote"]),
                              ({"kafkajs"}, ["protocol-vote"]),
                              ({"java", "librdkafka"}, sorted({
                                  "protocol-vote", *W.DEFECTS_BY_CLIENT["java"]}))):
        backend = W.MockBackend(frozenset(clients), session_timeout_ms=3000)
        try:
            assert backend.defects == expected
        finally:
            backend.close()
    raw = W.MockBackend(frozenset({"librdkafka"}), session_timeout_ms=3000)
    try:  # without Java in the group, the mock's own ApiVersions answer goes through
        _, answer = Connection(raw.bootstrap).ask(18, 4, api_versions_v4())
        assert answer.throttle_time.total_seconds() * 1000 == 1_179_648
    finally:
        raw.close()
