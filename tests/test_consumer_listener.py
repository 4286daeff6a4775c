"""The consumer's rebalance callbacks (invariants I6–I9) when the group moves on without
it, driven by hand-made responses: the errors after which it reports its partitions lost
rather than revoked, fatal errors and timeouts, callbacks that throw, and subscribe and
unsubscribe."""

from __future__ import annotations

import pytest

from groupcheck.impl.consumer_fetch import Record
from groupcheck.impl.consumer_listener import ConsumerError, ConsumerStateError, RebalanceListener
from groupcheck.impl.consumer_membership import RETRY_BACKOFF_MS
from groupcheck.impl.consumer_protocol import encode_assignment
from groupcheck.impl.consumer_state import MemberState
from groupcheck.impl.group_messages import (
    Envelope,
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    SyncGroupRequest,
    SyncGroupResponse,
)
from groupcheck.impl.types import Assignment, RebalanceProtocol, TopicPartition

from helpers.consumer import COOPERATIVE, EAGER, T0, make, names, owned_in, rebalance, reply, take


class Thrower(RebalanceListener):
    def __init__(self, *failing: str, exc: type[Exception] = ValueError) -> None:
        self.failing = failing
        self.exc = exc

    def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
        if "revoked" in self.failing:
            raise self.exc("revoked failed")

    def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
        if "assigned" in self.failing:
            raise self.exc("assigned failed")


# -- errors: lost versus revoked ------------------------------------------------------------


@pytest.mark.parametrize("error, member_after", [
    (Errors.ILLEGAL_GENERATION, "m1"),            # KAFKA-13419: member id kept
    (Errors.UNKNOWN_MEMBER_ID, ""),
])
@pytest.mark.parametrize("protocol", [EAGER, COOPERATIVE])
def test_heartbeat_reset_errors_make_the_next_join_report_partitions_lost(
        error: Errors, member_after: str, protocol: RebalanceProtocol) -> None:
    c = make(protocol)
    rebalance(c, 1, T0)
    c.advance(3000)
    reply(c, take(c, HeartbeatRequest), HeartbeatResponse(error))
    assert (c.generation, c.member_id, c.state) == (-1, member_after, MemberState.UNJOINED)
    c.poll(3000)
    join = take(c, JoinGroupRequest)
    assert isinstance(join.message, JoinGroupRequest)
    assert join.message.member_id == member_after
    assert owned_in(join) == ([], -1)
    assert names(c)[-1] == f"on_partitions_lost:{T0}"
    assert c.callback_log[-1].generation == -1


@pytest.mark.parametrize("error, member_after", [
    (Errors.ILLEGAL_GENERATION, "m1"), (Errors.UNKNOWN_MEMBER_ID, "")])
def test_sync_reset_errors_reset_the_generation(error: Errors, member_after: str) -> None:
    c = make(COOPERATIVE)
    rebalance(c, 1, T0)
    c.subscribe(["t", "u"])
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(Errors.NONE, 2, "stub", "l", "m1"))
    reply(c, take(c, SyncGroupRequest), SyncGroupResponse(error))
    assert (c.generation, c.member_id) == (-1, member_after)
    c.poll(0)
    assert names(c)[-1] == f"on_partitions_lost:{T0}"       # KAFKA-12983: prepare re-armed


def test_sync_rebalance_in_progress_keeps_the_joined_generation() -> None:
    """KAFKA-13419's race: the member rejoins at the generation of its JoinGroup, with the
    partitions it still owns, and onJoinPrepare does not run twice."""
    c = make(COOPERATIVE)
    rebalance(c, 1, T0)
    c.subscribe(["t", "u"])
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(Errors.NONE, 2, "stub", "l", "m1"))
    reply(c, take(c, SyncGroupRequest), SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
    assert c.state is MemberState.PREPARING_REBALANCE
    logged = len(c.callback_log)
    c.poll(0)
    assert owned_in(take(c, JoinGroupRequest)) == (T0, 2)
    assert len(c.callback_log) == logged


def test_reset_errors_are_ignored_once_the_generation_moved_on() -> None:
    c = make()
    rebalance(c, 1, T0)
    c.advance(3000)
    stale = take(c, HeartbeatRequest)
    c.subscribe(["t", "u"])
    rebalance(c, 2, T0, now=3000)
    reply(c, stale, HeartbeatResponse(Errors.UNKNOWN_MEMBER_ID), 3000)
    assert (c.generation, c.member_id, c.state) == (2, "m1", MemberState.STABLE)


def test_join_unknown_member_resets_and_reruns_prepare() -> None:
    c = make(COOPERATIVE)
    rebalance(c, 1, T0)
    c.subscribe(["t", "u"])
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID))
    assert (c.generation, c.member_id) == (-1, "")
    c.poll(0)
    assert owned_in(take(c, JoinGroupRequest)) == ([], -1)
    assert names(c)[-1] == f"on_partitions_lost:{T0}"


def test_a_fenced_instance_id_on_join_surfaces_from_every_poll() -> None:
    """KIP-345: another consumer holds the instance id; this one never joins again."""
    c = make()
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(Errors.FENCED_INSTANCE_ID))
    for _ in range(2):
        with pytest.raises(ConsumerError) as info:
            c.poll(0)
        assert (info.value.kafka_class, info.value.error) == (
            "FencedInstanceIdException", Errors.FENCED_INSTANCE_ID)
    assert c.state is MemberState.FATAL
    c.close()
    assert c.state is MemberState.CLOSED


@pytest.mark.parametrize("error, kafka_class", [
    (Errors.INCONSISTENT_GROUP_PROTOCOL, "InconsistentGroupProtocolException"),
    (Errors.GROUP_MAX_SIZE_REACHED, "GroupMaxSizeReachedException"),
    (Errors.INVALID_SESSION_TIMEOUT, "InvalidSessionTimeoutException"),
])
def test_a_refused_join_is_raised_once_and_the_next_poll_joins_again(
        error: Errors, kafka_class: str) -> None:
    """AbstractCoordinator's joinGroupIfNeeded rethrows the refusal with the rejoin still
    needed: a member refused while the group cannot take it gets in once it can."""
    c = make()
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(error))
    with pytest.raises(ConsumerError) as info:
        c.poll(0)
    assert (info.value.kafka_class, info.value.error) == (kafka_class, error)
    c.poll(RETRY_BACKOFF_MS - 1)  # a round trip away at least: retry.backoff.ms
    assert not any(isinstance(e.message, JoinGroupRequest) for e in c.outbox())
    c.poll(RETRY_BACKOFF_MS)
    assert take(c, JoinGroupRequest) is not None
    assert c.state is MemberState.PREPARING_REBALANCE


def test_fenced_static_member_heartbeat_is_fatal_and_close_reports_lost() -> None:
    c = make(group_instance_id="i1")
    rebalance(c, 1, T0)
    c.advance(3000)
    reply(c, take(c, HeartbeatRequest), HeartbeatResponse(Errors.FENCED_INSTANCE_ID))
    assert (c.generation, c.member_id) == (-1, "")
    with pytest.raises(ConsumerError, match="FENCED"):
        c.poll(3000)
    c.close()
    assert names(c)[-1] == f"on_partitions_lost:{T0}"
    assert not c.outbox()                           # static members never send LeaveGroup


def test_poll_timeout_leaves_the_group_and_the_next_poll_loses_partitions() -> None:
    c = make(max_poll_interval_ms=10_000)
    rebalance(c, 1, T0)
    c.advance(10_001)
    leave = take(c, LeaveGroupRequest)
    assert leave.message == LeaveGroupRequest((("m1", None),), "consumer poll timeout has expired.")
    assert (c.generation, c.member_id, c.state) == (-1, "", MemberState.UNJOINED)
    c.poll(10_002)
    assert names(c)[-1] == f"on_partitions_lost:{T0}"


def test_an_unanswered_join_is_retried_after_its_timeout() -> None:
    c = make(rebalance_timeout_ms=1000, request_timeout_ms=1000)
    c.poll(0)
    lost = take(c, JoinGroupRequest)
    c.poll(5999)
    assert not c.outbox()
    c.poll(6000)
    assert take(c, JoinGroupRequest)
    reply(c, lost, JoinGroupResponse(Errors.NONE, 1, "stub", "l", "m1"))   # late: ignored
    assert c.state is MemberState.PREPARING_REBALANCE


def test_events_a_state_cannot_handle_raise_naming_the_state() -> None:
    c = make()
    c.close()
    with pytest.raises(ConsumerStateError, match="CLOSED"):
        c.poll(0)
    c2 = make()
    with pytest.raises(ConsumerStateError, match="unknown request 7 in state UNJOINED"):
        c2.receive(Envelope("c1", 7, HeartbeatResponse(Errors.NONE)), 0)
    c2.poll(0)
    join = take(c2, JoinGroupRequest)
    with pytest.raises(ConsumerStateError, match="SyncGroupResponse answering JoinGroupRequest"):
        reply(c2, join, SyncGroupResponse(Errors.NONE))


# -- callbacks that throw -------------------------------------------------------------------


def test_callback_exceptions_do_not_stop_the_rebalance_and_the_first_is_raised() -> None:
    listener = Thrower("assigned", "revoked")
    c = make(COOPERATIVE, listener=listener)
    with pytest.raises(ConsumerError, match="User rebalance callback") as info:
        rebalance(c, 1, [("t", 0), ("t", 1)])
    assert isinstance(info.value.__cause__, ValueError)
    assert c.owned_partitions == {("t", 0), ("t", 1)}           # applied regardless
    c.subscribe(["t", "u"])
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(Errors.NONE, 2, "stub", "l", "m1"))
    reply(c, take(c, SyncGroupRequest), SyncGroupResponse(
        Errors.NONE, encode_assignment(Assignment([("t", 1), ("t", 2)]))))
    with pytest.raises(ConsumerError) as info:
        c.poll(0)
    assert str(info.value.__cause__) == "assigned failed"       # kip: assigned runs first
    assert [x.name for x in c.callback_log[-2:]] == ["on_partitions_assigned",
                                                     "on_partitions_revoked"]
    assert all(x.error for x in c.callback_log[-2:])
    assert c.owned_partitions == {("t", 1), ("t", 2)}
    c.poll(0)                                                   # raised once only


def test_a_kafka_exception_from_a_callback_is_raised_as_it_is() -> None:
    class Fatal(ConsumerError):
        def __init__(self, message: str) -> None:
            super().__init__(message, kafka_class="CommitFailedException")

    c = make(listener=Thrower("assigned", exc=Fatal))
    with pytest.raises(Fatal):
        rebalance(c, 1, [("t", 0)])


def test_callbacks_may_pause_but_not_poll() -> None:
    seen: list[Exception] = []

    class Reentrant(RebalanceListener):
        def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
            c.pause(partitions)
            try:
                c.poll(0)
            except ConsumerStateError as exc:
                seen.append(exc)

    c = make(listener=Reentrant())
    rebalance(c, 1, [("t", 0)])
    assert c.paused == {("t", 0)} and len(seen) == 1


# -- KIP-70 subscribe / unsubscribe ----------------------------------------------------------


def test_subscribe_keeps_the_assignment_until_the_next_rebalance() -> None:
    c = make()
    rebalance(c, 1, [("t", 0)])
    c.deliver([Record("t", 0, 5), Record("u", 0, 1)])
    c.subscribe(["u"])
    assert c.owned_partitions == {("t", 0)}            # unchanged
    assert c.buffered == (Record("u", 0, 1),)           # records of t dropped
    assert c.joined_subscription == {"t"}
    c.poll(0)
    assert take(c, JoinGroupRequest) and names(c)[-1] == "on_partitions_revoked:[('t', 0)]"


def test_unsubscribe_commits_revokes_leaves_and_resets() -> None:
    c = make()
    rebalance(c, 1, T0)
    c.deliver([Record("t", 1, 41)])
    assert [r.offset for r in c.poll(0).records] == [41]
    c.unsubscribe()
    assert [(x.reason, x.generation, x.offsets) for x in c.commit_log] == [
        ("unsubscribe", 1, ((("t", 1), 42),))]
    assert names(c)[-1] == f"on_partitions_revoked:{T0}"
    assert take(c, LeaveGroupRequest).message == LeaveGroupRequest(
        (("m1", None),), "the consumer unsubscribe")
    assert (c.generation, c.member_id, c.state) == (-1, "", MemberState.UNJOINED)
    assert c.owned_partitions == frozenset() and c.subscription == frozenset()
    c.poll(0)
    assert not c.outbox()                               # nothing to join


def test_unsubscribe_during_a_rebalance_or_after_a_reset_reports_lost() -> None:
    c = make(COOPERATIVE)
    rebalance(c, 1, T0)
    c.subscribe(["t", "u"])
    c.poll(0)                                           # JoinGroup in flight
    c.unsubscribe()
    assert names(c)[-1] == f"on_partitions_lost:{T0}" and c.commit_log == []
    c2 = make()
    c2.unsubscribe()                                    # owned nothing: no callback
    assert c2.callback_log == ()


def test_static_members_do_not_send_leave_group() -> None:
    c = make(group_instance_id="i1")
    rebalance(c, 1, T0)
    c.unsubscribe()
    assert not [e for e in c.outbox() if isinstance(e.message, LeaveGroupRequest)]
    assert (c.generation, c.member_id) == (-1, "")


def test_unsubscribe_raises_a_callback_exception_after_leaving() -> None:
    c = make(listener=Thrower("revoked"))
    rebalance(c, 1, T0)
    with pytest.raises(ConsumerError):
        c.unsubscribe()
    assert c.state is MemberState.UNJOINED and c.owned_partitions == frozenset()
