"""``python:pkg.module:attr``: a user's assignor, checked like our own.

``attr`` names an object with our assignor protocol (``impl/types.py``: ``name``,
``supported_protocols``, ``assign``, ``on_assignment``, ``subscription_user_data``): a class
or a zero-argument factory (called once per consumer, since an assignor keeps state), or an
instance (deep-copied per consumer). ``python:pkg.module`` without ``:attr`` stands for every
assignor the module defines (`assignors_in_module`).

An assignor may declare the balance it promises with a ``balance`` attribute: ``"range"``,
``"roundrobin"``, ``"sticky"`` (Kafka's rules for those assignors; ``"sticky"`` also promises
stickiness, I4) or ``"none"`` (`properties.balance`).

Loading checks the protocol before anything runs: a missing or wrongly typed attribute, or
``assign`` answering with something other than ``{member: Assignment}``, is one sentence
naming the attribute (`TargetLoadError`; the command line prints it and exits 2).

Two ways in, as for every assignor target:

* `assign_with` (``impl/assign_op``, shared with the builtins' ``run_assign``) answers the
  JSON-lines ``assign`` request (client or raw mode) with any assignor factory: in client
  mode each member's subscription comes from its own instance (user data after
  ``on_assignment(owned, generation)``, owned partitions when the protocol is COOPERATIVE),
  through our codec at ``subscriptionVersion``; the leader is a fresh instance. This is the
  assign function the scope prover, the golden vectors and ``diff`` use.
* `group_factory` plugs the assignor into `BuiltinGroup`: our coordinator and consumers, with
  this assignor in every consumer that names it, for the state machine.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Sequence
from typing import Any

from ...impl.assign_op import assign_with, protocol_of
from ...impl.assignors import make_assignor
from ...impl.types import Assignment, Assignor, Cluster, RebalanceProtocol, Subscription
from ...properties.balance import CONTRACTS
from ...properties.group import GroupTarget, MemberSpec, TopicPartition
from ...properties.jsonl_shapes import AssignAnswer, AssignFn, AssignRequest
from .builtin import BuiltinGroup

__all__ = ["METHODS", "PROTOCOL", "AssignFn", "AssignorMaker", "PythonTarget", "TargetLoadError",
           "assignors_in_module", "check_answer", "check_assignor", "group_factory",
           "instances_user_data", "load_maker"]

AssignorMaker = Callable[[], Assignor]
PROTOCOL = "see groupcheck.impl.types.Assignor"
METHODS = ("assign", "on_assignment", "subscription_user_data")


class TargetLoadError(ValueError):
    """The named object cannot be loaded or is not an assignor."""


def group_factory(target: str, assignor_name: str,
                  make: AssignorMaker) -> Callable[[], GroupTarget]:
    """Fresh `BuiltinGroup`s whose consumers use ``make()`` for ``assignor_name`` and our
    builtins for any other strategy they list (the KIP-429 upgrade path lists two)."""
    def assignor(name: str, spec: MemberSpec) -> Assignor:
        return make() if name == assignor_name else make_assignor(name)

    return lambda: BuiltinGroup(target, assignor_factory=assignor)


def check_assignor(obj: Any, where: str) -> None:
    """One sentence naming the first attribute of the assignor protocol that is missing or
    of the wrong type (`TargetLoadError`)."""
    for attr in ("name", "supported_protocols", *METHODS):
        if not hasattr(obj, attr):
            raise TargetLoadError(f"{where}: the assignor has no '{attr}' attribute "
                                  f"({PROTOCOL})")
    name = obj.name
    if not isinstance(name, str) or not name:
        raise TargetLoadError(f"{where}: 'name' must be a non-empty string, not {name!r}")
    protocols = obj.supported_protocols
    if isinstance(protocols, (str, bytes)) or not isinstance(protocols, (tuple, list,
                                                                         frozenset, set)):
        raise TargetLoadError(f"{where}: 'supported_protocols' must be a tuple of "
                              f"RebalanceProtocol values, not {protocols!r}")
    if not protocols:
        raise TargetLoadError(f"{where}: 'supported_protocols' is empty")
    for item in protocols:
        if not isinstance(item, RebalanceProtocol):
            raise TargetLoadError(
                f"{where}: 'supported_protocols' holds {item!r}, not a RebalanceProtocol "
                "(use groupcheck.impl.types.RebalanceProtocol.EAGER or .COOPERATIVE)")
    for attr in METHODS:
        if not callable(getattr(obj, attr)):
            raise TargetLoadError(f"{where}: '{attr}' must be a method, not "
                                  f"{type(getattr(obj, attr)).__name__}")
    declared = getattr(obj, "balance", None)
    if declared is not None and declared not in CONTRACTS:
        raise TargetLoadError(f"{where}: 'balance' must be one of "
                              f"{', '.join(repr(c) for c in CONTRACTS)}, not {declared!r}")


def _import(module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise TargetLoadError(f"cannot import {module_name}: {exc}") from None


def _looks_like_assignor(obj: Any) -> bool:
    return not isinstance(obj, type(importlib)) and callable(getattr(obj, "assign", None))


def assignors_in_module(module_name: str) -> list[str]:
    """What ``python:pkg.module`` stands for: the names in the module's ``__all__`` (else
    its public names) of the classes it defines and of the objects, that have an ``assign``
    method; each is checked like ``python:pkg.module:name``."""
    module = _import(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module)
                                                  if not n.startswith("_")]
    found = []
    for n in names:
        obj = getattr(module, n, None)
        if isinstance(obj, type) and obj.__module__ != module.__name__:
            continue  # imported, not defined here
        if obj is not None and _looks_like_assignor(obj):
            found.append(n)
    if not found:
        raise TargetLoadError(f"python:{module_name}: the module defines no assignor "
                              "(an object with assign, name, supported_protocols, "
                              "on_assignment and subscription_user_data)")
    return found


def load_maker(spec: str) -> AssignorMaker:
    """``pkg.module:attr`` (``attr`` may be dotted) → a factory of fresh assignors."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise TargetLoadError(f"python target {spec!r}: expected pkg.module:attr")
    obj: Any = _import(module_name)
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
        check_assignor(sample, spec)
        return make
    check_assignor(obj, spec)
    prototype = obj
    return lambda: copy.deepcopy(prototype)


def check_answer(result: Any, where: str) -> None:
    """``assign`` must answer ``{member id: Assignment}`` with ``(topic, partition)`` pairs."""
    if not isinstance(result, dict):
        raise TargetLoadError(f"{where}: 'assign' must return a dict of member id to "
                              f"Assignment, not {type(result).__name__}")
    for member, got in result.items():
        if not isinstance(got, Assignment):
            raise TargetLoadError(f"{where}: 'assign' returned {type(got).__name__} for "
                                  f"member {member!r}, not groupcheck.impl.types.Assignment")
        for tp in got.partitions:
            if (not isinstance(tp, tuple) or len(tp) != 2 or not isinstance(tp[0], str)
                    or not isinstance(tp[1], int)):
                raise TargetLoadError(f"{where}: 'assign' gave member {member!r} {tp!r}, "
                                      "not a (topic, partition) tuple")


class PythonTarget:
    """A user's assignor: its name, declared balance, an assign function and a group
    factory."""

    def __init__(self, target: str, make: AssignorMaker,
                 subscription_version: int | None = None) -> None:
        self.target = target
        self.make = make
        self.subscription_version = subscription_version
        sample = make()
        self.assignor = str(sample.name)
        self.declared: str | None = getattr(sample, "balance", None)
        self.cooperative = protocol_of(sample) is RebalanceProtocol.COOPERATIVE

    def check_answers(self) -> None:
        """Ask a fresh instance for one small assignment and one user data, and check what
        comes back has the protocol's types (an exception is the engines' finding)."""
        where = self.target.removeprefix("python:")
        instance = self.make()
        try:
            result = instance.assign(Cluster({"t0": 1}), {"m0": Subscription(["t0"])})
            instance.on_assignment(Assignment([("t0", 0)]), 1)
            data = instance.subscription_user_data({"t0"})
        except Exception:  # noqa: BLE001 - a failure to answer is a finding, not a type error
            return
        check_answer(result, where)
        if data is not None and not isinstance(data, (bytes, bytearray)):
            raise TargetLoadError(f"{where}: 'subscription_user_data' must return bytes or "
                                  f"None, not {type(data).__name__}")

    def assign(self, request: AssignRequest) -> AssignAnswer:
        return assign_with(self.make, request, subscription_version=self.subscription_version)

    def group_factory(self) -> Callable[[], GroupTarget]:
        return group_factory(self.target, self.assignor, self.make)


def instances_user_data(make: Callable[[], Any]
                        ) -> Callable[[Sequence[tuple[list[TopicPartition], int, list[str]]]],
                                      list[bytes | None]]:
    """A user-data writer over fresh instances from ``make``: one per input, every one
    handed its assignment before any writes (so state shared between instances shows)."""
    def write(inputs: Sequence[tuple[list[TopicPartition], int, list[str]]]
              ) -> list[bytes | None]:
        instances = [make() for _ in inputs]
        for instance, (owned, generation, _) in zip(instances, inputs, strict=True):
            instance.on_assignment(Assignment(list(owned)), generation)
        out: list[bytes | None] = []
        for instance, (_, _, topics) in zip(instances, inputs, strict=True):
            data = instance.subscription_user_data(set(topics))
            out.append(None if data is None else bytes(data))
        return out
    return write
