"""The classic group coordinator (impl/coordinator*.py) against Kafka's rules.

Each test drives one `GroupCoordinator` through a small in-memory network (`Net`) on a
logical clock and checks the responses and the read-only view.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcheck.impl.coordinator import GroupCoordinator
from groupcheck.impl.coordinator_group import ClassicGroup
from groupcheck.impl.coordinator_state import (
    GroupEvent,
    GroupState,
    IllegalTransitionError,
    next_state,
)
from groupcheck.impl.group_messages import (
    Envelope,
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)
from groupcheck.impl.javahash import string_map_order

RANGE = (("range", b"range-meta"),)
RESPONSES = (JoinGroupResponse, SyncGroupResponse, HeartbeatResponse, LeaveGroupResponse)
SESSION = 10_000
REBALANCE = 60_000


class Net:
    """One coordinator, numbered requests, responses collected per client."""

    def __init__(self, **config: int) -> None:
        self.coord = GroupCoordinator("g", **config)
        self.now = 0
        self.next_id = 0
        self.inbox: dict[str, list[Response]] = defaultdict(list)
        self.answered: list[int] = []

    def send(self, client: str, message: Request) -> None:
        self.next_id += 1
        self._collect(self.coord.receive(Envelope(client, self.next_id, message), self.now))

    def tick(self, ms: int) -> None:
        self.now += ms
        self._collect(self.coord.advance(self.now))

    def _collect(self, envelopes: list[Envelope]) -> None:
        for env in envelopes:
            assert isinstance(env.message, RESPONSES), env
            self.answered.append(env.request_id)
            self.inbox[env.client].append(env.message)

    def take(self, client: str) -> list[Response]:
        return self.inbox.pop(client, [])

    def one(self, client: str) -> Response:
        got = self.take(client)
        assert len(got) == 1, f"{client}: expected one response, got {got}"
        return got[0]

    def join_response(self, client: str) -> JoinGroupResponse:
        resp = self.one(client)
        assert isinstance(resp, JoinGroupResponse)
        return resp

    def sync_response(self, client: str) -> SyncGroupResponse:
        resp = self.one(client)
        assert isinstance(resp, SyncGroupResponse)
        return resp

    def error(self, client: str) -> Errors:
        resp = self.one(client)
        assert isinstance(resp, RESPONSES)
        return resp.error


def join_req(client: str, member_id: str = "", protocols: tuple[tuple[str, bytes], ...] = RANGE,
             instance: str | None = None, rebalance_ms: int = REBALANCE,
             protocol_type: str = "consumer") -> JoinGroupRequest:
    return JoinGroupRequest(member_id, protocols, instance, SESSION, rebalance_ms,
                            protocol_type, client)


def first_join(net: Net, client: str, **kw: object) -> str:
    """Join with no member id, take MEMBER_ID_REQUIRED, rejoin with the id (now parked)."""
    net.send(client, join_req(client, **kw))  # type: ignore[arg-type]
    resp = net.join_response(client)
    assert resp.error is Errors.MEMBER_ID_REQUIRED
    net.send(client, join_req(client, resp.member_id, **kw))  # type: ignore[arg-type]
    return resp.member_id


def stable_group(net: Net, clients: list[str], **kw: object) -> dict[str, str]:
    """Bring ``clients`` (dynamic) to Stable at generation 1; return client → member id."""
    ids = {c: first_join(net, c, **kw) for c in clients}
    net.tick(3000 if len(clients) == 1 else 6000)  # later joiners extend the delay once
    joins = {c: net.join_response(c) for c in clients}
    leader = joins[clients[0]].leader
    for c in clients:
        if ids[c] != leader:
            net.send(c, SyncGroupRequest(ids[c], joins[c].generation_id))
    net.send(clients[0], SyncGroupRequest(leader, joins[clients[0]].generation_id,
                                          assignments=tuple((m, m.encode()) for m in ids.values())))
    for c in clients:
        assert net.sync_response(c).error is Errors.NONE
    assert net.coord.state is GroupState.STABLE
    return ids


# -- join and sync ------------------------------------------------------------------------


def test_new_member_gets_member_id_required_then_completes_after_initial_delay() -> None:
    net = Net()
    net.send("c1", join_req("c1"))
    resp = net.join_response("c1")
    assert resp.error is Errors.MEMBER_ID_REQUIRED
    assert resp.member_id.startswith("c1-")
    assert net.coord.state is GroupState.EMPTY
    assert net.coord.pending_members == {resp.member_id}

    net.send("c1", join_req("c1", resp.member_id))
    assert net.take("c1") == []
    assert net.coord.state is GroupState.PREPARING_REBALANCE
    net.tick(2999)
    assert net.take("c1") == []
    net.tick(1)
    joined = net.join_response("c1")
    assert (joined.error, joined.generation_id, joined.leader) == (Errors.NONE, 1, resp.member_id)
    assert joined.protocol_name == "range"
    assert [m.member_id for m in joined.members] == [resp.member_id]
    assert joined.members[0].metadata == b"range-meta"
    assert net.coord.state is GroupState.COMPLETING_REBALANCE

    net.send("c1", SyncGroupRequest(resp.member_id, 1, assignments=((resp.member_id, b"A"),)))
    synced = net.sync_response("c1")
    assert (synced.error, synced.assignment, synced.protocol_name) == (Errors.NONE, b"A", "range")
    assert net.coord.state is GroupState.STABLE
    assert net.coord.assignments == {resp.member_id: b"A"}


def test_member_ids_are_deterministic_for_a_seed() -> None:
    def ids(seed: int) -> list[str]:
        net = Net(seed=seed)
        out = []
        for c in ("a", "b"):
            net.send(c, join_req(c))
            out.append(net.join_response(c).member_id)
        return out

    assert ids(7) == ids(7)
    assert ids(7) != ids(8)


def test_three_members_leader_gets_member_list_and_omitted_member_gets_empty_bytes() -> None:
    net = Net()
    ids = {c: first_join(net, c) for c in ("c1", "c2", "c3")}
    net.tick(3000)
    assert net.take("c1") == []  # c2 and c3 joined during the initial delay: one more
    net.tick(3000)
    joins = {c: net.join_response(c) for c in ids}
    leader = ids["c1"]
    assert all(j.leader == leader and j.generation_id == 1 for j in joins.values())
    assert [m.member_id for m in joins["c1"].members] == string_map_order(ids.values())
    assert joins["c2"].members == () and joins["c3"].members == ()
    assert all(joins[c].member_id == ids[c] for c in ids)

    net.send("c2", SyncGroupRequest(ids["c2"], 1))
    net.send("c3", SyncGroupRequest(ids["c3"], 1))
    assert net.take("c2") == [] and net.take("c3") == []
    net.send("c1", SyncGroupRequest(leader, 1, assignments=((leader, b"L"), (ids["c2"], b"F"))))
    assert net.sync_response("c1").assignment == b"L"
    assert net.sync_response("c2").assignment == b"F"
    assert net.sync_response("c3").assignment == b""
    assert net.coord.state is GroupState.STABLE
    assert set(net.coord.assignments) == set(ids.values())


def test_initial_delay_is_extended_by_each_new_join() -> None:
    net = Net()
    first_join(net, "c1")
    net.tick(2000)
    first_join(net, "c2")
    net.tick(1000)  # t=3000: c2 arrived during the delay → wait another 3000
    assert net.take("c1") == []
    net.tick(2999)
    assert net.take("c1") == []
    net.tick(1)  # t=6000
    assert net.join_response("c1").generation_id == 1
    assert net.join_response("c2").generation_id == 1


def test_initial_delay_is_capped_by_the_rebalance_timeout() -> None:
    net = Net()
    first_join(net, "c0", rebalance_ms=10_000)
    for i, at in enumerate((2000, 5000, 8000, 9500), start=1):
        net.tick(at - net.now)
        first_join(net, f"c{i}", rebalance_ms=10_000)
    net.tick(9999 - net.now)
    assert net.take("c0") == []
    net.tick(1)  # t=10000 = the rebalance timeout, although c4 joined 500 ms ago
    assert net.join_response("c0").generation_id == 1
    assert len(net.coord.members) == 5


def test_follower_rejoin_with_same_metadata_in_stable_gets_current_generation() -> None:
    net = Net()
    ids = stable_group(net, ["c1", "c2"])
    net.send("c2", join_req("c2", ids["c2"]))
    resp = net.join_response("c2")
    assert (resp.error, resp.generation_id, resp.leader, resp.members) == (
        Errors.NONE, 1, ids["c1"], ())
    assert net.coord.state is GroupState.STABLE


def test_leader_rejoin_in_stable_always_rebalances() -> None:
    net = Net()
    ids = stable_group(net, ["c1"])
    net.send("c1", join_req("c1", ids["c1"]))
    # The only member has rejoined: the join phase completes at once (not the initial one).
    resp = net.join_response("c1")
    assert resp.generation_id == 2 and resp.leader == ids["c1"]
    assert net.coord.state is GroupState.COMPLETING_REBALANCE


def test_follower_with_changed_metadata_rebalances_and_syncs_get_rebalance_in_progress() -> None:
    net = Net()
    ids = {c: first_join(net, c) for c in ("c1", "c2")}
    net.tick(6000)
    net.take("c1"), net.take("c2")
    net.send("c2", SyncGroupRequest(ids["c2"], 1))  # parked: the leader has not synced
    net.send("c2", join_req("c2", ids["c2"], protocols=(("range", b"new"),)))
    assert net.coord.state is GroupState.PREPARING_REBALANCE
    assert net.error("c2") is Errors.REBALANCE_IN_PROGRESS  # the parked sync
    net.send("c1", SyncGroupRequest(ids["c1"], 1))
    assert net.error("c1") is Errors.REBALANCE_IN_PROGRESS


def test_leader_fallback_is_first_rejoined_member_in_hashmap_order() -> None:
    net = Net()
    ids = stable_group(net, ["c1", "c2", "c3"])
    start = net.now
    net.send("c2", join_req("c2", ids["c2"], protocols=(("range", b"changed"),)))
    net.send("c3", join_req("c3", ids["c3"]))
    while net.now - start < REBALANCE:  # c1, the leader, stays alive but never rejoins
        net.tick(5000)
        net.send("c1", HeartbeatRequest(ids["c1"], 1))
        assert net.error("c1") in (Errors.REBALANCE_IN_PROGRESS, Errors.UNKNOWN_MEMBER_ID)
    expected = string_map_order([ids["c2"], ids["c3"]])[0]
    resp2, resp3 = net.join_response("c2"), net.join_response("c3")
    assert resp2.leader == resp3.leader == expected == net.coord.leader_id
    assert ids["c1"] not in net.coord.members
    assert resp2.generation_id == 2


def test_protocol_vote_most_votes_wins() -> None:
    net = Net()
    rr_first = (("roundrobin", b""), ("range", b""))
    first_join(net, "c1", protocols=(("range", b""), ("roundrobin", b"")))
    first_join(net, "c2", protocols=rr_first)
    first_join(net, "c3", protocols=rr_first)
    net.tick(6000)
    assert net.join_response("c1").protocol_name == "roundrobin"


def test_protocol_vote_tie_goes_to_hashmap_order_of_the_votes() -> None:
    group = ClassicGroup("g")
    # One vote each; "roundrobin" is voted first, yet "range" iterates first in Java's
    # HashMap<String, Integer> (inferred tie rule: Stream.max keeps the first maximum).
    assert string_map_order(["roundrobin", "range"]) == ["range", "roundrobin"]
    from groupcheck.impl.coordinator_group import Member

    for mid, protos in (("a", (("roundrobin", b""), ("range", b""))),
                        ("b", (("range", b""), ("roundrobin", b"")))):
        group.add(Member(mid, None, "c", "consumer", protos, SESSION, REBALANCE), None)
    assert group.select_protocol() == "range"


def test_joiner_sharing_no_protocol_gets_inconsistent_group_protocol() -> None:
    net = Net()
    stable_group(net, ["c1"])
    net.send("c2", join_req("c2", protocols=(("cooperative-sticky", b""),)))
    assert net.error("c2") is Errors.INCONSISTENT_GROUP_PROTOCOL
    net.send("c3", join_req("c3", protocol_type="connect"))
    assert net.error("c3") is Errors.INCONSISTENT_GROUP_PROTOCOL
    net.send("c4", join_req("c4", protocols=(("cooperative-sticky", b""), ("range", b""))))
    assert net.error("c4") is Errors.MEMBER_ID_REQUIRED


def test_join_above_group_max_size_is_refused() -> None:
    net = Net(group_max_size=1)
    first_join(net, "c1")
    net.send("c2", join_req("c2"))
    assert net.error("c2") is Errors.GROUP_MAX_SIZE_REACHED


def test_invalid_session_timeout_is_refused() -> None:
    net = Net()
    net.send("c1", JoinGroupRequest("", RANGE, session_timeout_ms=1000, client_id="c1"))
    assert net.error("c1") is Errors.INVALID_SESSION_TIMEOUT


def test_pending_member_delays_join_completion_until_it_expires() -> None:
    """KIP-394: an id handed out with MEMBER_ID_REQUIRED counts as not yet rejoined."""
    net = Net()
    ids = stable_group(net, ["c1"])
    net.send("c2", join_req("c2"))
    assert net.error("c2") is Errors.MEMBER_ID_REQUIRED
    net.send("c1", join_req("c1", ids["c1"]))  # the leader rejoins: rebalance
    assert net.take("c1") == []
    net.tick(SESSION)  # the pending id expires
    assert net.join_response("c1").generation_id == 2
    assert net.coord.pending_members == frozenset()


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


def static_group(net: Net, protocols: tuple[tuple[str, bytes], ...] = RANGE) -> dict[str, str]:
    for c, inst in (("s1", "i1"), ("s2", "i2")):
        net.send(c, join_req(c, instance=inst, protocols=protocols))  # no MEMBER_ID_REQUIRED
    net.tick(6000)
    joins = {c: net.join_response(c) for c in ("s1", "s2")}
    ids = {c: j.member_id for c, j in joins.items()}
    assert ids["s1"].startswith("i1-") and joins["s1"].leader == ids["s1"]
    net.send("s2", SyncGroupRequest(ids["s2"], 1, "i2"))
    net.send("s1", SyncGroupRequest(ids["s1"], 1, "i1",
                                    assignments=((ids["s1"], b"a1"), (ids["s2"], b"a2"))))
    assert net.sync_response("s1").error is net.sync_response("s2").error is Errors.NONE
    return ids


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


# -- property -------------------------------------------------------------------------------

CLIENTS = ("a", "b", "c")
PROTOCOL_CHOICES = (RANGE, (("roundrobin", b""), ("range", b"x")), (("sticky", b""),))

TICKS = (100, 1000, 3000, SESSION, REBALANCE)


@st.composite
def actions(draw: st.DrawFn) -> tuple[object, ...]:
    """Mostly a client doing what a consumer would do next, or time passing slowly; now
    and then something arbitrary (a rejoin, a stale sync or heartbeat, a leave)."""
    roll = draw(st.integers(0, 19))
    client = draw(st.sampled_from(CLIENTS))
    if roll < 10:
        return ("poll", client)
    if roll < 14:
        return ("advance", draw(st.sampled_from(TICKS[:3])))
    if roll == 14:
        return ("advance", draw(st.sampled_from(TICKS[3:])))
    if roll == 15:
        return ("join", client, draw(st.sampled_from(PROTOCOL_CHOICES)))
    if roll in (16, 17):
        kind = "sync" if roll == 16 else "heartbeat"
        return (kind, client, draw(st.integers(-1, 1)))
    return ("leave", client, draw(st.booleans()))


class FuzzClient:
    """What a client remembers: member id, generation, whether it must rejoin or sync."""

    def __init__(self, name: str, static: bool) -> None:
        self.name = name
        self.instance = f"inst-{name}" if static else None
        self.member_id = ""
        self.generation = -1
        self.leader = False
        self.must_join = True
        self.must_sync = False

    def learn(self, resp: Response) -> None:
        if isinstance(resp, JoinGroupResponse) and resp.error in (Errors.NONE,
                                                                  Errors.MEMBER_ID_REQUIRED):
            self.member_id = resp.member_id
            if resp.error is Errors.NONE:
                self.generation, self.leader = resp.generation_id, resp.leader == resp.member_id
                self.must_join, self.must_sync = False, True
        elif resp.error in (Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
            self.member_id, self.generation, self.must_join = "", -1, True
        elif resp.error in (Errors.REBALANCE_IN_PROGRESS, Errors.ILLEGAL_GENERATION):
            self.must_join = True
        elif isinstance(resp, SyncGroupResponse) and resp.error is Errors.NONE:
            self.must_sync = False

    def join(self, protocols: tuple[tuple[str, bytes], ...] = RANGE) -> JoinGroupRequest:
        return join_req(self.name, self.member_id, protocols, self.instance)

    def sync(self, net: Net, offset: int = 0) -> SyncGroupRequest:
        everyone = tuple((m, m.encode()) for m in net.coord.members) if self.leader else ()
        return SyncGroupRequest(self.member_id, self.generation + offset, self.instance,
                                assignments=everyone)

    def poll(self, net: Net) -> Request:
        if self.must_join:
            return self.join()
        if self.must_sync:
            return self.sync(net)
        return HeartbeatRequest(self.member_id, self.generation, self.instance)


def run_action(net: Net, clients: dict[str, FuzzClient], action: tuple[object, ...]) -> None:
    kind = action[0]
    if kind == "advance":
        net.tick(int(action[1]))  # type: ignore[call-overload]
        return
    client = clients[str(action[1])]
    message: Request
    if kind == "poll":
        message = client.poll(net)
    elif kind == "join":
        message = client.join(action[2])  # type: ignore[arg-type]
    elif kind == "sync":
        message = client.sync(net, int(action[2]))  # type: ignore[call-overload]
    elif kind == "heartbeat":
        message = HeartbeatRequest(client.member_id, client.generation + int(action[2]),  # type: ignore[call-overload]
                                   client.instance)
    elif action[2]:
        message = LeaveGroupRequest(((client.member_id, client.instance),))
    else:
        message = LeaveGroupRequest((("", f"inst-{client.name}"),))  # admin removal
    net.send(client.name, message)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(st.booleans(), st.booleans(), st.booleans()),
       st.lists(actions(), min_size=20, max_size=60))
def test_any_interleaving_keeps_the_coordinator_consistent(
        static: tuple[bool, bool, bool], script: list[tuple[object, ...]]) -> None:
    """Property: under any interleaving of joins, syncs, heartbeats, leaves and clock
    advances from three clients (static or dynamic; each either doing what a consumer
    would do next, or something arbitrary such as a stale generation), the coordinator
    never raises, its generation never decreases, and in Stable every member has an
    assignment entry (and the leader is a member; an empty group has no members). Also:
    once the group is unloaded at the end, every request has had exactly one answer."""
    net = Net()
    answered: Counter[int] = Counter()
    clients = {name: FuzzClient(name, flag) for name, flag in zip(CLIENTS, static, strict=True)}
    last_generation = 0
    for action in script:
        run_action(net, clients, action)
        for name, client in clients.items():
            for resp in net.take(name):
                client.learn(resp)
        answered.update(net.answered)
        net.answered.clear()
        coord = net.coord
        assert coord.generation_id >= last_generation
        last_generation = coord.generation_id
        if coord.state is GroupState.STABLE:
            assert set(coord.assignments) == set(coord.members)
            assert coord.leader_id in coord.members
        if coord.state is GroupState.EMPTY:
            assert not coord.members
    answered.update(env.request_id for env in net.coord.unload(net.now))
    answered.update(net.answered)
    assert answered == Counter(range(1, net.next_id + 1))
