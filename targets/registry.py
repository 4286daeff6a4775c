"""Target strings → what the engines can run.

* ``builtin:<assignor>`` — our coordinator, consumers and one of Kafka's four assignors;
  ``builtin:codec`` — our subscription codec alone;
* ``mutant:<name>`` — a deliberately broken variant (the bug zoo, `zoo`);
* ``python:pkg.module:attr`` — a user's assignor with our assignor protocol;
  ``python:pkg.module`` — every assignor object the module defines (`adapters.python_assignor`);
* ``kafka-python:<assignor>`` — kafka-python's assignor through an adapter;
* ``aiokafka:<assignor>`` — aiokafka's assignor, called as its coordinator calls it;
* ``jsonl:<command>`` — a process speaking the JSON-lines contract (which assignor it runs
  is the ``assignor`` argument of `resolve`; without one the target leaves it open, offering
  the names the process declares, else Kafka's four);
* ``java:[CLASSPATH]`` — Kafka's own Java client (its ConsumerProtocol and four assignors)
  through groupcheck's driver, a JSON-lines process like ``jsonl:`` (`processes.java_process`);
  its assignor is left open the same way;
* ``wire:<client>:<assignor>[:adversarial]``, ``wire:mixed:<a>+<b>…:<assignor>``,
  ``wire:cmd=<command>:<assignor>`` — real consumers in member drivers on a fresh backend
  cluster per test case (`wire.group`; the backend from ``Settings.broker``: ``groupcheck``,
  groupcheck's own broker, by default, or ``mock``, librdkafka's mock cluster);
  ``librdkafka:<assignor>[:adversarial]`` is ``wire:librdkafka:…``.

`resolve` gives a `Target` (``target.py``), made here for ``builtin:`` and by the module of
its kind for the others (`kinds_python`, `kinds_process`, `kinds_wire`), each loaded on
first use: a builtin target loads neither the wire nor the processes. The environment's
part (`settings.Settings`: the wire backend, the default Kafka classpath, the process time
limit) comes from the caller, which reads it once. Group targets are made fresh for each example.

A target string may leave the assignor open (``jsonl:``, ``java:``, ``python:pkg.module``):
then the `Target` has ``choices`` (names to pick from) and ``pick(name)`` (the target for
one of them), and `offers.expand` asks each choice what it answers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..impl.assign_op import run_assign
from ..impl.assign_session import AssignSession
from ..impl.assignors import make_assignor
from ..impl.jsonl import handle
from ..properties.group import GroupTarget
from .adapters.builtin import BuiltinGroup
from .adapters.codecs import BuiltinCodec
from .adapters.python_assignor import instances_user_data
from .settings import Settings
from .target import BUILTIN_ASSIGNORS, MachineHints, Target, TargetError

__all__ = ["KINDS", "NO_SETTINGS", "OPTIONAL_NAME", "RESOLVERS", "TARGET_KINDS",
           "client_setup", "group_target_factory", "machine_hints", "make_group_target",
           "resolve", "wire_clients"]

#: the environment's settings when a caller gives none: an empty environment
NO_SETTINGS = Settings()


def _builtin(name: str, **_: Any) -> Target:
    if name == "codec":
        return Target("builtin:codec", None, codec=BuiltinCodec())
    if name not in BUILTIN_ASSIGNORS:
        raise TargetError(f"unknown builtin assignor {name!r}; expected one of "
                          f"{', '.join(BUILTIN_ASSIGNORS)} (or codec)")
    return Target(f"builtin:{name}", name, assign=run_assign,
                  group=lambda: BuiltinGroup(f"builtin:{name}"), codec=BuiltinCodec(),
                  hints=MachineHints(name), call=handle,
                  assign_session=lambda: AssignSession(user_data=False),
                  user_data=instances_user_data(lambda: make_assignor(name)),
                  make=lambda: make_assignor(name)).promise()


#: each kind's resolver: this module's, or (module of this package, function) loaded on
#: first use, so that a builtin target never loads the wire, the processes or the zoo
RESOLVERS: dict[str, Callable[..., Target] | tuple[str, str]] = {
    "builtin": _builtin, "mutant": ("kinds_python", "mutant_target"),
    "python": ("kinds_python", "python_target"),
    "kafka-python": ("kinds_python", "kafka_python_target"),
    "aiokafka": ("kinds_python", "aiokafka_target"),
    "jsonl": ("kinds_process", "jsonl_target"), "java": ("kinds_process", "java_target"),
    "librdkafka": ("kinds_wire", "librdkafka_target"), "wire": ("kinds_wire", "wire_target")}


def _resolver(kind: str) -> Callable[..., Target]:
    """The function that makes targets of ``kind`` (its module loaded now if need be)."""
    found = RESOLVERS[kind]
    if isinstance(found, tuple):
        module, name = found
        made: Callable[..., Target] = getattr(
            importlib.import_module(f".{module}", __package__), name)
        return made
    return found


ADVERSARIAL = ":adversarial"


def wire_clients(spec: str) -> tuple[tuple[str, ...], str, bool]:
    """``<client>|mixed:<a>+<b>…|cmd=<command>`` ``:<assignor>[:adversarial]`` (what follows
    ``wire:``) → clients, assignor, adversarial. A command may hold colons: the assignor is
    the last field."""
    adversarial = spec.endswith(ADVERSARIAL)
    body = spec[:-len(ADVERSARIAL)] if adversarial else spec
    clients_part, sep, assignor = body.rpartition(":")
    if not sep or not clients_part or not assignor:
        raise TargetError(f"wire: expected wire:<client>:<assignor>[:adversarial], "
                          f"wire:mixed:<a>+<b>…:<assignor> or wire:cmd=<command>:<assignor>, "
                          f"not wire:{spec}")
    if clients_part.startswith("mixed:"):
        clients = tuple(c for c in clients_part[len("mixed:"):].split("+") if c)
        if len(clients) < 2:
            raise TargetError("wire: a mixed group names at least two clients (a+b)")
    else:
        clients = (clients_part,)
    return clients, assignor, adversarial


def client_setup(client: str, settings: Settings) -> tuple[str, bool]:
    """What a wire group needs to start a member of ``client``: its driver's classpath
    (Kafka's client, for java members) and whether its release sends no generation
    (`kinds_wire.client_setup`, its module loaded now if need be)."""
    wire = importlib.import_module(".kinds_wire", __package__)
    setup: Callable[[str, Settings], tuple[str, bool]] = wire.client_setup
    return setup(client, settings)


#: kinds whose name may be empty (``java:`` takes its default classpath)
OPTIONAL_NAME = frozenset({"java"})
#: kinds that take a release (``java@3.4.0:``)
RELEASED = frozenset({"java"})
TARGET_KINDS = ("builtin:<assignor>, mutant:<name>, python:pkg.module[:attr], "
                "kafka-python:<assignor>, aiokafka:<assignor>, jsonl:<command>, "
                "java:[CLASSPATH], java@<version>:, wire:<client>:<assignor>[:adversarial], "
                "wire:mixed:<a>+<b>…:<assignor>, wire:cmd=<command>:<assignor>, "
                "librdkafka:<assignor>[:adversarial]")
KINDS = RESOLVERS


def resolve(target: str, *, assignor: str | None = None, timeout: float | None = None,
            settings: Settings = NO_SETTINGS) -> Target:
    """The `Target` a target string names (raises `TargetError` with one line). A target
    that leaves its assignor open and gets none here offers names to choose from
    (``choices``: its own, such as a process's declared ones, else Kafka's four; ``pick``).
    ``settings``: the environment's part, read by the caller."""
    kind, sep, name = target.partition(":")
    kind, at, release = kind.partition("@")
    if not sep or kind not in RESOLVERS or not (name or kind in OPTIONAL_NAME) \
            or (at and (kind not in RELEASED or not release)):
        raise TargetError(f"unknown target {target!r}; expected one of {TARGET_KINDS}")
    made = _resolver(kind)
    extra = {"release": release} if at else {}
    resolved = made(name, assignor=assignor, timeout=timeout, settings=settings, **extra)
    if resolved.open_assignor and assignor is None and resolved.pick is None:
        if resolved.choices is None:
            resolved.choices = lambda: list(BUILTIN_ASSIGNORS)
        resolved.pick = lambda chosen: made(name, assignor=chosen, timeout=timeout,
                                            settings=settings, **extra)
    return resolved


def group_target_factory(target: str, assignor: str | None = None,
                         settings: Settings = NO_SETTINGS) -> Callable[[], GroupTarget]:
    """A factory of fresh group targets for a target string (``assignor``: which one, for a
    target that answers several)."""
    resolved = resolve(target, assignor=assignor, settings=settings)
    if resolved.group is None:
        if resolved.choices is not None and resolved.assignor is None:
            raise TargetError(f"{target} offers several assignors "
                              f"({', '.join(resolved.choices())}); name one")
        raise TargetError(f"{target} is not a group target (it has no assignor)")
    return resolved.group


def make_group_target(target: str, settings: Settings = NO_SETTINGS) -> GroupTarget:
    """One fresh group of a target string."""
    return group_target_factory(target, settings=settings)()


def machine_hints(target: str, settings: Settings = NO_SETTINGS) -> MachineHints:
    """The assignor family and client settings a target's members use."""
    resolved = resolve(target, settings=settings)
    if resolved.hints is None:
        raise TargetError(f"unknown target {target!r}")
    return resolved.hints
