"""The consumer's membership logic (invariants I6–I9) across rebalances that go through,
driven by hand-made responses: how it is configured, how it joins as follower or leader,
what onJoinPrepare and onJoinComplete do (revocation, auto-commit, the callbacks each
profile runs, and in which order), and how pauses and the fetch buffer follow a rebalance."""

from __future__ import annotations

import pytest

from groupcheck.impl.assignors.range import RangeAssignor
from groupcheck.impl.consumer import Consumer
from groupcheck.impl.consumer_fetch import Record
from groupcheck.impl.consumer_listener import ConsumerConfigError, ConsumerError, ConsumerStateError
from groupcheck.impl.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from groupcheck.impl.consumer_state import MemberState
from groupcheck.impl.errors import AssignorError
from groupcheck.impl.group_messages import (
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupMember,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from groupcheck.impl.types import Assignment, Cluster, RebalanceProtocol, Subscription

from helpers.consumer import (
    COOPERATIVE,
    EAGER,
    T0,
    StubAssignor,
    make,
    names,
    owned_in,
    rebalance,
    reply,
    take,
)

# -- construction ---------------------------------------------------------------------------


def test_protocol_is_the_highest_all_assignors_support() -> None:
    coop = StubAssignor("coop", (COOPERATIVE, EAGER))
    assert Consumer("c", [StubAssignor(), coop]).protocol is EAGER
    assert Consumer("c", [coop]).protocol is COOPERATIVE
    with pytest.raises(ConsumerConfigError):
        Consumer("c", [StubAssignor("a", (EAGER,)), StubAssignor("b", (COOPERATIVE,))])
    with pytest.raises(ConsumerConfigError):
        Consumer("c", [])
    with pytest.raises(ConsumerConfigError):
        Consumer("c", [coop], profile="rdkafka")


# -- joining --------------------------------------------------------------------------------


def test_eager_join_as_follower_adopts_member_id_and_assignment() -> None:
    assignor = StubAssignor(user_data=b"\xab")
    c = Consumer("c1", [assignor, StubAssignor("other")], rack="r1")
    c.subscribe(["t", "u"])
    c.poll(0)
    first = take(c, JoinGroupRequest)
    assert isinstance(first.message, JoinGroupRequest)
    assert [name for name, _ in first.message.protocols] == ["stub", "other"]
    sub = decode_subscription(first.message.protocols[0][1])
    assert (sub.topics, sub.user_data, sub.owned_partitions) == (["t", "u"], b"\xab", [])
    assert (sub.generation_id, sub.rack_id, first.message.member_id) == (-1, "r1", "")
    reply(c, first, JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id="c1-x"))
    assert (c.member_id, c.generation, c.state) == ("c1-x", -1, MemberState.PREPARING_REBALANCE)
    c.poll(0)
    second = take(c, JoinGroupRequest)
    assert isinstance(second.message, JoinGroupRequest)
    assert second.message.member_id == "c1-x"
    reply(c, second, JoinGroupResponse(Errors.NONE, 1, "stub", "someone", "c1-x"))
    sync = take(c, SyncGroupRequest)
    assert sync.message == SyncGroupRequest("c1-x", 1, None, "stub", ())
    reply(c, sync, SyncGroupResponse(Errors.NONE, encode_assignment(Assignment([("t", 1)]))))
    assert c.state is MemberState.STABLE and c.owned_partitions == frozenset()
    c.poll(0)
    assert c.owned_partitions == {("t", 1)}
    assert names(c) == ["on_partitions_assigned:[('t', 1)]"]   # first join: no revoke
    assert assignor.seen == [([("t", 1)], 1)]


def test_eager_join_as_leader_runs_the_selected_assignor() -> None:
    cluster = Cluster({"t0": 3, "t1": 3})
    c = Consumer("C0", [RangeAssignor()], cluster=cluster)
    c.subscribe(["t0", "t1"])
    c.poll(0)
    join = take(c, JoinGroupRequest)
    assert isinstance(join.message, JoinGroupRequest)
    mine = join.message.protocols[0][1]
    other = encode_subscription(Subscription(["t0", "t1"]))
    members = (JoinGroupMember("C0", None, mine), JoinGroupMember("C1", None, other))
    reply(c, join, JoinGroupResponse(Errors.NONE, 1, "range", "C0", "C0", members))
    assert c.is_leader
    sync = take(c, SyncGroupRequest)
    assert isinstance(sync.message, SyncGroupRequest)
    got = {m: decode_assignment(b).to_api().partitions for m, b in sync.message.assignments}
    assert sorted(got["C0"]) == [("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)]
    assert sorted(got["C1"]) == [("t0", 2), ("t1", 2)]


def test_static_leader_told_to_skip_assignment_sends_an_empty_sync() -> None:
    """KIP-814: the coordinator already holds the assignment; the leader must not recompute."""
    assignor = StubAssignor(plan={"m1": [("t", 0)]})
    c = Consumer("c1", [assignor], group_instance_id="i1")
    c.subscribe(["t"])
    c.poll(0)
    reply(c, take(c, JoinGroupRequest),
          JoinGroupResponse(Errors.NONE, 4, "stub", "m1", "m1", (), skip_assignment=True))
    assert take(c, SyncGroupRequest).message == SyncGroupRequest("m1", 4, "i1", "stub", ())


def test_a_consumer_with_no_subscription_polls_quietly() -> None:
    c = Consumer("c1", [StubAssignor()])
    assert c.poll(0).records == [] and not c.outbox()
    assert c.state is MemberState.UNJOINED


def test_leader_rejoins_when_partition_counts_change() -> None:
    c = Consumer("C0", [RangeAssignor()], cluster=Cluster({"t": 2}))
    c.subscribe(["t"])
    c.poll(0)
    join = take(c, JoinGroupRequest)
    assert isinstance(join.message, JoinGroupRequest)
    members = (JoinGroupMember("C0", None, join.message.protocols[0][1]),)
    reply(c, join, JoinGroupResponse(Errors.NONE, 1, "range", "C0", "C0", members))
    sync = take(c, SyncGroupRequest)
    assert isinstance(sync.message, SyncGroupRequest)
    reply(c, sync, SyncGroupResponse(Errors.NONE, sync.message.assignments[0][1]))
    c.poll(0)
    assert c.owned_partitions == {("t", 0), ("t", 1)} and not c.outbox()
    c.update_metadata(Cluster({"t": 3}))
    c.poll(0)
    assert take(c, JoinGroupRequest)


def test_leader_raises_a_cooperative_assignor_violation_from_poll_and_rejoins() -> None:
    bad = StubAssignor("bad", (COOPERATIVE,), plan={"B": [("t", 0)]})
    c = Consumer("A", [bad], cluster=Cluster({"t": 1}))
    c.subscribe(["t"])
    c.poll(0)
    join = take(c, JoinGroupRequest)
    a_owns = encode_subscription(Subscription(["t"], owned_partitions=[("t", 0)],
                                              generation_id=1))
    members = (JoinGroupMember("A", None, a_owns),
               JoinGroupMember("B", None, encode_subscription(Subscription(["t"]))))
    reply(c, join, JoinGroupResponse(Errors.NONE, 2, "bad", "A", "A", members))
    assert not [e for e in c.outbox() if isinstance(e.message, SyncGroupRequest)]
    with pytest.raises(AssignorError, match="COOPERATIVE"):
        c.poll(0)
    c.poll(0)
    assert take(c, JoinGroupRequest)


# -- onJoinPrepare / onJoinComplete ---------------------------------------------------------


def test_eager_rebalance_revokes_everything_and_joins_with_no_owned_partitions() -> None:
    c = make()
    rebalance(c, 1, T0)
    hb_at = 3000
    c.advance(hb_at)
    hb = take(c, HeartbeatRequest)
    assert hb.message == HeartbeatRequest("m1", 1, None)
    reply(c, hb, HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS), hb_at)
    assert (c.generation, c.owned_partitions) == (1, frozenset(T0))   # kept until poll
    c.poll(hb_at)
    join = take(c, JoinGroupRequest)
    assert owned_in(join) == ([], 1)
    assert names(c)[-1] == f"on_partitions_revoked:{T0}"
    assert c.owned_partitions == frozenset() and c.state is MemberState.PREPARING_REBALANCE


def test_join_prepare_auto_commits_only_while_stable() -> None:
    c = make()
    rebalance(c, 1, T0)
    c.deliver([Record("t", 0, 9)])
    c.poll(0)
    c.subscribe(["t", "u"])
    c.poll(0)
    assert [(x.reason, x.generation, x.offsets) for x in c.commit_log] == [
        ("on_join_prepare", 1, ((("t", 0), 10),))]
    with pytest.raises(ConsumerError) as info:
        c.commit()
    assert info.value.kafka_class == "RebalanceInProgressException"
    quiet = make(auto_commit=False)
    rebalance(quiet, 1, T0)
    quiet.deliver([Record("t", 0, 9)])
    quiet.poll(0)
    quiet.subscribe(["t", "u"])
    quiet.poll(0)
    assert quiet.commit_log == []


def test_cooperative_revocation_takes_two_rounds() -> None:
    c = make(COOPERATIVE)
    rebalance(c, 1, T0)
    c.advance(3000)
    reply(c, take(c, HeartbeatRequest), HeartbeatResponse(Errors.REBALANCE_IN_PROGRESS))
    c.poll(3000)
    join = take(c, JoinGroupRequest)
    assert owned_in(join) == (T0, 1)              # nothing revoked up front
    reply(c, join, JoinGroupResponse(Errors.NONE, 2, "stub", "leader", "m1"))
    sync = take(c, SyncGroupRequest)
    reply(c, sync, SyncGroupResponse(Errors.NONE, encode_assignment(Assignment([("t", 0)]))))
    ran = [f"{x.name}:{list(x.partitions)}" for x in c.poll(3000).callbacks]
    assert ran == ["on_partitions_revoked:[('t', 1), ('t', 2)]"]
    assert c.owned_partitions == {("t", 0)}
    follow_up = take(c, JoinGroupRequest)           # revoked something: rejoin at once
    assert owned_in(follow_up) == ([("t", 0)], 2)
    assert rebalance(c, 3, [("t", 0)], join=follow_up) == []   # kip: nothing added, nothing run
    assert c.state is MemberState.STABLE and not c.outbox()


@pytest.mark.parametrize("profile, expected", [
    ("kip", ["on_partitions_assigned:[('t', 2)]", "on_partitions_revoked:[('t', 0)]"]),
    ("java", ["on_partitions_revoked:[('t', 0)]", "on_partitions_assigned:[('t', 2)]"]),
])
def test_cooperative_callback_order_follows_the_profile(profile: str,
                                                         expected: list[str]) -> None:
    c = make(COOPERATIVE, profile)
    rebalance(c, 1, [("t", 0), ("t", 1)])
    c.subscribe(["t", "u"])                       # KIP-70: triggers the next rebalance
    assert rebalance(c, 2, [("t", 1), ("t", 2)]) == expected
    assert c.owned_partitions == {("t", 1), ("t", 2)}


@pytest.mark.parametrize("profile, expected", [
    ("kip", ["on_partitions_assigned:[('t', 0)]", "on_partitions_revoked:[('t', 0)]"]),
    ("java", ["on_partitions_assigned:[('t', 0)]", "on_partitions_revoked:[('t', 0)]",
              "on_partitions_assigned:[]", "on_partitions_revoked:[]",
              "on_partitions_assigned:[]"]),
])
def test_empty_callback_sets_follow_the_profile(profile: str, expected: list[str]) -> None:
    """kip: empty sets are not invoked (KIP-429); java: assigned always, and eager revoked
    on every rejoin of a valid generation. A first join (generation -1) invokes neither."""
    c = make(profile=profile)
    rebalance(c, 1, [("t", 0)])
    c.subscribe(["t", "u"])
    rebalance(c, 2, [])
    c.subscribe(["t"])
    rebalance(c, 3, [])
    assert names(c) == expected


def test_assignment_outside_the_subscription_is_not_adopted_and_rejoins() -> None:
    """KAFKA-7961: subscribe() raced the rebalance; no callback, no change, rejoin."""
    c = make(COOPERATIVE)
    rebalance(c, 1, [("t", 0)])
    c.subscribe(["u"])
    c.poll(0)
    join = take(c, JoinGroupRequest)
    assert names(c)[-1] == "on_partitions_revoked:[('t', 0)]"     # t no longer subscribed
    reply(c, join, JoinGroupResponse(Errors.NONE, 2, "stub", "leader", "m1"))
    reply(c, take(c, SyncGroupRequest),
          SyncGroupResponse(Errors.NONE, encode_assignment(Assignment([("t", 1)]))))
    before = len(c.callback_log)
    c.poll(0)
    assert len(c.callback_log) == before and c.owned_partitions == frozenset()
    assert c.generation == 2
    assert take(c, JoinGroupRequest)


# -- pauses and the fetch buffer -------------------------------------------------------------


@pytest.mark.parametrize("protocol, profile, kept", [
    (EAGER, "kip", True), (COOPERATIVE, "kip", True),          # KIP-822
    (EAGER, "java", False), (COOPERATIVE, "java", True),       # KAFKA-13425
])
def test_pause_across_a_rebalance_follows_the_profile(
        protocol: RebalanceProtocol, profile: str, kept: bool) -> None:
    c = make(protocol, profile)
    rebalance(c, 1, [("t", 0), ("t", 1)])
    c.pause([("t", 0), ("t", 1)])
    c.subscribe(["t", "u"])
    rebalance(c, 2, [("t", 0)] if protocol is EAGER else [("t", 0)])
    if protocol is COOPERATIVE:
        rebalance(c, 3, [("t", 0), ("t", 2)])
    assert c.paused == ({("t", 0)} if kept else set())         # t-1 left: its mark is gone
    c.deliver([Record("t", 0, 1), Record("t", 1, 1), Record("t", 2, 1)])
    got = [(r.topic, r.partition) for r in c.poll(0).records]
    assert ("t", 1) not in got and (("t", 0) in got) is not kept


def test_poll_returns_records_of_assigned_unpaused_partitions_only() -> None:
    c = make()
    rebalance(c, 1, [("t", 0), ("t", 1)])
    c.pause([("t", 1)])
    c.deliver([Record("t", 0, 1), Record("t", 1, 1), Record("t", 9, 1), Record("t", 0, 2)])
    assert [(r.partition, r.offset) for r in c.poll(0).records] == [(0, 1), (0, 2)]
    assert c.buffered == (Record("t", 1, 1),)                 # kept while paused
    c.resume([("t", 1)])
    assert [(r.partition, r.offset) for r in c.poll(0).records] == [(1, 1)]
    with pytest.raises(ConsumerStateError, match="No current assignment"):
        c.pause([("t", 9)])


def test_records_of_revoked_partitions_are_never_returned() -> None:
    c = make(COOPERATIVE)
    rebalance(c, 1, T0)
    c.deliver([Record("t", 2, 7)])
    c.subscribe(["t", "u"])
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(Errors.NONE, 2, "stub", "l", "m1"))
    reply(c, take(c, SyncGroupRequest), SyncGroupResponse(
        Errors.NONE, encode_assignment(Assignment([("t", 0), ("t", 1)]))))
    assert c.poll(0).records == []
