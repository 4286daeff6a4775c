"""What the consumer tests share: a stub assignor, a consumer subscribed to ``t``, and
hand-made replies to the requests it sends (a whole follower rebalance at once)."""

from __future__ import annotations

from dataclasses import dataclass, field

from groupcheck.impl.consumer import Consumer
from groupcheck.impl.consumer_protocol import decode_subscription, encode_assignment
from groupcheck.impl.group_messages import (
    Envelope,
    Errors,
    JoinGroupRequest,
    JoinGroupResponse,
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
