"""The coordinator's fault vocabulary (`broker.faults`) and fail rules held to it: an error
an API cannot carry at the member's version is refused, as the rule is armed or as its
request arrives; an error it can carry reaches the member named, at every answer shape
(top-level, per coordinator key, per partition, per group), and no other member.

Members here are bare protocol clients, so every step is deterministic.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.broker.faults import (  # noqa: E402
    ERROR_CODES,
    FAULTS,
    carried,
    faults_of,
    refusal,
)
from groupcheck.broker.group_apis import FAILABLE  # noqa: E402
from groupcheck.broker.protocol import API_KEYS, SUPPORTED  # noqa: E402
from groupcheck.broker.steering import Spoken, Who  # noqa: E402

from helpers.broker_wire import RawClient  # noqa: E402

GROUP, TOPIC = "g", "t"
pytestmark = pytest.mark.broker_config(topics={TOPIC: 2})


def _heartbeat(client: RawClient, version: int) -> Any:
    return client.call(12, version, {"group_id": GROUP, "generation_id": -1, "member_id": "m",
                                     "group_instance_id": None})


def test_every_fault_is_of_an_api_steering_fails_and_within_the_versions_served() -> None:
    for fault in FAULTS:
        assert fault.api_key in FAILABLE, fault
        assert refusal(fault.api_key, fault.code) is None, fault
    assert {f.api for f in FAULTS} == {SUPPORTED[k][0] for k in FAILABLE}
    assert len({(f.api, f.error) for f in FAULTS}) == len(FAULTS)  # one row per pair


def test_an_error_arrives_with_the_version_whose_fields_name_its_subject() -> None:
    join, sync = API_KEYS["JoinGroup"], API_KEYS["SyncGroup"]
    required, fenced = ERROR_CODES["MEMBER_ID_REQUIRED"], ERROR_CODES["FENCED_INSTANCE_ID"]
    assert not carried(join, required, 3) and carried(join, required, 4)
    assert not carried(join, fenced, 4) and carried(join, fenced, 5)
    assert not carried(sync, fenced, 2) and carried(sync, fenced, 3)
    loading = ERROR_CODES["COORDINATOR_LOAD_IN_PROGRESS"]
    assert {f.api for f in FAULTS if f.code == loading} == {
        "JoinGroup", "LeaveGroup", "OffsetCommit", "OffsetFetch"}
    assert [f.error for f in faults_of("FindCoordinator")] == [
        "COORDINATOR_NOT_AVAILABLE", "GROUP_AUTHORIZATION_FAILED"]


def test_a_fail_rule_with_an_error_the_api_never_carries_is_refused(broker: Broker) -> None:
    with pytest.raises(ValueError, match=r"Heartbeat \(v0-4 served\) cannot carry "
                                         r"COORDINATOR_LOAD_IN_PROGRESS \(14\)"):
        broker.fail_next("a", "Heartbeat", "COORDINATOR_LOAD_IN_PROGRESS")
    with pytest.raises(ValueError, match="error code 99 is no coordinator fault"):
        broker.fail_next("a", "Heartbeat", 99)
    assert broker.armed() == []


def test_a_fail_rule_past_the_version_its_member_speaks_is_refused_as_armed(
        broker: Broker) -> None:
    with RawClient(broker.bootstrap, "a") as a:
        _heartbeat(a, 2)
    with pytest.raises(ValueError, match=r"refused: Heartbeat v2 cannot carry "
                                         r"FENCED_INSTANCE_ID \(82\): it carries it from v3"):
        broker.fail_next("a", "Heartbeat", "FENCED_INSTANCE_ID")
    broker.fail_next("b", "Heartbeat", "FENCED_INSTANCE_ID")  # b has not spoken yet
    assert [r.member for r in broker.armed()] == ["b"]


def test_a_fail_rule_its_request_cannot_carry_is_served_unsteered_and_recorded(
        broker: Broker) -> None:
    broker.fail_next("b", "Heartbeat", "FENCED_INSTANCE_ID")
    with RawClient(broker.bootstrap, "b") as b:
        answer = _heartbeat(b, 2)
    assert int(answer.error_code) == ERROR_CODES["UNKNOWN_MEMBER_ID"]  # the coordinator's
    assert broker.armed() == [] and broker.steered() == []
    failure = broker.failure()
    assert failure is not None and "Heartbeat v2 cannot carry FENCED_INSTANCE_ID" in \
        failure.message
    assert any("served unsteered" in line for line in broker.notes())


_PARTITION = {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
              "committed_metadata": ""}
#: (API, version, request, where its answer carries the error)
_REQUESTS: list[tuple[str, int, dict[str, Any], str]] = [
    ("FindCoordinator", 3, {"key": GROUP, "key_type": 0}, "top"),
    ("FindCoordinator", 4, {"key_type": 0, "coordinator_keys": [GROUP]}, "keys"),
    ("OffsetFetch", 1, {"group_id": GROUP, "topics": [
        {"name": TOPIC, "partition_indexes": [0]}]}, "partition"),
    ("OffsetFetch", 8, {"require_stable": False, "groups": [{"group_id": GROUP, "topics": [
        {"name": TOPIC, "partition_indexes": [0]}]}]}, "group"),
    ("OffsetCommit", 8, {"group_id": GROUP, "generation_id_or_member_epoch": -1,
                         "member_id": "", "group_instance_id": None, "topics": [
                             {"name": TOPIC, "partitions": [_PARTITION]}]}, "partition"),
]


def _carried(answer: Any, where: str) -> int:
    if where == "top":
        return int(answer.error_code)
    if where == "keys":
        return int(answer.coordinators[0].error_code)
    if where == "group":
        return int(answer.groups[0].error_code)
    return int(answer.topics[0].partitions[0].error_code)


@pytest.mark.parametrize(("api", "version", "request_data", "where"), _REQUESTS,
                         ids=[f"{r[0]}-v{r[1]}" for r in _REQUESTS])
def test_a_coordinator_error_reaches_the_member_named_and_no_other(
        broker: Broker, api: str, version: int, request_data: dict[str, Any],
        where: str) -> None:
    error = "COORDINATOR_NOT_AVAILABLE"
    broker.fail_next("b", api, error)
    with RawClient(broker.bootstrap, "a") as a, RawClient(broker.bootstrap, "b") as b:
        key = API_KEYS[api]
        assert _carried(a.call(key, version, request_data), where) == 0
        assert _carried(b.call(key, version, request_data), where) == ERROR_CODES[error]
        assert _carried(b.call(key, version, request_data), where) == 0  # fired once
    assert [(e.who.client_id, e.api) for e in broker.steered()] == [("b", api)]


_FETCH_V7 = {"group_id": GROUP, "require_stable": True,
             "topics": [{"name": TOPIC, "partition_indexes": [0]}]}
_FETCH_V8 = {"require_stable": True, "groups": [
    {"group_id": GROUP, "topics": [{"name": TOPIC, "partition_indexes": [0]}]}]}


@pytest.mark.parametrize("version", [7, 8])
@pytest.mark.parametrize(("error", "per_partition"), [
    ("UNSTABLE_OFFSET_COMMIT", True), ("TOPIC_AUTHORIZATION_FAILED", True),
    ("NOT_COORDINATOR", False), ("GROUP_AUTHORIZATION_FAILED", False)])
def test_an_offset_fetch_error_is_answered_where_kafka_puts_it(
        broker: Broker, version: int, error: str, per_partition: bool) -> None:
    """A pending transactional commit (KIP-447) and a topic the principal may not describe
    are a partition's errors, the group's left at none; a coordinator's or the group's own
    error is the group's (at the top before v8), with no partition listed."""
    broker.fail_next("a", "OffsetFetch", error)
    with RawClient(broker.bootstrap, "a") as a:
        answer = a.call(API_KEYS["OffsetFetch"], version,
                        _FETCH_V8 if version >= 8 else _FETCH_V7)
    group = answer.groups[0] if version >= 8 else answer
    partitions = [(t.name, p.partition_index, int(p.error_code), p.committed_offset)
                  for t in group.topics for p in t.partitions]
    if per_partition:
        assert int(group.error_code) == 0
        assert partitions == [(TOPIC, 0, ERROR_CODES[error], -1)]
    else:
        assert int(group.error_code) == ERROR_CODES[error] and partitions == []


def test_the_versions_heard_are_bounded_the_oldest_forgotten_first() -> None:
    spoken = Spoken(limit=2)
    spoken.saw(Who("a", "", None), 12, 2)
    spoken.saw(Who("b", "", None), 12, 3)
    spoken.saw(Who("a", "", None), 12, 4)  # a heard again: b is now the oldest
    spoken.saw(Who("c", "", None), 12, 1)
    assert [spoken.of(n, 12) for n in ("a", "b", "c")] == [4, None, 1]


_LEAVE_V3 = {"group_id": GROUP, "members": [{"member_id": "m", "group_instance_id": "i-1"}]}


@pytest.mark.parametrize("error", ["UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"])
def test_a_leave_error_of_one_member_is_answered_for_that_member_from_v3(
        broker: Broker, error: str) -> None:
    """KIP-345's LeaveGroup lists its members: a member's own error is per member, under a
    top-level NONE, as Kafka's coordinator answers it."""
    broker.fail_next("b", "LeaveGroup", error)
    with RawClient(broker.bootstrap, "b") as b:
        answer = b.call(API_KEYS["LeaveGroup"], 3, _LEAVE_V3)
    assert int(answer.error_code) == 0
    assert [(m.member_id, int(m.error_code)) for m in answer.members] == [
        ("m", ERROR_CODES[error])]


def test_a_leave_error_of_the_coordinator_is_top_level_with_no_member_from_v3(
        broker: Broker) -> None:
    """An error of the coordinator (not of a member) answers a KIP-345 LeaveGroup at top
    level with an empty member list."""
    broker.fail_next("b", "LeaveGroup", "NOT_COORDINATOR")
    with RawClient(broker.bootstrap, "b") as b:
        answer = b.call(API_KEYS["LeaveGroup"], 3, _LEAVE_V3)
    assert int(answer.error_code) == ERROR_CODES["NOT_COORDINATOR"]
    assert list(answer.members) == []


def test_an_error_kafka_never_sends_to_that_request_is_served_unsteered_and_recorded(
        broker: Broker) -> None:
    """FENCED_INSTANCE_ID goes only to a static member (KIP-345): a fail rule that would
    send it to a dynamic member's Heartbeat is a harness failure, and the coordinator
    answers the request."""
    broker.fail_next("b", "Heartbeat", "FENCED_INSTANCE_ID")
    with RawClient(broker.bootstrap, "b") as b:
        answer = _heartbeat(b, 4)
    assert int(answer.error_code) == ERROR_CODES["UNKNOWN_MEMBER_ID"]  # the coordinator's
    failure = broker.failure()
    assert failure is not None and "goes only to a static member" in failure.message
