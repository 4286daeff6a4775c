"""The consumer's membership logic (invariants I6–I9), driven by hand-made responses,
and a few groups of consumers against the real coordinator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from groupcheck.impl.assignors.range import RangeAssignor
from groupcheck.impl.consumer import Consumer
from groupcheck.impl.consumer_fetch import Record
from groupcheck.impl.consumer_listener import (
    ConsumerConfigError,
    ConsumerError,
    ConsumerStateError,
    RebalanceListener,
)
from groupcheck.impl.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from groupcheck.impl.consumer_state import MemberState
from groupcheck.impl.errors import AssignorError
from groupcheck.impl.group_messages import (
    Envelope,
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupMember,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)
from groupcheck.impl.types import (
    Assignment,
    Cluster,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)

EAGER = RebalanceProtocol.EAGER
COOPERATIVE = RebalanceProtocol.COOPERATIVE
T0 = [("t", 0), ("t", 1), ("t", 2)]


@dataclass
class StubAssignor:
    """Assigns what it is told; remembers on_assignment calls."""

    name: str = "stub"
    supported_protocols: tuple[RebalanceProtocol, ...] = (EAGER,)
    user_data: bytes | None = None
    plan: dict[str, list[TopicPartition]] = field(default_factory=dict)
    seen: list[tuple[list[TopicPartition], int]] = field(default_factory=list)

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        return {m: Assignment(list(self.plan.get(m, []))) for m in subscriptions}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.seen.append((list(assignment.partitions), generation))

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return self.user_data


class CoopAssignor:
    """A small COOPERATIVE assignor: members keep owned partitions up to their quota; a
    partition someone else still owns is withheld for a round (KIP-429's two rounds)."""

    name = "coop-test"
    supported_protocols = (COOPERATIVE, EAGER)

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        members = sorted(subscriptions)
        topics = sorted({t for s in subscriptions.values() for t in s.topics})
        every = [(t, p) for t in topics for p in range(cluster.partitions.get(t, 0))]
        n = len(members)
        quota = {m: len(every) // n + (i < len(every) % n) for i, m in enumerate(members)}
        result: dict[str, list[TopicPartition]] = {m: [] for m in members}
        owned_by_anyone = {tp for s in subscriptions.values() for tp in s.owned_partitions}
        for m in members:
            for tp in sorted(subscriptions[m].owned_partitions):
                if tp in every and len(result[m]) < quota[m]:
                    result[m].append(tp)
        for tp in every:
            if tp not in owned_by_anyone:
                taker = next((m for m in members if len(result[m]) < quota[m]), None)
                if taker is not None:
                    result[taker].append(tp)
        return {m: Assignment(ps) for m, ps in result.items()}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        return None

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return None


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


def make(protocol: RebalanceProtocol = EAGER, profile: str = "kip", **kw: object) -> Consumer:
    protocols = (COOPERATIVE, EAGER) if protocol is COOPERATIVE else (EAGER,)
    c = Consumer("c1", [StubAssignor(supported_protocols=protocols)], profile=profile,
                 **kw)  # type: ignore[arg-type]
    c.subscribe(["t"])
    return c


def take(c: Consumer, kind: type[Request]) -> Envelope:
    """The one request of ``kind`` in the outbox (others are dropped)."""
    found = [e for e in c.outbox() if isinstance(e.message, kind)]
    assert len(found) == 1, found
    return found[0]


def reply(c: Consumer, request: Envelope, response: Response, now: int = 0) -> None:
    c.receive(Envelope(request.client, request.request_id, response), now)


def rebalance(c: Consumer, gen: int, assigned: list[TopicPartition], *, member: str = "m1",
              now: int = 0, protocol: str = "stub", join: Envelope | None = None) -> list[str]:
    """One full rebalance as a follower; returns the callbacks the completing poll ran.
    ``join`` is a JoinGroup already taken from the outbox; else one is polled for."""
    if join is None:
        if not any(isinstance(r, JoinGroupRequest) for r in c.in_flight):
            c.poll(now)
        join = take(c, JoinGroupRequest)
    reply(c, join, JoinGroupResponse(Errors.NONE, gen, protocol, "leader", member), now)
    sync = take(c, SyncGroupRequest)
    reply(c, sync, SyncGroupResponse(Errors.NONE, encode_assignment(Assignment(assigned))), now)
    return [f"{x.name}:{list(x.partitions)}" for x in c.poll(now).callbacks]


def owned_in(join: Envelope) -> tuple[list[TopicPartition], int]:
    assert isinstance(join.message, JoinGroupRequest)
    data = decode_subscription(join.message.protocols[0][1])
    return [(t, p) for t, ps in data.owned_partitions for p in ps], data.generation_id


def names(c: Consumer) -> list[str]:
    return [f"{x.name}:{list(x.partitions)}" for x in c.callback_log]


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


@pytest.mark.parametrize("error, kafka_class", [
    (Errors.INCONSISTENT_GROUP_PROTOCOL, "InconsistentGroupProtocolException"),
    (Errors.GROUP_MAX_SIZE_REACHED, "GroupMaxSizeReachedException"),
    (Errors.FENCED_INSTANCE_ID, "FencedInstanceIdException"),
])
def test_fatal_join_errors_surface_from_every_poll(error: Errors, kafka_class: str) -> None:
    c = make()
    c.poll(0)
    reply(c, take(c, JoinGroupRequest), JoinGroupResponse(error))
    for _ in range(2):
        with pytest.raises(ConsumerError) as info:
            c.poll(0)
        assert (info.value.kafka_class, info.value.error) == (kafka_class, error)
    assert c.state is MemberState.FATAL
    c.close()
    assert c.state is MemberState.CLOSED


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


# -- against the real coordinator ------------------------------------------------------------


def run_group(coordinator: Any, consumers: list[Consumer], rounds: int, start: int = 0) -> int:
    """Poll everyone, send their requests, deliver the responses; 100 ms per round.
    A member that failed fatally keeps raising from poll; that is left to the test."""
    by_name = {c.client_id: c for c in consumers}
    now = start
    for _ in range(rounds):
        now += 100
        responses = coordinator.advance(now)
        for c in consumers:
            try:
                if c.state is not MemberState.CLOSED:
                    c.poll(now)
            except ConsumerError:
                if c.state is not MemberState.FATAL:
                    raise
            for env in c.outbox():
                responses += coordinator.receive(env, now)
        for env in responses:
            if by_name[env.client].state is not MemberState.CLOSED:
                by_name[env.client].receive(env, now)
    return now


def settled(consumers: list[Consumer]) -> bool:
    return all(c.state is MemberState.STABLE and not c.in_flight and not c.outbox()
               for c in consumers)


@pytest.fixture
def coordinator() -> Any:
    from groupcheck.impl.coordinator import GroupCoordinator

    return GroupCoordinator("g", initial_rebalance_delay_ms=0)


def test_three_eager_consumers_share_the_partitions_and_one_leaves(coordinator: Any) -> None:
    cluster = Cluster({"t": 6})
    group = [Consumer(f"c{i}", [RangeAssignor()], cluster=cluster) for i in range(3)]
    for c in group:
        c.subscribe(["t"])
    now = run_group(coordinator, group, 20)
    assert settled(group)
    owned = [c.owned_partitions for c in group]
    assert sorted(len(o) for o in owned) == [2, 2, 2]
    assert frozenset().union(*owned) == {("t", p) for p in range(6)}
    group[0].close()
    run_group(coordinator, group, 20, now)
    rest = group[1:]
    assert settled(rest) and sorted(len(c.owned_partitions) for c in rest) == [3, 3]
    assert {c.generation for c in rest} == {group[1].generation}


def test_cooperative_consumers_never_own_a_partition_twice(coordinator: Any) -> None:
    cluster = Cluster({"t": 4})
    group = [Consumer("a", [CoopAssignor()], cluster=cluster, heartbeat_interval_ms=300)]
    group[0].subscribe(["t"])
    now = run_group(coordinator, group, 10)
    assert group[0].owned_partitions == {("t", p) for p in range(4)}
    group.append(Consumer("b", [CoopAssignor()], cluster=cluster, heartbeat_interval_ms=300))
    group[1].subscribe(["t"])
    for _ in range(40):
        now = run_group(coordinator, group, 1, now)
        a, b = (c.owned_partitions for c in group)
        assert not a & b                                  # I1 at every step
    assert settled(group)
    assert sorted(len(c.owned_partitions) for c in group) == [2, 2]
    revoked = [x for x in group[0].callback_log if x.name == "on_partitions_revoked"]
    assert len(revoked) == 1 and len(revoked[0].partitions) == 2
    assert not any(x.name == "on_partitions_lost" for c in group for x in c.callback_log)


def test_cooperative_sticky_group_grows_without_double_ownership(coordinator: Any) -> None:
    from groupcheck.impl import assignors
    cluster = Cluster({"t": 6, "u": 3})
    group: list[Consumer] = []
    now = 0
    for name in ("a", "b", "c"):
        member = Consumer(name, [assignors.make_assignor("cooperative-sticky")],
                          cluster=cluster, heartbeat_interval_ms=300)
        member.subscribe(["t", "u"])
        group.append(member)
        for _ in range(40):
            now = run_group(coordinator, group, 1, now)
            owned = [c.owned_partitions for c in group]
            assert sum(len(o) for o in owned) == len(frozenset().union(*owned))   # I1
        assert settled(group), name
        sizes = sorted(len(c.owned_partitions) for c in group)
        assert sizes[-1] - sizes[0] <= 1 and sum(sizes) == 9
    assert all(x.name != "on_partitions_lost" for c in group for x in c.callback_log)


def test_kip429_upgrade_needs_two_bounces(coordinator: Any) -> None:
    """[range, cooperative-sticky] runs EAGER with range; bouncing one member to
    [cooperative-sticky] is safe; a member with only [range] next to it is fatal."""
    from groupcheck.impl.assignors import make_assignor

    cluster = Cluster({"t": 4})

    def member(name: str, *strategies: str) -> Consumer:
        c = Consumer(name, [make_assignor(s) for s in strategies], cluster=cluster,
                     heartbeat_interval_ms=300)
        c.subscribe(["t"])
        return c

    group = [member(n, "range", "cooperative-sticky") for n in ("a", "b")]
    now = run_group(coordinator, group, 30)
    assert settled(group) and {c.protocol_name for c in group} == {"range"}
    bounced = group[1]
    bounced.close()
    group[1] = member("b2", "cooperative-sticky")            # first bounce done, second begins
    assert group[1].protocol is COOPERATIVE and group[0].protocol is EAGER
    now = run_group(coordinator, [bounced, *group], 40, now)
    assert settled(group) and {c.protocol_name for c in group} == {"cooperative-sticky"}
    assert sorted(len(c.owned_partitions) for c in group) == [2, 2]
    late = member("old", "range")
    group.append(late)
    run_group(coordinator, group, 10, now)
    assert late.state is MemberState.FATAL
    assert late.fatal_error is not None and late.fatal_error.kafka_class == \
        "InconsistentGroupProtocolException"
