"""Target strings → what the engines can run.

* ``builtin:<assignor>`` — our coordinator, consumers and one of Kafka's four assignors;
  ``builtin:codec`` — our subscription codec alone;
* ``mutant:<name>`` — a deliberately broken variant (the bug zoo, `zoo`);
* ``python:pkg.module:attr`` — a user's assignor with our assignor protocol;
  ``python:pkg.module`` — every assignor object the module defines (`adapters.python_assignor`);
* ``kafka-python:<assignor>`` — kafka-python's assignor through an adapter;
* ``aiokafka:<assignor>`` — aiokafka's assignor, called as its coordinator calls it;
* ``jsonl:<command>`` — a process speaking the JSON-lines contract (which assignor it runs
  is the ``assignor`` argument of `resolve`; without one the target leaves it open);
* ``java:[CLASSPATH]`` — Kafka's own Java client (its ConsumerProtocol and four assignors)
  through groupcheck's driver, a JSON-lines process like ``jsonl:`` (`processes.java_process`);
  its assignor is left open the same way;
* ``wire:<client>:<assignor>[:adversarial]``, ``wire:mixed:<a>+<b>…:<assignor>``,
  ``wire:cmd=<command>:<assignor>`` — real consumers in member drivers on a fresh backend
  cluster per test case (`wire.group`; the backend from ``Settings.broker``: ``groupcheck``,
  groupcheck's own broker, by default, or ``mock``, librdkafka's mock cluster);
  ``librdkafka:<assignor>[:adversarial]`` is ``wire:librdkafka:…``.

`resolve` gives a `Target` (``target.py``); the environment's part (`settings.Settings`:
the wire backend, the default Kafka classpath, the process time limit) comes from the
caller, which reads it once. Group targets are made fresh for each example.

A target string may leave the assignor open (``jsonl:``, ``java:``, ``python:pkg.module``):
then the `Target` has ``choices`` (names to pick from) and ``pick(name)`` (the target for
one of them), and `offers.expand` asks each choice what it answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..impl.assign_op import run_assign
from ..impl.assign_session import AssignSession
from ..impl.assignors import make_assignor
from ..impl.jsonl import handle
from ..properties.group import GroupTarget
from .adapters.aiokafka_assignors import AiokafkaAssignor
from .adapters.builtin import BuiltinGroup
from .adapters.codecs import BuiltinCodec, JsonlCodec, KafkaPythonCodec, ReleaseCodec
from .adapters.kafka_python_assignors import KafkaPythonTarget
from .adapters.python_assignor import (
    PythonTarget,
    TargetLoadError,
    assignors_in_module,
    instances_user_data,
    load_maker,
)
from .client_assignors import TargetUnavailable
from .processes.java_process import java_classpath, java_process, java_profile
from .processes.java_runtime import JavaUnavailable
from .processes.jsonl_process import (
    JsonlProcess,
    JsonlTarget,
    TargetAnswerError,
    TargetFailure,
    call_user_data,
    shared_process,
)
from .profile import ProfileError, ReleaseProfile
from .settings import Settings
from .target import BUILTIN_ASSIGNORS, AssignFn, MachineHints, Target, TargetError
from .wire.backends.factory import BACKENDS, backend_missing
from .wire.clients import ClientUnavailable, built_client, hello
from .wire.wire_group import WireGroup
from .zoo.entries import ASSIGNOR_MUTANTS, CODEC_MUTANTS
from .zoo.group_mutants import MUTANT_ASSIGNORS, MUTANTS

__all__ = ["KINDS", "NO_SETTINGS", "OPTIONAL_NAME", "RESOLVERS", "TARGET_KINDS",
           "client_setup", "group_target_factory", "machine_hints", "make_group_target",
           "process_target", "profiled", "resolve", "wire_clients"]

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
                  user_data=instances_user_data(lambda: make_assignor(name))).promise()


def _mutant(name: str, **_: Any) -> Target:
    """``mutant:<name>``: a group mutant, an assignor mutant or a codec mutant of the zoo."""
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

    return lambda: AssignSession(lambda _: cls(), subscription_version=subscription_version,
                                 user_data=False)


def _python(spec: str, **_: Any) -> Target:
    """``python:pkg.module:attr`` (one assignor) or ``python:pkg.module`` (every one)."""
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
    """``kafka-python:<assignor>``: that library's assignor as its consumer calls it."""
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
    """``aiokafka:<assignor>``: that library's assignor as its coordinator calls it."""
    try:
        py = PythonTarget(f"aiokafka:{name}", lambda: AiokafkaAssignor(name),
                          subscription_version=0)
    except (ValueError, TargetUnavailable) as exc:
        raise TargetError(str(exc)) from None
    return Target(py.target, py.assignor, assign=py.assign, group=py.group_factory(),
                  hints=MachineHints(py.assignor, profiles=("java",),
                                     subscription_versions=(0,), upgrades=False)
                  ).promise()


def process_target(target: str, process: JsonlProcess, assignor: str | None) -> Target:
    """A target answered by a JSON-lines process (`jsonl_process.JsonlProcess`) that runs
    the assignor named ``assignor``: ``jsonl:`` and ``java:``. Without one the assignor is
    left open (`resolve` offers Kafka's four; sticky where a caller needs just one)."""

    name = assignor or "sticky"
    if name not in BUILTIN_ASSIGNORS:
        raise TargetError(f"{target.partition(':')[0]}: unknown assignor {name!r}; expected "
                          f"one of {', '.join(BUILTIN_ASSIGNORS)}")
    jt = JsonlTarget(target, process, name)
    return Target(jt.target, name, assign=jt.assign, batch=jt.assign_many,
                  group=jt.group_factory(),
                  codec=JsonlCodec(jt), hints=MachineHints(name), fork_safe=False,
                  call=jt.call, user_data=call_user_data(jt.process.call, name),
                  closers=[jt.close], open_assignor=True,
                  timeout=process.timeout).promise()


def _jsonl(command: str, *, settings: Settings, assignor: str | None = None,
           timeout: float | None = None) -> Target:
    """``jsonl:<command>``: one shared process per command, its time limit ``timeout``
    (else the settings')."""
    try:
        process = shared_process(command, timeout or settings.jsonl_timeout)
    except ValueError as exc:
        raise TargetError(str(exc)) from None
    return process_target(f"jsonl:{command}", process, assignor)


def _java(classpath: str, *, settings: Settings, assignor: str | None = None,
          timeout: float | None = None, release: str = "") -> Target:
    """``java:[CLASSPATH]``: groupcheck's driver on Kafka's client (an empty classpath is
    the settings' ``kafka_classpath``); ``java@<release>:[ASSIGNOR]``: on that release of
    it, from the settings' Maven repository (one JVM per release serves every request)."""
    if release and classpath in BUILTIN_ASSIGNORS:
        assignor, classpath = assignor or classpath, ""  # java@3.4.0:range
    elif release and classpath:
        raise TargetError(f"java@{release}: names its release; after the colon it takes an "
                          f"assignor ({', '.join(BUILTIN_ASSIGNORS)}), not {classpath!r}")
    name = f"java@{release}:" if release else f"java:{classpath}"
    try:
        process = java_process(java_classpath(release, classpath, settings),
                               timeout or settings.jsonl_timeout,
                               label=name if release else "")
        profile = java_profile(process)
    except JavaUnavailable as exc:
        raise TargetError(str(exc)) from None
    except (TargetFailure, TargetAnswerError, ProfileError) as exc:
        raise TargetError(f"{name} cannot tell what its client implements: {exc}") from None
    return profiled(process_target(name, process, assignor), profile)


def profiled(target: Target, profile: ReleaseProfile) -> Target:
    """``target`` held to what its client release implements: the subscription versions
    its members write (the state machine's members write those), and the profile the
    engines ask (`Target.profile`)."""
    target.profile = profile
    if target.codec is not None:
        target.codec = ReleaseCodec(target.codec, profile)
    if target.hints is not None:
        target.hints.subscription_versions = profile.subscription_versions.reads
        target.hints.generations = profile.has("generation")
    return target


def _librdkafka(spec: str, **kwargs: Any) -> Target:
    """``librdkafka:<assignor>[:adversarial]`` is ``wire:librdkafka:…`` by its old name."""
    target = _wire(f"librdkafka:{spec}", **kwargs)
    target.name = f"librdkafka:{spec}"
    return target


def _client_classpath(client: str, settings: Settings) -> str:
    """Kafka's client for a java member driver (``java``: the settings' classpath;
    ``java@<release>``: that release); '' for the other clients."""
    if built_client(client) != "java":
        return ""
    return java_classpath(client.partition("@")[2], "", settings)


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


def _wire(spec: str, *, settings: Settings, **_: Any) -> Target:
    """``wire:…``: real consumers on the settings' backend (checked before any driver
    starts), each client's driver asked what it supports."""
    clients, assignor, adversarial = wire_clients(spec)
    broker = settings.broker
    if broker not in BACKENDS:
        raise TargetError(f"wire: unknown broker {broker!r}; expected one of "
                          f"{', '.join(BACKENDS)}")
    if backend_missing(broker):
        raise TargetError(backend_missing(broker))
    try:
        classpaths = {c: _client_classpath(c, settings) for c in clients}
        infos = [hello(c, classpaths[c]) for c in dict.fromkeys(clients)]
    except (ClientUnavailable, JavaUnavailable) as exc:
        raise TargetError(str(exc)) from None
    for info in infos:
        lacking = [a for a in assignor.split(",") if a not in info.assignors]
        if lacking:
            raise TargetError(f"wire: {info.name} ({info.client} {info.version}) supports "
                              f"{', '.join(info.assignors)}, not {', '.join(lacking)}")
    target = f"wire:{spec}"
    profiles = tuple(dict.fromkeys(i.profile for i in infos))
    hints = MachineHints(assignor, profiles=profiles, upgrades=False, wire=True,
                         adversarial=adversarial, steering=broker != "mock")
    releases = {c: _release_profile(c, classpaths[c], settings)
                for c in dict.fromkeys(clients) if built_client(c) == "java" and "@" in c}
    generationless = frozenset(c for c, p in releases.items() if not p.has("generation"))
    return Target(target, assignor,
                  group=lambda: WireGroup(target, clients, assignor, broker, classpaths,
                                          settings.wire_trace, generationless,
                                          lambda c: client_setup(c, settings)),
                  hints=hints, fork_safe=False,
                  profile=next(iter(releases.values())) if len(releases) == 1 else None
                  ).promise()


def client_setup(client: str, settings: Settings) -> tuple[str, bool]:
    """What a wire group needs to start a member of ``client``: its driver's classpath
    (Kafka's client, for java members) and whether its release sends no generation."""
    try:
        classpath = _client_classpath(client, settings)
    except JavaUnavailable as exc:
        raise TargetError(str(exc)) from None
    if built_client(client) != "java" or "@" not in client:
        return classpath, False
    return classpath, not _release_profile(client, classpath, settings).has("generation")


def _release_profile(client: str, classpath: str, settings: Settings) -> ReleaseProfile:
    """What the release of a ``java@<release>`` member implements, asked of the ``java:``
    driver on the same classpath (one JVM per release, kept for the run)."""
    try:
        return java_profile(java_process(classpath, settings.jsonl_timeout, label=client))
    except (JavaUnavailable, TargetFailure, TargetAnswerError, ProfileError) as exc:
        raise TargetError(f"wire: {client} cannot tell what its client implements: {exc}"
                          ) from None


RESOLVERS: dict[str, Callable[..., Target]] = {
    "builtin": _builtin, "mutant": _mutant, "python": _python, "kafka-python": _kafka_python,
    "aiokafka": _aiokafka, "jsonl": _jsonl, "java": _java, "librdkafka": _librdkafka,
    "wire": _wire}
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
    that leaves its assignor open and gets none here offers Kafka's four names to choose
    from (``choices``, ``pick``). ``settings``: the environment's part, read by the caller."""
    kind, sep, name = target.partition(":")
    kind, at, release = kind.partition("@")
    if not sep or kind not in RESOLVERS or not (name or kind in OPTIONAL_NAME) \
            or (at and (kind not in RELEASED or not release)):
        raise TargetError(f"unknown target {target!r}; expected one of {TARGET_KINDS}")
    made = RESOLVERS[kind]
    extra = {"release": release} if at else {}
    resolved = made(name, assignor=assignor, timeout=timeout, settings=settings, **extra)
    if resolved.open_assignor and assignor is None and resolved.choices is None:
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
