"""``python:pkg.module:attr``: a user's assignor, checked like our own.

``attr`` names an object with our assignor protocol (``impl/types.py``: ``name``,
``supported_protocols``, ``assign``, ``on_assignment``, ``subscription_user_data``): a class
or a zero-argument factory (called once per consumer, since an assignor keeps state), or an
instance (deep-copied per consumer).

Two ways in, as for every assignor target:

* `assign_with` answers the JSON-lines ``assign`` request (client or raw mode) with any
  assignor factory, exactly as ``impl/assign_op.run_assign`` does for the builtins: in client
  mode each member's subscription comes from its own instance (user data after
  ``on_assignment(owned, generation)``, owned partitions when the protocol is COOPERATIVE),
  through our codec at ``subscriptionVersion``; the leader is a fresh instance. This is the
  assign function the scope prover, the golden vectors and ``diff`` use.
* `group_factory` plugs the assignor into `BuiltinGroup`: our coordinator and consumers, with
  this assignor in every consumer that names it, for the state machine.
"""

from __future__ import annotations

import base64
import copy
import importlib
import time
from collections.abc import Callable
from typing import Any

from ..impl.assignors import make_assignor
from ..impl.consumer_protocol import (
    HIGHEST_VERSION,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from ..impl.errors import InvalidRequestError
from ..impl.types import Assignment, Assignor, Cluster, RebalanceProtocol, Subscription
from ..properties.group import GroupTarget, MemberSpec

AssignorMaker = Callable[[], Assignor]
AssignFn = Callable[[dict[str, Any]], dict[str, Any]]


class TargetLoadError(ValueError):
    """The named object cannot be loaded or is not an assignor."""


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unb64(text: Any) -> bytes | None:
    if text is None:
        return None
    try:
        return base64.b64decode(str(text), validate=True)
    except ValueError as exc:
        raise InvalidRequestError(f"userData is not valid base64: {exc}") from None


def _pairs(raw: Any) -> list[tuple[str, int]]:
    if not isinstance(raw, list):
        return []
    return [(str(tp[0]), int(tp[1])) for tp in raw]


def protocol_of(assignor: Assignor) -> RebalanceProtocol:
    return max(assignor.supported_protocols)


def _cluster(request: dict[str, Any]) -> Cluster:
    partitions = request.get("partitions") or {}
    if not isinstance(partitions, dict):
        raise InvalidRequestError("partitions must map topic names to partition counts")
    racks = request.get("racks") or {}
    return Cluster({str(t): int(c) for t, c in partitions.items()},
                   {t: [list(r) for r in rs] for t, rs in racks.items()})


def client_subscription(instance: Assignor, member: dict[str, Any],
                        version: int) -> Subscription:
    """One member's subscription as a consumer configured with this assignor sends it,
    read back by the leader through the codec."""
    topics = [str(t) for t in member.get("topics") or []]
    owned = _pairs(member.get("owned"))
    generation = member.get("generation")
    if generation is not None:
        instance.on_assignment(Assignment(list(owned)), int(generation))
    user_data = _unb64(member.get("userData"))
    if user_data is None:
        user_data = instance.subscription_user_data(set(topics))
    sent_owned: list[tuple[str, int]] = []
    if generation is not None and protocol_of(instance) is RebalanceProtocol.COOPERATIVE:
        sent_owned = [tp for tp in owned if tp[0] in set(topics)]
    wire = encode_subscription(
        Subscription(topics, user_data, sent_owned,
                     -1 if generation is None else int(generation), member.get("rack") or None),
        version)
    return decode_subscription(wire).to_api(member.get("groupInstanceId"))


def raw_subscription(member: dict[str, Any]) -> Subscription:
    generation = member.get("generation")
    return Subscription(
        topics=[str(t) for t in member.get("topics") or []],
        user_data=_unb64(member.get("userData")),
        owned_partitions=_pairs(member.get("owned")),
        generation_id=generation if generation is not None and generation >= 0 else None,
        rack_id=member.get("rack"),
        group_instance_id=member.get("groupInstanceId"),
    )


def assign_with(make: AssignorMaker, request: dict[str, Any], *,
                subscription_version: int | None = None) -> dict[str, Any]:
    """Answer one ``assign`` request with assignors from ``make`` (the request's
    ``assignor`` field is not consulted: the target decides which assignor runs).
    ``subscription_version`` overrides the request's (an old client always sends its own)."""
    members = request.get("members")
    if not isinstance(members, dict):
        raise InvalidRequestError("assign needs 'members', an object keyed by member id")
    mode = request.get("mode", "client")
    version = subscription_version if subscription_version is not None else int(
        request.get("subscriptionVersion", HIGHEST_VERSION))
    subscriptions: dict[str, Subscription] = {}
    for member_id, member in members.items():
        if mode == "client":
            subscriptions[member_id] = client_subscription(make(), member, version)
        elif mode == "raw":
            subscriptions[member_id] = raw_subscription(member)
        else:
            raise InvalidRequestError(f"mode must be 'client' or 'raw', not {mode!r}")
    leader = make()
    started = time.perf_counter()
    result = leader.assign(_cluster(request), subscriptions)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    if request.get("newGeneration") is not None:
        generation = int(request["newGeneration"])
    else:
        generation = max([m.get("generation") for m in members.values()
                          if m.get("generation") is not None], default=0) + 1
    user_data: dict[str, str | None] = {}
    assignment_user_data: dict[str, str | None] = {}
    for member_id, assignment in result.items():
        received = assignment
        if request.get("wireAssignment"):
            received = decode_assignment(encode_assignment(assignment)).to_api()
        instance = make()
        instance.on_assignment(received, generation)
        topics = members.get(member_id, {}).get("topics") or []
        user_data[member_id] = _b64(instance.subscription_user_data(set(topics)))
        assignment_user_data[member_id] = _b64(assignment.user_data)
    return {
        "assignment": {m: [[t, p] for t, p in a.partitions] for m, a in result.items()},
        "userData": user_data,
        "assignmentUserData": assignment_user_data,
        "generation": generation,
        "protocol": protocol_of(leader).name,
        "ms": round(elapsed_ms, 3),
    }


def group_factory(target: str, assignor_name: str,
                  make: AssignorMaker) -> Callable[[], GroupTarget]:
    """Fresh `BuiltinGroup`s whose consumers use ``make()`` for ``assignor_name`` and our
    builtins for any other strategy they list (the KIP-429 upgrade path lists two)."""
    from .builtin import BuiltinGroup

    def assignor(name: str, spec: MemberSpec) -> Assignor:
        return make() if name == assignor_name else make_assignor(name)

    return lambda: BuiltinGroup(target, assignor_factory=assignor)


def _check_assignor(obj: Any, where: str) -> None:
    missing = [a for a in ("name", "supported_protocols", "assign", "on_assignment",
                           "subscription_user_data") if not hasattr(obj, a)]
    if missing:
        raise TargetLoadError(f"{where} is not an assignor: it lacks {', '.join(missing)} "
                              "(see groupcheck.impl.types.Assignor)")
    if not obj.supported_protocols:
        raise TargetLoadError(f"{where}: supported_protocols is empty")


def load_maker(spec: str) -> AssignorMaker:
    """``pkg.module:attr`` (``attr`` may be dotted) → a factory of fresh assignors."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise TargetLoadError(f"python target {spec!r}: expected pkg.module:attr")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetLoadError(f"cannot import {module_name}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetLoadError(f"{module_name} has no attribute {attr}")
        obj = getattr(obj, part)
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "assign")):
        factory = obj

        def make() -> Assignor:
            instance: Assignor = factory()
            return instance
        try:
            sample = make()
        except Exception as exc:  # noqa: BLE001 - whatever the user's constructor raises
            raise TargetLoadError(f"{spec}: calling it failed: {type(exc).__name__}: {exc}"
                                  ) from None
        _check_assignor(sample, spec)
        return make
    _check_assignor(obj, spec)
    prototype = obj
    return lambda: copy.deepcopy(prototype)


class PythonTarget:
    """A user's assignor: its name, an assign function and a group factory."""

    def __init__(self, target: str, make: AssignorMaker,
                 subscription_version: int | None = None) -> None:
        self.target = target
        self.make = make
        self.subscription_version = subscription_version
        sample = make()
        self.assignor = str(sample.name)
        self.cooperative = protocol_of(sample) is RebalanceProtocol.COOPERATIVE

    def assign(self, request: dict[str, Any]) -> dict[str, Any]:
        return assign_with(self.make, request, subscription_version=self.subscription_version)

    def group_factory(self) -> Callable[[], GroupTarget]:
        return group_factory(self.target, self.assignor, self.make)
