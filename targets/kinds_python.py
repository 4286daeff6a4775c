"""Target kinds made of Python assignors (`registry` loads this module on first use of
one): ``mutant:`` (the bug zoo), ``python:`` (a user's assignor), ``kafka-python:`` and
``aiokafka:`` (those libraries' assignors through adapters)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..impl.assign_session import AssignSession
from .adapters.aiokafka_assignors import AiokafkaAssignor
from .adapters.codecs import KafkaPythonCodec
from .adapters.kafka_python_assignors import KafkaPythonTarget
from .adapters.python_assignor import (
    PythonTarget,
    TargetLoadError,
    assignors_in_module,
    instances_user_data,
    load_maker,
)
from .client_assignors import TargetUnavailable
from .target import AssignFn, MachineHints, Target, TargetError
from .zoo.entries import ASSIGNOR_MUTANTS, CODEC_MUTANTS
from .zoo.group_mutants import MUTANT_ASSIGNORS, MUTANTS

__all__ = ["aiokafka_target", "kafka_python_target", "mutant_target", "python_target"]


def mutant_target(name: str, **_: Any) -> Target:
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
                      assign_session=session, make=cls).promise()
    if name in ASSIGNOR_MUTANTS:
        am = ASSIGNOR_MUTANTS[name]
        py = PythonTarget(target, am.cls, am.subscription_version)
        versions = (am.subscription_version,) if am.subscription_version is not None else (3,)
        return Target(target, py.assignor, assign=py.assign, group=py.group_factory(),
                      hints=MachineHints(py.assignor, subscription_versions=versions),
                      user_data=instances_user_data(am.cls),
                      assign_session=_session_of(am.cls, am.subscription_version),
                      make=am.cls).promise(py.declared, py.cooperative)
    if name in CODEC_MUTANTS:
        return Target(target, None, codec=CODEC_MUTANTS[name]())
    known = sorted([*MUTANTS, *ASSIGNOR_MUTANTS, *CODEC_MUTANTS])
    raise TargetError(f"unknown mutant {name!r}; expected one of {', '.join(known)}")


def _session_of(cls: Callable[[], Any], subscription_version: int | None = None
                ) -> Callable[[], AssignFn]:
    """An assign session for an in-tree (deterministic) assignor class: the prover's cache."""

    return lambda: AssignSession(lambda _: cls(), subscription_version=subscription_version,
                                 user_data=False)


def python_target(spec: str, **_: Any) -> Target:
    """``python:pkg.module:attr`` (one assignor) or ``python:pkg.module`` (every one)."""
    if ":" not in spec:
        try:
            names = assignors_in_module(spec)
        except TargetLoadError as exc:
            raise TargetError(str(exc)) from None
        return Target(f"python:{spec}", None, choices=lambda: list(names),
                      pick=lambda attr: python_target(f"{spec}:{attr}"))
    try:
        py = PythonTarget(f"python:{spec}", load_maker(spec))
        py.check_answers()
    except TargetLoadError as exc:
        raise TargetError(str(exc)) from None
    return Target(py.target, py.assignor, assign=py.assign, group=py.group_factory(),
                  hints=MachineHints(py.assignor), user_data=instances_user_data(py.make),
                  make=py.make).promise(py.declared, py.cooperative)


def kafka_python_target(name: str, **_: Any) -> Target:
    """``kafka-python:<assignor>``: that library's assignor as its consumer calls it."""
    try:
        kp = KafkaPythonTarget(f"kafka-python:{name}", name)
    except (ValueError, TargetUnavailable) as exc:
        raise TargetError(str(exc)) from None
    return Target(kp.target, kp.assignor, assign=kp.assign, group=kp.group_factory(),
                  codec=KafkaPythonCodec(), user_data=instances_user_data(kp.make), make=kp.make,
                  hints=MachineHints(kp.assignor, profiles=("java",),
                                     subscription_versions=(kp.subscription_version,),
                                     # kafka-python refuses [range, cooperative-sticky]
                                     upgrades=not kp.cooperative)).promise()


def aiokafka_target(name: str, **_: Any) -> Target:
    """``aiokafka:<assignor>``: that library's assignor as its coordinator calls it."""
    try:
        py = PythonTarget(f"aiokafka:{name}", lambda: AiokafkaAssignor(name),
                          subscription_version=0)
    except (ValueError, TargetUnavailable) as exc:
        raise TargetError(str(exc)) from None
    return Target(py.target, py.assignor, assign=py.assign, group=py.group_factory(),
                  hints=MachineHints(py.assignor, profiles=("java",),
                                     subscription_versions=(0,), upgrades=False),
                  make=py.make).promise()
