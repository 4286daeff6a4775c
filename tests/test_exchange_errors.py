"""The error an exchange's answer carries (`Exchange.error_code`), whatever the answer's shape:
OffsetCommit has one error per partition and OffsetFetch v8+ one per group, so a judge that
read only a top-level ``error_code`` never saw an error steered onto either (a member told
ILLEGAL_GENERATION on its commit was not known to be fenced, I7)."""

from __future__ import annotations

import datetime

import pytest

pytest.importorskip("kio")

from kio.schema.errors import ErrorCode  # noqa: E402
from kio.schema.heartbeat.v4.response import HeartbeatResponse  # noqa: E402
from kio.schema.offset_commit.v9 import response as commit  # noqa: E402
from kio.schema.offset_fetch.v9 import response as fetch  # noqa: E402
from kio.static.primitive import i32, i32Timedelta  # noqa: E402

from groupcheck.broker.steering import Exchange, Who  # noqa: E402

NO_TIME = i32Timedelta.parse(datetime.timedelta(0))


def _exchange(api_key: int, response: object) -> Exchange:
    return Exchange(1, 1, Who("c1", "c1-id", None), api_key, 9, 1, None, 0, "c1", response)


def _commit(*codes: ErrorCode) -> commit.OffsetCommitResponse:
    parts = tuple(commit.OffsetCommitResponsePartition(partition_index=i32(i), error_code=c)
                  for i, c in enumerate(codes))
    return commit.OffsetCommitResponse(throttle_time=NO_TIME, topics=(
        commit.OffsetCommitResponseTopic(name="t0", partitions=parts),))


def test_a_commit_refused_as_a_whole_carries_its_partitions_error() -> None:
    refused = _commit(ErrorCode.illegal_generation, ErrorCode.illegal_generation)
    assert _exchange(8, refused).error_code == ErrorCode.illegal_generation.value
    assert _exchange(8, _commit(ErrorCode.none, ErrorCode.none)).error_code == 0


def test_a_commit_whose_partitions_differ_carries_no_one_error() -> None:
    mixed = _commit(ErrorCode.none, ErrorCode.unknown_topic_or_partition)
    assert _exchange(8, mixed).error_code is None


def test_an_offset_fetch_carries_its_groups_error_and_others_their_own() -> None:
    group = fetch.OffsetFetchResponseGroup(group_id="g", topics=(),
                                           error_code=ErrorCode.not_coordinator)
    answer = fetch.OffsetFetchResponse(throttle_time=NO_TIME, groups=(group,))
    assert _exchange(9, answer).error_code == ErrorCode.not_coordinator.value
    beat = HeartbeatResponse(throttle_time=NO_TIME, error_code=ErrorCode.unknown_member_id)
    assert _exchange(12, beat).error_code == ErrorCode.unknown_member_id.value
    assert _exchange(12, None).error_code is None
