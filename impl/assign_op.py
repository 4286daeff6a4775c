"""The ``assign`` request of the JSON-lines contract: one rebalance, as Kafka's leader runs it.

``mode: client`` builds each member's subscription the way a consumer configured with this
single assignor would (its own assignor instance for user data; eager members send no owned
partitions; the subscription goes through the codec at ``subscriptionVersion``, default 3, so
an old version loses what it cannot carry). ``mode: raw`` hands the fields over as given.
The leader's assignor is a fresh instance; each member then receives its assignment (through
the assignment codec with ``wireAssignment``) and reports the user data of its next join.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

from .assignors import make_assignor
from .consumer_protocol import (
    HIGHEST_VERSION,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from .errors import InvalidRequestError
from .jsonl_shapes import AssignOpAnswer, AssignOpMember, AssignOpRequest, Claim
from .types import Assignment, Assignor, Cluster, RebalanceProtocol, Subscription, TopicPartition

__all__ = ["INT32_MAX", "INT32_MIN", "MAX_REQUEST_PARTITIONS", "assign_with", "b64",
           "client_subscription", "int32", "leader_response", "member_subscriptions",
           "new_generation", "optional_generation", "optional_name", "partition_list",
           "protocol_of", "raw_subscription", "request_cluster", "run_assign",
           "run_assign_assignment_only", "run_leader", "seen_by_leader", "topic_names", "unb64"]


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def unb64(text: Any, what: str) -> bytes | None:
    if text is None:
        return None
    try:
        return base64.b64decode(str(text), validate=True)
    except ValueError as exc:
        raise InvalidRequestError(f"{what} is not valid base64: {exc}") from None


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
#: the most partitions one assign request may hold in all (four times Kafka's scale test,
#: 500 topics x 2,000 partitions): a count is a few bytes of JSON, its partitions are not
MAX_REQUEST_PARTITIONS = 4_000_000


def int32(value: Any, what: str) -> int:
    """A JSON number that must fit Kafka's int32 (generations, partitions)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidRequestError(f"{what} must be an integer, not {value!r}")
    if not INT32_MIN <= value <= INT32_MAX:
        raise InvalidRequestError(f"{what} {value} does not fit in an int32")
    return value


def topic_names(value: Any) -> list[str]:
    """A member's ``topics``: a JSON array of names (absent or null: none)."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InvalidRequestError(f"topics must be a list of topic names, not {value!r}")
    return list(value)


def optional_name(value: Any, what: str) -> str | None:
    """A ``rack`` or ``groupInstanceId``: a string, or absent/null."""
    if value is not None and not isinstance(value, str):
        raise InvalidRequestError(f"{what} must be a string or null, not {value!r}")
    return value


def optional_generation(value: Any) -> int | None:
    return None if value is None else int32(value, "generation")


def partition_list(raw: Any, what: str) -> list[TopicPartition]:
    """``[[topic, p], ...]`` as tuples, checked."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidRequestError(f"{what} must be a list of [topic, partition] pairs")
    out: list[TopicPartition] = []
    for item in raw:
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
            raise InvalidRequestError(f"{what}: {item!r} is not a [topic, partition] pair")
        out.append((item[0], int32(item[1], f"{what}: partition of {item[0]!r}")))
    return out


def claims(parts: list[TopicPartition]) -> list[Claim]:
    """Partitions as JSON holds them: ``[topic, partition]`` each."""
    return [[t, p] for t, p in parts]


def protocol_of(assignor: Assignor) -> RebalanceProtocol:
    """A single-assignor consumer runs the highest protocol its assignor supports (KIP-429)."""
    return max(assignor.supported_protocols)


def request_cluster(request: AssignOpRequest) -> Cluster:
    """The leader's metadata of a request (``partitions``, ``racks``), checked."""
    partitions = request.get("partitions") or {}
    if not isinstance(partitions, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in partitions.items()):
        raise InvalidRequestError("partitions must map topic names to partition counts >= 0")
    total = sum(partitions.values())
    if total > MAX_REQUEST_PARTITIONS:
        raise InvalidRequestError(f"partitions: {total:,} in all, more than the "
                                  f"{MAX_REQUEST_PARTITIONS:,} one request may hold")
    racks = request.get("racks") or {}
    if not isinstance(racks, dict) or not all(
            isinstance(rs, list) and all(isinstance(r, list) for r in rs)
            for rs in racks.values()):
        raise InvalidRequestError("racks must map topic names to per-partition lists of "
                                  "rack names")
    return Cluster(dict(partitions), {t: [list(r) for r in rs] for t, rs in racks.items()})


def client_subscription(instance: Assignor, member: AssignOpMember,
                        version: int) -> Subscription:
    """One member's subscription as a consumer configured with this assignor (``instance``,
    the member's own) builds it, sent through the codec at ``version`` and read back."""
    topics = topic_names(member.get("topics"))
    owned = partition_list(member.get("owned"), "owned")
    generation = optional_generation(member.get("generation"))
    if generation is not None:
        instance.on_assignment(Assignment(list(owned)), generation)
    user_data = unb64(member.get("userData"), "userData")
    if user_data is None:
        user_data = instance.subscription_user_data(set(topics))
    sent_owned: list[TopicPartition] = []
    if generation is not None and protocol_of(instance) is RebalanceProtocol.COOPERATIVE:
        subscribed = set(topics)
        sent_owned = [tp for tp in owned if tp[0] in subscribed]
    rack = optional_name(member.get("rack"), "rack")
    group_instance_id = optional_name(member.get("groupInstanceId"), "groupInstanceId")
    wire = encode_subscription(
        Subscription(topics, user_data, sent_owned,
                     -1 if generation is None else generation, rack or None),
        version)
    return decode_subscription(wire).to_api(group_instance_id)


def raw_subscription(member: AssignOpMember) -> Subscription:
    generation = optional_generation(member.get("generation"))
    return Subscription(
        topics=topic_names(member.get("topics")),
        user_data=unb64(member.get("userData"), "userData"),
        owned_partitions=partition_list(member.get("owned"), "owned"),
        generation_id=generation if generation is not None and generation >= 0 else None,
        rack_id=optional_name(member.get("rack"), "rack"),
        group_instance_id=optional_name(member.get("groupInstanceId"), "groupInstanceId"),
    )


def new_generation(request: AssignOpRequest, members: dict[str, AssignOpMember]) -> int:
    """The generation the rebalance ends in: ``newGeneration``, else the highest a member
    reports plus one."""
    if request.get("newGeneration") is not None:
        return int32(request["newGeneration"], "newGeneration")
    generations = [m.get("generation") for m in members.values()]
    return max([g for g in generations if g is not None], default=0) + 1


def run_assign(request: AssignOpRequest) -> AssignOpAnswer:
    """Answer one ``assign`` request with the builtin assignor it names (see the vectors
    docs/reference/jsonl-contract.md for every field)."""
    return assign_with(_maker(request), request)


def run_assign_assignment_only(request: AssignOpRequest) -> AssignOpAnswer:
    """`run_assign` without the user data each member would send next (``userData``,
    ``assignmentUserData``): for callers that read only the assignment, such as the audit's
    chains, whose members rebuild their user data from what they own when they next join."""
    return assign_with(_maker(request), request, next_user_data=False)


def _maker(request: AssignOpRequest) -> Callable[[], Assignor]:
    name = request.get("assignor")
    if not isinstance(name, str):
        raise InvalidRequestError("assign needs an 'assignor' name")

    def make() -> Assignor:
        return make_assignor(name)

    return make


def member_subscriptions(make: Callable[[], Assignor], request: AssignOpRequest,
                          version: int, cache: dict[Any, Subscription] | None = None,
                          keys: list[Any] | None = None) -> dict[str, Subscription]:
    """Every member's subscription as the leader receives it (client or raw mode);
    ``cache`` keeps client-mode subscriptions by the fields they are built from, whose
    keys go to ``keys``."""
    members = request.get("members")
    if not isinstance(members, dict):
        raise InvalidRequestError("assign needs 'members', an object keyed by member id")
    mode = request.get("mode", "client")
    if mode not in ("client", "raw"):
        raise InvalidRequestError(f"mode must be 'client' or 'raw', not {mode!r}")
    subscriptions: dict[str, Subscription] = {}
    for member_id, member in members.items():
        if not isinstance(member, dict):
            raise InvalidRequestError(f"member {member_id!r} must be an object")
        if keys is not None:
            keys.append(_member_key(member))
        if mode == "raw":
            subscriptions[member_id] = raw_subscription(member)
        elif cache is None or keys is None:
            subscriptions[member_id] = client_subscription(make(), member, version)
        else:
            found = cache.get(keys[-1])
            if found is None:
                found = cache[keys[-1]] = client_subscription(make(), member, version)
            subscriptions[member_id] = found
    return subscriptions


def _member_key(member: AssignOpMember) -> Any:
    """What a client-mode subscription is built from (hashable)."""
    try:
        key = (tuple(member.get("topics") or ()), tuple(map(tuple, member.get("owned") or ())),
               member.get("generation"), member.get("userData"), member.get("rack"),
               member.get("groupInstanceId"))
        hash(key)
    except TypeError:  # malformed fields: the uncached path reports them
        return repr(sorted(member.items(), key=repr))
    return key


def seen_by_leader(subscription: Subscription) -> Any:
    """Everything the leader reads of one subscription (hashable)."""
    return (tuple(subscription.topics), subscription.user_data,
            tuple(subscription.owned_partitions), subscription.generation_id,
            subscription.rack_id, subscription.group_instance_id)


def leader_response(make: Callable[[], Assignor], request: AssignOpRequest,
            led: tuple[list[tuple[str, list[TopicPartition]]], list[bytes | None], str, float],
            user_data: bool) -> AssignOpAnswer:
    """The response to one leader run (see `run_leader`): the assignment in the leader's order
    and, with ``user_data``, what each member sends at its next join after receiving its
    share, and each share's user data."""
    shares, share_data, protocol, elapsed_ms = led
    members = request["members"]
    generation = new_generation(request, members)
    response: AssignOpAnswer = {"assignment": {m: claims(parts) for m, parts in shares}}
    if user_data:
        next_user_data: dict[str, str | None] = {}
        for (member_id, parts), data in zip(shares, share_data, strict=True):
            received = Assignment(list(parts), data)
            if request.get("wireAssignment"):
                received = decode_assignment(encode_assignment(received)).to_api()
            member_instance = make()
            member_instance.on_assignment(received, generation)
            member = members.get(member_id)
            topics = member.get("topics") or [] if member is not None else []
            next_user_data[member_id] = b64(member_instance.subscription_user_data(set(topics)))
        response["userData"] = next_user_data
        response["assignmentUserData"] = {m: b64(d) for (m, _), d in zip(shares, share_data,
                                                                         strict=True)}
    response["generation"] = generation
    response["protocol"] = protocol
    response["ms"] = round(elapsed_ms, 3)
    return response


def run_leader(make: Callable[[], Assignor], request: AssignOpRequest,
          subscriptions: dict[str, Subscription]
          ) -> tuple[list[tuple[str, list[TopicPartition]]], list[bytes | None], str, float]:
    """One leader run: (assignment in the leader's order, each share's assignment user
    data, protocol name, milliseconds)."""
    leader = make()
    cluster = request_cluster(request)
    started = time.perf_counter()
    result = leader.assign(cluster, subscriptions)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    shares = [(m, list(a.partitions)) for m, a in result.items()]
    return shares, [a.user_data for a in result.values()], protocol_of(leader).name, elapsed_ms


def assign_with(make: Callable[[], Assignor], request: AssignOpRequest, *,
                subscription_version: int | None = None,
                next_user_data: bool = True) -> AssignOpAnswer:
    """Answer one ``assign`` request with assignors from ``make``: one instance per member
    (client mode) and a fresh one for the leader. The request's ``assignor`` is not
    consulted; ``subscription_version`` overrides its ``subscriptionVersion`` (an old client
    always sends its own); without ``next_user_data`` the answer leaves out what each
    member would send at its next join."""
    version = subscription_version if subscription_version is not None else int(
        request.get("subscriptionVersion", HIGHEST_VERSION))
    subscriptions = member_subscriptions(make, request, version)
    return leader_response(make, request, run_leader(make, request, subscriptions), next_user_data)
