"""The classic group coordinator (impl/coordinator*.py) against Kafka's rules: joining
and syncing (member ids, the initial delay, the leader, the protocol vote, the joins it
refuses, pending members).

Each test drives one `GroupCoordinator` through a small in-memory network (`Net`, in
helpers/coordinator.py) on a logical clock and checks the responses and the read-only view.
"""

from __future__ import annotations

from groupcheck.impl.coordinator_group import ClassicGroup
from groupcheck.impl.coordinator_state import GroupState
from groupcheck.impl.group_messages import (
    Errors,
    HeartbeatRequest,
    JoinGroupRequest,
    SyncGroupRequest,
)
from groupcheck.impl.javahash import string_map_order

from helpers.coordinator import RANGE, REBALANCE, SESSION, Net, first_join, join_req, stable_group

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
