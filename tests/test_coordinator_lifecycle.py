"""The classic group coordinator (impl/coordinator*.py) against Kafka's rules once members
have joined: generations, timeouts and expiry, heartbeats and the order of error checks,
static members, leaving, and the state transition table.

Each test drives one `GroupCoordinator` through a small in-memory network (`Net`, in
helpers/coordinator.py) on a logical clock and checks the responses and the read-only view.
"""

from __future__ import annotations

import pytest

from groupcheck.impl.coordinator_group import ClassicGroup
from groupcheck.impl.coordinator_state import (
    GroupEvent,
    GroupState,
    IllegalTransitionError,
    next_state,
)
from groupcheck.impl.group_messages import (
    Errors,
    HeartbeatRequest,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
)

from helpers.coordinator import (
    REBALANCE,
    SESSION,
    Net,
    first_join,
    join_req,
    stable_group,
    static_group,
)

# -- generations, timeouts and expiry -------------------------------------------------------


def test_generation_bumps_even_when_the_group_becomes_empty() -> None:
    net = Net()
    ids = stable_group(net, ["c1"])
    net.send("c1", LeaveGroupRequest(((ids["c1"], None),)))
    assert net.error("c1") is Errors.NONE
    assert net.coord.state is GroupState.EMPTY
    assert net.coord.generation_id == 2
    assert net.coord.protocol_name is None and net.coord.leader_id is None


def test_member_that_does_not_sync_within_rebalance_timeout_is_removed() -> None:
    net = Net()
    ids = {c: first_join(net, c) for c in ("c1", "c2")}
    net.tick(6000)
    net.take("c1"), net.take("c2")
    completed_at = net.now
    net.send("c1", SyncGroupRequest(ids["c1"], 1, assignments=((ids["c1"], b"x"),)))
    assert net.sync_response("c1").error is Errors.NONE
    assert net.coord.state is GroupState.STABLE
    while net.now - completed_at < REBALANCE - 1:  # c2 heartbeats but never syncs
        net.tick(min(5000, REBALANCE - 1 - (net.now - completed_at)))
        for c in ("c1", "c2"):
            net.send(c, HeartbeatRequest(ids[c], 1))
            assert net.error(c) is Errors.NONE
    assert ids["c2"] in net.coord.members
    net.tick(1)
    assert ids["c2"] not in net.coord.members
    assert net.coord.state is GroupState.PREPARING_REBALANCE


def test_sync_timeout_with_nobody_synced_empties_the_group() -> None:
    net = Net()
    first_join(net, "c1")
    net.tick(3000)
    net.take("c1")
    net.tick(REBALANCE)
    assert net.coord.state is GroupState.EMPTY
    assert net.coord.generation_id == 2


def test_session_expiry_removes_member_and_starts_a_rebalance() -> None:
    net = Net()
    ids = stable_group(net, ["c1", "c2"])
    for _ in range(3):
        net.tick(SESSION // 2)
        net.send("c1", HeartbeatRequest(ids["c1"], 1))
        assert net.error("c1") in (Errors.NONE, Errors.REBALANCE_IN_PROGRESS)
    assert ids["c2"] not in net.coord.members
    assert net.coord.state is GroupState.PREPARING_REBALANCE
    net.send("c1", HeartbeatRequest(ids["c1"], 1))
    assert net.error("c1") is Errors.REBALANCE_IN_PROGRESS
    net.send("c1", join_req("c1", ids["c1"]))
    resp = net.join_response("c1")
    assert resp.generation_id == 2 and [m.member_id for m in resp.members] == [ids["c1"]]


def test_member_parked_in_sync_is_exempt_from_session_expiry() -> None:
    net = Net()
    ids = {c: first_join(net, c) for c in ("c1", "c2")}
    net.tick(6000)
    net.take("c1"), net.take("c2")
    net.send("c2", SyncGroupRequest(ids["c2"], 1))  # parked; the leader is slow
    net.tick(SESSION + 1)
    assert ids["c2"] in net.coord.members
    assert ids["c1"] not in net.coord.members  # the leader sent nothing: expired


def test_new_member_join_times_out_after_five_minutes() -> None:
    net = Net()
    ids = stable_group(net, ["c1"], rebalance_ms=600_000)
    c2 = first_join(net, "c2", rebalance_ms=600_000)  # triggers a rebalance c1 ignores
    for _ in range(300_000 // 5000):
        net.tick(5000)
        net.send("c1", HeartbeatRequest(ids["c1"], 1))
        net.take("c1")
    joined = net.join_response("c2")
    assert (joined.error, joined.member_id) == (Errors.UNKNOWN_MEMBER_ID, "")
    assert c2 not in net.coord.members


# -- heartbeat and error ordering -----------------------------------------------------------


def test_heartbeat_errors_per_state() -> None:
    net = Net()
    net.send("x", HeartbeatRequest("nobody", 0))
    assert net.error("x") is Errors.UNKNOWN_MEMBER_ID  # Empty
    m1 = first_join(net, "c1")
    net.send("c1", HeartbeatRequest(m1, 0))
    assert net.error("c1") is Errors.REBALANCE_IN_PROGRESS  # Preparing
    net.tick(3000)
    net.take("c1")
    net.send("c1", HeartbeatRequest(m1, 1))
    assert net.error("c1") is Errors.NONE  # Completing
    net.send("c1", SyncGroupRequest(m1, 1, assignments=((m1, b""),)))
    net.take("c1")
    net.send("c1", HeartbeatRequest(m1, 1))
    assert net.error("c1") is Errors.NONE  # Stable
    net.coord.unload(net.now)
    net.send("c1", HeartbeatRequest(m1, 1))
    assert net.error("c1") is Errors.COORDINATOR_NOT_AVAILABLE  # Dead


@pytest.mark.parametrize("kind", ["sync", "heartbeat"])
def test_member_check_comes_before_generation_check(kind: str) -> None:
    net = Net()
    ids = static_group(net)

    def send(member_id: str, generation: int, instance: str | None = None) -> Errors:
        if kind == "sync":
            net.send("s1", SyncGroupRequest(member_id, generation, instance))
        else:
            net.send("s1", HeartbeatRequest(member_id, generation, instance))
        return net.error("s1")

    assert send("ghost", 99) is Errors.UNKNOWN_MEMBER_ID
    assert send("ghost", 99, "i1") is Errors.FENCED_INSTANCE_ID
    assert send(ids["s2"], 99, "i1") is Errors.FENCED_INSTANCE_ID
    assert send(ids["s1"], 99, "unknown-instance") is Errors.UNKNOWN_MEMBER_ID
    assert send(ids["s1"], 99, "i1") is Errors.ILLEGAL_GENERATION
    assert send(ids["s1"], 99) is Errors.ILLEGAL_GENERATION
    assert send(ids["s1"], 1, "i1") is Errors.NONE


# -- static members (KIP-345) ---------------------------------------------------------------


def test_static_member_rejoin_replaces_member_id_without_rebalance() -> None:
    net = Net()
    ids = static_group(net)
    net.send("s2b", join_req("s2b", instance="i2"))
    resp = net.join_response("s2b")
    assert resp.error is Errors.NONE and resp.member_id != ids["s2"]
    assert (resp.generation_id, resp.leader, resp.skip_assignment) == (1, ids["s1"], False)
    assert net.coord.state is GroupState.STABLE and net.coord.generation_id == 1
    assert net.coord.assignments[resp.member_id] == b"a2"  # the assignment moves along
    net.send("s2", HeartbeatRequest(ids["s2"], 1, "i2"))
    assert net.error("s2") is Errors.FENCED_INSTANCE_ID
    net.send("s2b", SyncGroupRequest(resp.member_id, 1, "i2"))
    assert net.sync_response("s2b").assignment == b"a2"


def test_static_leader_rejoin_gets_member_list_with_skip_assignment() -> None:
    """KIP-814: the new leader id learns it leads, but must not compute an assignment."""
    net = Net()
    ids = static_group(net)
    net.send("s1b", join_req("s1b", instance="i1"))
    resp = net.join_response("s1b")
    assert resp.skip_assignment and resp.leader == resp.member_id == net.coord.leader_id
    assert {m.member_id for m in resp.members} == {resp.member_id, ids["s2"]}
    assert net.coord.state is GroupState.STABLE


def test_static_rejoin_that_changes_the_selected_protocol_rebalances() -> None:
    net = Net()
    static_group(net, protocols=(("range", b""), ("roundrobin", b"")))
    assert net.coord.protocol_name == "range"
    net.send("s2b", join_req("s2b", instance="i2", protocols=(("roundrobin", b""),)))
    assert net.take("s2b") == []  # parked: roundrobin is now the only candidate
    assert net.coord.state is GroupState.PREPARING_REBALANCE


def test_static_member_replacement_fences_parked_sync_and_rebalances() -> None:
    net = Net()
    for c, inst in (("s1", "i1"), ("s2", "i2")):
        net.send(c, join_req(c, instance=inst))
    net.tick(6000)
    s2 = net.join_response("s2").member_id
    net.take("s1")
    net.send("s2", SyncGroupRequest(s2, 1, "i2"))  # parked: leader not synced yet
    net.send("s2b", join_req("s2b", instance="i2"))
    assert net.error("s2") is Errors.FENCED_INSTANCE_ID
    assert net.coord.state is GroupState.PREPARING_REBALANCE


# -- leave ----------------------------------------------------------------------------------


def test_leave_by_member_id_rebalances_the_rest() -> None:
    net = Net()
    ids = stable_group(net, ["c1", "c2"])
    net.send("c2", LeaveGroupRequest(((ids["c2"], None),)))
    resp = net.one("c2")
    assert isinstance(resp, LeaveGroupResponse)
    assert resp.member_errors == ((ids["c2"], None, Errors.NONE),)
    assert net.coord.state is GroupState.PREPARING_REBALANCE
    assert set(net.coord.members) == {ids["c1"]}
    net.send("c2", LeaveGroupRequest(((ids["c2"], None),)))
    resp = net.one("c2")
    assert isinstance(resp, LeaveGroupResponse)
    assert resp.member_errors == ((ids["c2"], None, Errors.UNKNOWN_MEMBER_ID),)


def test_leave_by_instance_id_removes_static_member() -> None:
    net = Net()
    ids = static_group(net)
    net.send("admin", LeaveGroupRequest((("", "i2"), ("", "nope"), ("wrong-id", "i1"))))
    resp = net.one("admin")
    assert isinstance(resp, LeaveGroupResponse)
    assert [e for _, _, e in resp.member_errors] == [
        Errors.NONE, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID]
    assert set(net.coord.members) == {ids["s1"]}
    assert net.coord.state is GroupState.PREPARING_REBALANCE


# -- the transition table -------------------------------------------------------------------


def test_transition_table_rejects_illegal_event_naming_state_and_event() -> None:
    with pytest.raises(IllegalTransitionError, match="LEADER_SYNCED in state STABLE"):
        next_state("g", GroupState.STABLE, GroupEvent.LEADER_SYNCED)
    group = ClassicGroup("g")
    with pytest.raises(IllegalTransitionError) as info:
        group.transition(GroupEvent.JOIN_COMPLETE)
    assert (info.value.state, info.value.event) == (GroupState.EMPTY, GroupEvent.JOIN_COMPLETE)
    assert "EMPTY" in str(info.value) and "JOIN_COMPLETE" in str(info.value)
    assert group.state is GroupState.EMPTY


def test_unload_answers_parked_joins_and_makes_the_group_dead() -> None:
    net = Net()
    first_join(net, "c1")
    net.tick(10)
    net._collect(net.coord.unload(net.now))
    assert net.coord.state is GroupState.DEAD
    assert net.error("c1") is Errors.NOT_COORDINATOR
    net.send("c2", join_req("c2"))
    assert net.error("c2") is Errors.COORDINATOR_NOT_AVAILABLE
    with pytest.raises(IllegalTransitionError):
        next_state("g", GroupState.DEAD, GroupEvent.PREPARE_REBALANCE)
