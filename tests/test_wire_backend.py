"""The mock backend and its proxy, without consumers: what the mock offers, which of its
defects each client gets handled (and that librdkafka gets none), the contract's driver
process on a toy driver, and aiokafka's assignors called as its coordinator calls them."""

from __future__ import annotations

import socket
import struct
import sys

import pytest

from groupcheck.targets.wire.driver_process import CommandFailed, DriverError, DriverProcess

from helpers.environment import missing

needs_mock = pytest.mark.skipif(bool(missing("librdkafka")),
                                reason="the mock cluster needs confluent-kafka")


def _ask(address: str, frame: bytes) -> bytes:
    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", sock.recv(4))[0]
        data = b""
        while len(data) < size:
            data += sock.recv(size - len(data))
    return data


def _api_versions(version: int) -> bytes:
    from kafka.protocol.metadata import ApiVersionsRequest

    request = ApiVersionsRequest(version=version, client_software_name="groupcheck",
                                 client_software_version="0") if version >= 3 else \
        ApiVersionsRequest(version=version)
    request.with_header(correlation_id=7, client_id="probe")
    return bytes(request.encode(header=True))


@needs_mock
def test_the_mock_has_no_describe_groups_so_the_proxy_reads_the_group() -> None:
    """Why the coordinator's side is read by the proxy: the mock lists no DescribeGroups."""
    from kafka.protocol.metadata import ApiVersionsResponse

    from groupcheck.targets.wire.backends.mock import MockBackend

    backend = MockBackend(frozenset({"librdkafka"}), 2000)
    try:
        answer = ApiVersionsResponse.decode(_ask(backend.bootstrap, _api_versions(0)),
                                            version=0, header=True)
    finally:
        backend.close()
    keys = {int(a.api_key): int(a.max_version) for a in answer.api_keys}
    assert 11 in keys and 14 in keys and 15 not in keys  # JoinGroup, SyncGroup; no Describe


@needs_mock
def test_mock_defects_are_handled_only_for_the_clients_that_meet_them() -> None:
    from kafka.protocol.metadata import ApiVersionsResponse

    from groupcheck.targets.wire.backends.mock import DEFECTS_BY_CLIENT, MOCK_PARSES, MockBackend

    assert "librdkafka" not in DEFECTS_BY_CLIENT
    plain = MockBackend(frozenset({"librdkafka"}), 2000)
    handled = MockBackend(frozenset({"kafka-python"}), 2000)
    try:
        # protocol-vote guards the mock's process in every group; nothing else is on for
        # librdkafka, whose requests the mock reads right
        assert plain.defects == ["protocol-vote"] and plain.proxy.hold is None
        assert plain.proxy.rewrite is None
        raw = _ask(plain.bootstrap, _api_versions(4))  # the mock's own reply, untouched
        with pytest.raises(Exception):  # noqa: B017 - whatever kafka-python raises on it
            ApiVersionsResponse.decode(raw, version=4, header=True)
        fixed = ApiVersionsResponse.decode(_ask(handled.bootstrap, _api_versions(4)),
                                           version=0, header=True)
        capped = ApiVersionsResponse.decode(_ask(handled.bootstrap, _api_versions(2)),
                                            version=2, header=True)
    finally:
        plain.close()
        handled.close()
    assert int(fixed.error_code) == 35  # UNSUPPORTED_VERSION, in the v0 layout a broker uses
    assert [(int(a.api_key), int(a.max_version)) for a in fixed.api_keys] == [(18, 2)]
    versions = {int(a.api_key): int(a.max_version) for a in capped.api_keys}
    assert all(versions[api] <= top for api, top in MOCK_PARSES.items())


def test_a_driver_that_breaks_the_contract_is_a_harness_error_never_a_hang() -> None:
    events: list[dict[str, object]] = []
    toy = ("import sys, json\n"
           "for line in sys.stdin:\n"
           "    m = json.loads(line)\n"
           "    if m['cmd'] == 'hello': print(json.dumps({'ack': m['id'], 'client': 'toy'}))\n"
           "    elif m['cmd'] == 'fail': print(json.dumps({'ack': m['id'], 'error': 'no'}))\n"
           "    elif m['cmd'] == 'event': print(json.dumps({'event': 'closed', 'member': 'c1',"
           " 'seq': 0, 'ts': 1}))\n"
           "    elif m['cmd'] == 'garbage': print('not json')\n"
           "    sys.stdout.flush()\n")
    driver = DriverProcess([sys.executable, "-c", toy], "toy", lambda _d, m: events.append(m))
    try:
        assert driver.call("hello")["client"] == "toy"
        with pytest.raises(CommandFailed, match="fail: no"):
            driver.call("fail")
        driver.send("event")
        with pytest.raises(DriverError, match="did not answer silence"):
            driver.call("silence", timeout=1)
        with pytest.raises(DriverError, match="not a JSON object"):
            driver.call("garbage", timeout=10)
    finally:
        driver.close()
    assert events == [{"event": "closed", "member": "c1", "seq": 0, "ts": 1}]


def test_aiokafka_assignors_keep_one_state_per_consumer_and_never_see_a_generation() -> None:
    """aiokafka's sticky assignor as its coordinator drives it: on_assignment with the decoded
    assignment only; each consumer's state is its own (separate processes)."""
    pytest.importorskip("aiokafka")
    from groupcheck.impl.types import Assignment
    from groupcheck.impl.user_data import decode_sticky_user_data
    from groupcheck.targets.adapters.aiokafka_assignors import AiokafkaAssignor

    first, second = AiokafkaAssignor("sticky"), AiokafkaAssignor("sticky")
    first.on_assignment(Assignment([("t", 0), ("t", 1)]), 7)
    mine = decode_sticky_user_data(first.subscription_user_data({"t"}))
    assert sorted(mine.partitions) == [("t", 0), ("t", 1)]
    assert mine.generation == -1  # the generation never reaches aiokafka's assignor
    assert second.subscription_user_data({"t"}) == b""  # nothing of the first one's state
