"""The librdkafka mock cluster's defects for Kafka's Java client, each shown twice: the raw
mock misbehaving, and `JavaMockProxy` (targets/librdkafka_mock_defects.py) answering as a
Kafka broker does. The requests are written frame by frame with kio's message classes, as a
Java client would send them, so no JVM is needed here."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("confluent_kafka")
pytest.importorskip("kio")

from groupcheck.targets import librdkafka_mock_defects as D  # noqa: E402
from groupcheck.targets.librdkafka_mock import MockCluster  # noqa: E402

from mock_wire import Connection, entry, join_request, schema, sync_request  # noqa: E402

UNSUPPORTED_VERSION, INVALID_REQUEST = 35, 42


@pytest.fixture
def mock() -> Iterator[MockCluster]:
    with MockCluster() as cluster:
        yield cluster


@pytest.fixture
def proxy(mock: MockCluster) -> Iterator[D.JavaMockProxy]:
    proxy = D.JavaMockProxy(mock.bootstraps)
    try:
        yield proxy
    finally:
        proxy.close()


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
        proxy: D.JavaMockProxy) -> None:
    connection = Connection(proxy.bootstraps)
    connection.send(18, 4, api_versions_v4())
    _, answer = D.decode_response(18, 0, connection.receive())
    ranges = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in answer.api_keys}
    assert int(answer.error_code) == UNSUPPORTED_VERSION
    assert ranges[18] == (0, 2)  # the client retries at v2, which the mock reads
    assert ranges[11] == (0, 5) and ranges[14] == (0, 3)  # capped as in D-flexible
    _, retry = connection.ask(18, 2, schema(18, 2)())  # and the retry is answered well
    assert int(retry.error_code) == 0 and len(retry.api_keys) == len(answer.api_keys)


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
        D.decode_response(13, 3, connection.receive())


def test_proxy_caps_the_group_apis_to_the_versions_the_mock_reads(
        proxy: D.JavaMockProxy) -> None:
    connection = Connection(proxy.bootstraps)
    _, versions = connection.ask(18, 2, schema(18, 2)())
    advertised = {int(k.api_key): int(k.max_version) for k in versions.api_keys}
    assert {k: advertised[k] for k in D.MOCK_READS} == D.MOCK_READS
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
        answers[name] = D.decode_response(11, 5, connection.receive())[1]
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
        D.decode_response(14, 3, raw)


def test_proxy_holds_the_leaders_sync_until_the_follower_has_synced(
        proxy: D.JavaMockProxy) -> None:
    leader, follower, lead, follow = form_group_of_two(proxy.bootstraps)
    generation = int(lead.generation_id)
    plan = {lead.member_id: b"for-leader", follow.member_id: b"for-follower"}
    leader.send(14, 3, sync_request(3, "g", generation, lead.member_id, plan))
    time.sleep(0.3)  # the leader's SyncGroup is first, by far
    answers: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: answers.update(
        leader=D.decode_response(14, 3, leader.receive())[1]))
    reader.start()
    _, mine = follower.ask(14, 3, sync_request(3, "g", generation, follow.member_id, {}))
    reader.join(10)
    assert int(mine.error_code) == 0 and mine.assignment == b"for-follower"
    assert answers["leader"].assignment == b"for-leader"


def test_proxy_lets_a_leaders_sync_go_when_no_proxied_follower_is_waited_for(
        proxy: D.JavaMockProxy, mock: MockCluster) -> None:
    """A follower that talks to the mock directly (another client in a mixed group) is not
    the proxy's: the leader's SyncGroup goes at once, and the mock's answer is its own."""
    leader = Connection(proxy.bootstraps)
    _, first = leader.ask(11, 5, join_request(5, "g"))
    started = time.monotonic()
    _, answer = leader.ask(14, 3, sync_request(3, "g", int(first.generation_id),
                                               first.member_id, {first.member_id: b"x"}))
    assert answer.assignment == b"x" and time.monotonic() - started < D.SYNC_HOLD_LIMIT / 2


def test_raw_mock_writes_a_null_assignment_into_every_syncgroup_error_and_proxy_empties_it(
        mock: MockCluster, proxy: D.JavaMockProxy) -> None:
    """A SyncGroup for a generation that is not the group's gets ILLEGAL_GENERATION; the
    mock's answer has a null assignment (unreadable for Java), the proxy's an empty one."""
    answers = []
    for bootstrap in (mock.bootstraps, proxy.bootstraps):
        connection = Connection(bootstrap)
        _, joined = connection.ask(11, 5, join_request(5, "g"))
        connection.send(14, 3, sync_request(3, "g", int(joined.generation_id) + 7,
                                            joined.member_id, {}))
        answers.append(connection.receive())
    raw, proxied = answers
    assert raw.endswith(b"\xff\xff\xff\xff")
    with pytest.raises(Exception):  # noqa: B017 - kio refuses a null non-nullable field
        D.decode_response(14, 3, raw)
    _, answer = D.decode_response(14, 3, proxied)
    assert int(answer.error_code) == 22 and answer.assignment == b""  # ILLEGAL_GENERATION
    assert proxied[:-4] == raw[:-4]  # nothing else changed
