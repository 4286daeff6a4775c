"""``python:pkg.module:attr``: a user's assignor, checked like our own.

``attr`` names an object with our assignor protocol (``impl/types.py``: ``name``,
``supported_protocols``, ``assign``, ``on_assignment``, ``subscription_user_data``): a class
or a zero-argument factory (called once per consumer, since an assignor keeps state), or an
instance (deep-copied per consumer).

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
from collections.abc import Callable
from typing import Any

from ..impl.assign_op import assign_with, protocol_of
from ..impl.assignors import make_assignor
from ..impl.types import Assignor, RebalanceProtocol
from ..properties.group import GroupTarget, MemberSpec

AssignorMaker = Callable[[], Assignor]
AssignFn = Callable[[dict[str, Any]], dict[str, Any]]


class TargetLoadError(ValueError):
    """The named object cannot be loaded or is not an assignor."""


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
