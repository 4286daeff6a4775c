"""What the coordinator tests share: a small in-memory network (`Net`) that drives one
`GroupCoordinator` on a logical clock, and the requests that bring dynamic or static
members to a Stable group."""

from __future__ import annotations

from collections import defaultdict

from groupcheck.impl.coordinator import GroupCoordinator
from groupcheck.impl.coordinator_state import GroupState
from groupcheck.impl.group_messages import (
    Envelope,
    Errors,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupResponse,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)

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
