"""Target strings → what the engines can run.

* ``builtin:<assignor>`` — our coordinator, consumers and one of Kafka's four assignors;
  ``builtin:codec`` — our subscription codec alone;
* ``mutant:<name>`` — a deliberately broken variant (`mutants`, and the bug zoo in `zoo`);
* ``python:pkg.module:attr`` — a user's assignor with our assignor protocol;
  ``python:pkg.module`` — every assignor object the module defines (`python_target`);
* ``kafka-python:<assignor>`` — kafka-python's assignor through an adapter;
* ``aiokafka:<assignor>`` — aiokafka's assignor, called as its coordinator calls it;
* ``jsonl:<command>`` — a process speaking the JSON-lines contract (which assignor it runs
  is the ``assignor`` argument of `resolve`; without one the target leaves it open);
* ``java:[CLASSPATH]`` — Kafka's own Java client (its ConsumerProtocol and four assignors)
  through groupcheck's driver, a JSON-lines process like ``jsonl:`` (`java_target`);
  its assignor is left open the same way;
* ``wire:<client>:<assignor>[:adversarial]``, ``wire:mixed:<a>+<b>…:<assignor>``,
  ``wire:cmd=<command>:<assignor>`` — real consumers in member drivers on a fresh backend
  cluster per test case (`wire`; the backend from ``$GROUPCHECK_BROKER``: ``groupcheck``,
  groupcheck's own broker, by default, or ``mock``, librdkafka's mock cluster);
  ``librdkafka:<assignor>[:adversarial]`` is ``wire:librdkafka:…``.

`resolve` gives a `Target`: whichever of an assign function (``assign(request) ->
response``, for the scope prover, the vectors and ``diff``), a group factory (for the state
machine), a codec (for the I10 battery) and a user-data writer (for I12) the target has,
and what its assignor promises: a balance contract (`properties.balance`) and, for the
sticky family or a declared ``balance = "sticky"``, stickiness. Group targets are made
fresh for each example.

A target string may leave the assignor open (``jsonl:``, ``java:``, ``python:pkg.module``):
then the `Target` has ``choices`` (names to pick from) and ``pick(name)`` (the target for
one of them), and `offers.expand` asks each choice what it answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..properties.balance import STICKY_FAMILY, contract_of
from ..properties.group import GroupTarget, TopicPartition

BUILTIN_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
AssignFn = Callable[[dict[str, Any]], dict[str, Any]]
#: (owned partitions handed to ``on_assignment``, its generation, subscribed topics)
UserDataInput = tuple[list[TopicPartition], int, list[str]]
UserDataFn = Callable[[Sequence[UserDataInput]], list[bytes | None]]


class TargetError(ValueError):
    """A target string that names nothing we can run."""


class MachineHints:
    """What the engines need to know of a target to drive it sensibly."""

    def __init__(self, assignor: str, profiles: tuple[str, ...] = ("kip", "java"),
                 user_data_versions: tuple[int, ...] = (1,),
                 subscription_versions: tuple[int, ...] = (3,), upgrades: bool = True,
                 wire: bool = False, adversarial: bool = False, steering: bool = False) -> None:
        self.assignor = assignor
        self.wire = wire  # real clients on a real wire: slow, fixed topics (wire_config)
        self.adversarial = adversarial
        #: the wire backend aims errors and delays at one member and orders SyncGroup answers
        self.steering = steering
        self.upgrades = upgrades  # members may bounce along the KIP-429 upgrade path
        self.profiles = profiles
        self.user_data_versions = user_data_versions
        self.subscription_versions = subscription_versions


@dataclass
class Target:
    """One resolved target. ``assignor``: the strategy name its members use (None for a
    codec-only target); ``balance``: the balance contract its assignor is held to and
    ``balance_why`` where it comes from; ``sticky``: it promises stickiness (I4);
    ``fork_safe``: the prover may fork worker processes; ``user_data``: writes the user
    data of fresh members after ``on_assignment`` (I12); ``open_assignor``: the target
    string leaves the assignor open (set by the resolver; `resolve` then fills ``choices``
    and ``pick``)."""

    name: str
    assignor: str | None
    assign: AssignFn | None = None
    group: Callable[[], GroupTarget] | None = None
    codec: Any = None
    hints: MachineHints | None = None
    balance: str = "none"
    balance_why: str = ""
    sticky: bool = False
    protocol: str = "EAGER"  # the highest its assignor supports (KIP-429)
    fork_safe: bool = True
    call: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # any JSON-lines op
    #: a fresh assign function that caches what repeats across requests and leaves out
    #: user data (``impl.assign_session.AssignSession``): deterministic in-tree assignors only
    assign_session: Callable[[], AssignFn] | None = None
    user_data: UserDataFn | None = None
    closers: list[Callable[[], None]] = field(default_factory=list)
    open_assignor: bool = False
    choices: Callable[[], list[str]] | None = None
    pick: Callable[[str], Target] | None = None
    #: seconds a request may take before it fails as TIMEOUT (None: no limit)
    timeout: float | None = None

    @property
    def balanced(self) -> bool:
        """Kafka's isBalanced is the contract (the scope prover judges I3 and I4a then)."""
        return self.balance == "sticky"

    def promise(self, declared: str | None = None, cooperative: bool | None = None) -> Target:
        """Set the balance contract and stickiness from the assignor's name (Kafka's rules)
        or its declaration, and the protocol (by Kafka's name unless ``cooperative``)."""
        if self.assignor is not None:
            self.balance, self.balance_why = contract_of(self.assignor, declared)
            self.sticky = self.assignor in STICKY_FAMILY or declared == "sticky"
            if cooperative is None:
                cooperative = self.assignor == "cooperative-sticky"
            self.protocol = "COOPERATIVE" if cooperative else "EAGER"
        return self

    def close(self) -> None:
        for close in self.closers:
            close()

    def engines(self) -> list[str]:
        out = []
        if self.group is not None:
            out.append("fuzz")
        if self.assign is not None:
            out.append("prove")
        if self.codec is not None:
            out.append("codec")
        return out


def _builtin(name: str, **_: Any) -> Target:
    from .adapters.codecs import BuiltinCodec

    if name == "codec":
        return Target("builtin:codec", None, codec=BuiltinCodec())
    if name not in BUILTIN_ASSIGNORS:
        raise TargetError(f"unknown builtin assignor {name!r}; expected one of "
                          f"{', '.join(BUILTIN_ASSIGNORS)} (or codec)")
    from ..impl.assign_op import run_assign
    from ..impl.assign_session import AssignSession
    from ..impl.assignors import make_assignor
    from ..impl.jsonl import handle
    from .adapters.builtin import BuiltinGroup
    from .adapters.python_assignor import instances_user_data

    return Target(f"builtin:{name}", name, assign=run_assign,
                  group=lambda: BuiltinGroup(f"builtin:{name}"), codec=BuiltinCodec(),
                  hints=MachineHints(name), call=handle,
                  assign_session=lambda: AssignSession(user_data=False),
                  user_data=instances_user_data(lambda: make_assignor(name))).promise()


def _mutant(name: str, **_: Any) -> Target:
    from .zoo.group_mutants import MUTANT_ASSIGNORS, MUTANTS
    from .adapters.python_assignor import PythonTarget, instances_user_data
    from .zoo.entries import ASSIGNOR_MUTANTS, CODEC_MUTANTS

    target = f"mutant:{name}"
    if name in MUTANTS:
        m = MUTANTS[name]
        cls = MUTANT_ASSIGNORS.get(name)
        assign = user_data = session = None
        if cls is not None:
            assign = PythonTarget(target, cls).assign
            user_data = instances_user_data(cls)
            session = _session_of(cls)
        return Target(target, m.assignor, assign=assign, group=m.factory, user_data=user_data,
                      hints=MachineHints(m.assignor, m.profiles, m.user_data_versions),
                      assign_session=session).promise()
    if name in ASSIGNOR_MUTANTS:
        am = ASSIGNOR_MUTANTS[name]
        py = PythonTarget(target, am.cls, am.subscription_version)
        versions = (am.subscription_version,) if am.subscription_version is not None else (3,)
        return Target(target, py.assignor, assign=py.assign, group=py.group_factory(),
                      hints=MachineHints(py.assignor, subscription_versions=versions),
                      user_data=instances_user_data(am.cls),
                      assign_session=_session_of(am.cls, am.subscription_version)
                      ).promise(py.declared, py.cooperative)
    if name in CODEC_MUTANTS:
        return Target(target, None, codec=CODEC_MUTANTS[name]())
    known = sorted([*MUTANTS, *ASSIGNOR_MUTANTS, *CODEC_MUTANTS])
    raise TargetError(f"unknown mutant {name!r}; expected one of {', '.join(known)}")


def _session_of(cls: Callable[[], Any], subscription_version: int | None = None
                ) -> Callable[[], AssignFn]:
    """An assign session for an in-tree (deterministic) assignor class: the prover's cache."""
    from ..impl.assign_session import AssignSession

    return lambda: AssignSession(lambda _: cls(), subscription_version=subscription_version,
                                 user_data=False)


def _python(spec: str, **_: Any) -> Target:
    from .adapters.python_assignor import (
        PythonTarget,
        TargetLoadError,
        assignors_in_module,
        instances_user_data,
        load_maker,
    )

    if ":" not in spec:
        try:
            names = assignors_in_module(spec)
        except TargetLoadError as exc:
            raise TargetError(str(exc)) from None
        return Target(f"python:{spec}", None, choices=lambda: list(names),
                      pick=lambda attr: _python(f"{spec}:{attr}"))
    try:
        py = PythonTarget(f"python:{spec}", load_maker(spec))
        py.check_answers()
    except TargetLoadError as exc:
        raise TargetError(str(exc)) from None
    return Target(py.target, py.assignor, assign=py.assign, group=py.group_factory(),
                  hints=MachineHints(py.assignor), user_data=instances_user_data(py.make)
                  ).promise(py.declared, py.cooperative)


def _kafka_python(name: str, **_: Any) -> Target:
    from .adapters.codecs import KafkaPythonCodec
    from .adapters.kafka_python_assignors import KafkaPythonTarget, TargetUnavailable
    from .adapters.python_assignor import instances_user_data

    try:
        kp = KafkaPythonTarget(f"kafka-python:{name}", name)
    except (ValueError, TargetUnavailable) as exc:
        raise TargetError(str(exc)) from None
    return Target(kp.target, kp.assignor, assign=kp.assign, group=kp.group_factory(),
                  codec=KafkaPythonCodec(), user_data=instances_user_data(kp.make),
                  hints=MachineHints(kp.assignor, profiles=("java",),
                                     subscription_versions=(kp.subscription_version,),
                                     # kafka-python refuses [range, cooperative-sticky]
                                     upgrades=not kp.cooperative)).promise()


def _aiokafka(name: str, **_: Any) -> Target:
    from .adapters.aiokafka_assignors import AiokafkaAssignor
    from .adapters.kafka_python_assignors import TargetUnavailable
    from .adapters.python_assignor import PythonTarget

    try:
        py = PythonTarget(f"aiokafka:{name}", lambda: AiokafkaAssignor(name),
                          subscription_version=0)
    except (ValueError, TargetUnavailable) as exc:
        raise TargetError(str(exc)) from None
    return Target(py.target, py.assignor, assign=py.assign, group=py.group_factory(),
                  hints=MachineHints(py.assignor, profiles=("java",),
                                     subscription_versions=(0,), upgrades=False)
                  ).promise()


def process_target(target: str, process: Any, assignor: str | None) -> Target:
    """A target answered by a JSON-lines process (`jsonl_target.JsonlProcess`) that runs
    the assignor named ``assignor``: ``jsonl:`` and ``java:``. Without one the assignor is
    left open (`resolve` offers Kafka's four; sticky where a caller needs just one)."""
    from .adapters.codecs import JsonlCodec
    from .processes.jsonl_process import JsonlTarget, call_user_data

    name = assignor or "sticky"
    if name not in BUILTIN_ASSIGNORS:
        raise TargetError(f"{target.partition(':')[0]}: unknown assignor {name!r}; expected "
                          f"one of {', '.join(BUILTIN_ASSIGNORS)}")
    jt = JsonlTarget(target, process, name)
    return Target(jt.target, name, assign=jt.assign, group=jt.group_factory(),
                  codec=JsonlCodec(jt), hints=MachineHints(name), fork_safe=False,
                  call=jt.call, user_data=call_user_data(jt.process.call, name),
                  closers=[jt.close], open_assignor=True,
                  timeout=process.timeout).promise()


def _jsonl(command: str, *, assignor: str | None = None, timeout: float | None = None,
           **_: Any) -> Target:
    from .processes.jsonl_process import DEFAULT_TIMEOUT, shared_process

    try:
        process = shared_process(command, timeout or DEFAULT_TIMEOUT)
    except ValueError as exc:
        raise TargetError(str(exc)) from None
    return process_target(f"jsonl:{command}", process, assignor)


def _java(classpath: str, *, assignor: str | None = None, timeout: float | None = None,
          **_: Any) -> Target:
    from .processes.java_runtime import JavaUnavailable
    from .processes.java_process import java_process

    try:
        process = java_process(classpath, timeout)
    except JavaUnavailable as exc:
        raise TargetError(str(exc)) from None
    return process_target(f"java:{classpath}", process, assignor)


def _librdkafka(spec: str, **kwargs: Any) -> Target:
    """``librdkafka:<assignor>[:adversarial]`` is ``wire:librdkafka:…`` by its old name."""
    target = _wire(f"librdkafka:{spec}", **kwargs)
    target.name = f"librdkafka:{spec}"
    return target


def wire_clients(spec: str) -> tuple[tuple[str, ...], str, bool]:
    """``<client>|mixed:<a>+<b>…|cmd=<command>`` ``:<assignor>[:adversarial]`` → clients,
    assignor, adversarial (the command may hold colons: the assignor is the last field)."""
    adversarial = spec.endswith(":adversarial")
    body = spec[:-len(":adversarial")] if adversarial else spec
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


def _wire(spec: str, **_: Any) -> Target:
    import os

    from .wire.group import WireGroup
    from .wire.clients import ClientUnavailable, hello

    clients, assignor, adversarial = wire_clients(spec)
    from .wire.backends.factory import BACKENDS, DEFAULT_BACKEND, backend_missing

    broker = os.environ.get("GROUPCHECK_BROKER") or DEFAULT_BACKEND
    if broker not in BACKENDS:
        raise TargetError(f"wire: unknown broker {broker!r}; expected one of "
                          f"{', '.join(BACKENDS)}")
    if backend_missing(broker):
        raise TargetError(backend_missing(broker))
    try:
        infos = [hello(c) for c in dict.fromkeys(clients)]
    except ClientUnavailable as exc:
        raise TargetError(str(exc)) from None
    for info in infos:
        if assignor not in info.assignors:
            raise TargetError(f"wire: {info.name} ({info.client} {info.version}) supports "
                              f"{', '.join(info.assignors)}, not {assignor}")
    target = f"wire:{spec}"
    profiles = tuple(dict.fromkeys(i.profile for i in infos))
    return Target(target, assignor,
                  group=lambda: WireGroup(target, clients, assignor, broker),
                  hints=MachineHints(assignor, profiles=profiles, upgrades=False, wire=True,
                                     adversarial=adversarial, steering=broker != "mock"),
                  fork_safe=False).promise()


RESOLVERS: dict[str, Callable[..., Target]] = {
    "builtin": _builtin, "mutant": _mutant, "python": _python, "kafka-python": _kafka_python,
    "aiokafka": _aiokafka, "jsonl": _jsonl, "java": _java, "librdkafka": _librdkafka,
    "wire": _wire}
#: kinds whose name may be empty (``java:`` takes its default classpath)
OPTIONAL_NAME = frozenset({"java"})
TARGET_KINDS = ("builtin:<assignor>, mutant:<name>, python:pkg.module[:attr], "
                "kafka-python:<assignor>, aiokafka:<assignor>, jsonl:<command>, "
                "java:[CLASSPATH], wire:<client>:<assignor>[:adversarial], "
                "wire:mixed:<a>+<b>…:<assignor>, wire:cmd=<command>:<assignor>, "
                "librdkafka:<assignor>[:adversarial]")
KINDS = RESOLVERS


def resolve(target: str, *, assignor: str | None = None,
            timeout: float | None = None) -> Target:
    """The `Target` a target string names (raises `TargetError` with one line). A target
    that leaves its assignor open and gets none here offers Kafka's four names to choose
    from (``choices``, ``pick``)."""
    kind, sep, name = target.partition(":")
    if not sep or kind not in RESOLVERS or not (name or kind in OPTIONAL_NAME):
        raise TargetError(f"unknown target {target!r}; expected one of {TARGET_KINDS}")
    resolved = RESOLVERS[kind](name, assignor=assignor, timeout=timeout)
    if resolved.open_assignor and assignor is None and resolved.choices is None:
        resolved.choices = lambda: list(BUILTIN_ASSIGNORS)
        resolved.pick = lambda chosen: RESOLVERS[kind](name, assignor=chosen, timeout=timeout)
    return resolved


def group_target_factory(target: str, assignor: str | None = None) -> Callable[[], GroupTarget]:
    """A factory of fresh group targets for a target string (``assignor``: which one, for a
    target that answers several)."""
    resolved = resolve(target, assignor=assignor)
    if resolved.group is None:
        if resolved.choices is not None and resolved.assignor is None:
            raise TargetError(f"{target} offers several assignors "
                              f"({', '.join(resolved.choices())}); name one")
        raise TargetError(f"{target} is not a group target (it has no assignor)")
    return resolved.group


def make_group_target(target: str) -> GroupTarget:
    return group_target_factory(target)()


def machine_hints(target: str) -> MachineHints:
    """The assignor family and client settings a target's members use."""
    resolved = resolve(target)
    if resolved.hints is None:
        raise TargetError(f"unknown target {target!r}")
    return resolved.hints
