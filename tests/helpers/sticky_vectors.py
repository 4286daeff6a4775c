"""Turning recorded ``assign`` requests into calls of the sticky assignors (test helper).

Client mode rebuilds each member's subscription as a real consumer would (see the vectors
docs/reference/jsonl-contract.md); raw mode hands the fields over as given. The lead's
codec-based glue (`groupcheck.impl.assign_op`) does the same through the wire codec; this helper
keeps the sticky tests independent of it.
"""

from __future__ import annotations

import base64
from typing import Any

from groupcheck.impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from groupcheck.impl.errors import AssignorError
from groupcheck.impl.javahash import java_string_key
from groupcheck.impl.types import Assignment, Cluster, Subscription, TopicPartition

STICKY_NAMES = ("sticky", "cooperative-sticky")
Assignor = StickyAssignor | CooperativeStickyAssignor


def make(name: str) -> Assignor:
    return StickyAssignor() if name == "sticky" else CooperativeStickyAssignor()


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def pairs(raw: list[list[Any]] | None) -> list[TopicPartition]:
    return [(str(t), int(p)) for t, p in raw or []]


def canonical(owned: list[TopicPartition]) -> list[TopicPartition]:
    """As the v1+ subscription writer orders owned partitions: (topic in Java order, p)."""
    return sorted(owned, key=lambda tp: (java_string_key(tp[0]), tp[1]))


def client_subscription(name: str, member: dict[str, Any], version: int) -> Subscription:
    instance = make(name)
    topics = sorted(member.get("topics") or [], key=java_string_key)
    owned = pairs(member.get("owned"))
    generation = member.get("generation")
    if generation is not None:
        instance.on_assignment(Assignment(list(owned)), generation)
    user_data = unb64(member.get("userData"))
    if user_data is None:
        user_data = instance.subscription_user_data(set(topics))
    sent: list[TopicPartition] = []
    if name == "cooperative-sticky" and generation is not None and version >= 1:
        subscribed = set(topics)
        sent = canonical([tp for tp in owned if tp[0] in subscribed])
    return Subscription(
        topics=topics, user_data=user_data, owned_partitions=sent,
        generation_id=generation if version >= 2 and generation is not None
        and generation >= 0 else None,
        rack_id=(member.get("rack") or None) if version >= 3 else None,
        group_instance_id=member.get("groupInstanceId"))


def raw_subscription(member: dict[str, Any]) -> Subscription:
    generation = member.get("generation")
    return Subscription(
        topics=list(member.get("topics") or []),
        user_data=unb64(member.get("userData")),
        owned_partitions=pairs(member.get("owned")),
        generation_id=generation if generation is not None and generation >= 0 else None,
        rack_id=member.get("rack") or None,
        group_instance_id=member.get("groupInstanceId"))


def cluster_of(request: dict[str, Any]) -> Cluster:
    return Cluster(dict(request.get("partitions") or {}),
                   {t: [list(r) for r in rs] for t, rs in (request.get("racks") or {}).items()})


def subscriptions_of(request: dict[str, Any]) -> dict[str, Subscription]:
    name, members = request["assignor"], request["members"]
    version = int(request.get("subscriptionVersion", 3))
    if request.get("mode") == "raw":
        return {m: raw_subscription(v) for m, v in members.items()}
    return {m: client_subscription(name, v, version) for m, v in members.items()}


def new_generation(request: dict[str, Any]) -> int:
    if request.get("newGeneration") is not None:
        return int(request["newGeneration"])
    gens = [m.get("generation") for m in request["members"].values()]
    return max([g for g in gens if g is not None], default=0) + 1


def run(request: dict[str, Any], leader: Assignor | None = None) -> dict[str, Any]:
    """Kafka's answer to one request: the assignment and each member's next user data."""
    name = request["assignor"]
    leader = leader or make(name)
    try:
        result = leader.assign(cluster_of(request), subscriptions_of(request))
    except AssignorError as exc:
        return {"error": f"{exc.kafka_class}: {exc}", "errorClass": exc.kafka_class}
    generation = new_generation(request)
    user_data: dict[str, str | None] = {}
    for member, assignment in result.items():
        instance = make(name)
        instance.on_assignment(assignment, generation)
        topics = request["members"].get(member, {}).get("topics") or []
        user_data[member] = b64(instance.subscription_user_data(set(topics)))
    return {"assignment": {m: [[t, p] for t, p in a.partitions] for m, a in result.items()},
            "userData": user_data}
