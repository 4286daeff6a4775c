"""The classic group coordinator (impl/coordinator*.py) under any interleaving of joins,
syncs, heartbeats, leaves and clock advances from three clients, static or dynamic: it
never raises, its generation never decreases, its Stable group is whole, and every request
has exactly one answer.

Each test drives one `GroupCoordinator` through a small in-memory network (`Net`, in
helpers/coordinator.py) on a logical clock and checks the responses and the read-only view.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcheck.impl.coordinator_state import GroupState
from groupcheck.impl.group_messages import (
    Errors,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)

from helpers.coordinator import RANGE, REBALANCE, SESSION, Net, join_req

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
