"""Target kinds answered by a JSON-lines process (`registry` loads this module on first
use of one): ``jsonl:<command>`` and ``java:[CLASSPATH]`` / ``java@<release>:`` (Kafka's own
client through groupcheck's driver)."""

from __future__ import annotations

from .adapters.codecs import JsonlCodec, ReleaseCodec
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
from .target import BUILTIN_ASSIGNORS, MachineHints, Target, TargetError

__all__ = ["java_target", "jsonl_target", "offered", "process_target", "profiled"]


def offered(target: str, process: JsonlProcess) -> list[str]:
    """The assignor names ``process`` offers: those it declares (the ``assignors`` op), or
    Kafka's four when it does not know the request (`TargetError` on a malformed answer)."""
    try:
        declared = process.declared_assignors()
    except ValueError as exc:
        raise TargetError(f"{target}: malformed answer to the assignors request: {exc}") \
            from None
    return list(BUILTIN_ASSIGNORS) if declared is None else declared


def process_target(target: str, process: JsonlProcess, assignor: str | None) -> Target:
    """A target answered by a JSON-lines process (`jsonl_process.JsonlProcess`) that runs
    the assignor named ``assignor``: ``jsonl:`` and ``java:``. Without one the assignor is
    left open: `resolve` offers the names the process declares, else Kafka's four (sticky
    where a caller needs just one)."""

    name = assignor or "sticky"
    if name not in BUILTIN_ASSIGNORS and name not in offered(target, process):
        raise TargetError(f"{target.partition(':')[0]}: unknown assignor {name!r}; expected "
                          f"one of {', '.join(offered(target, process))}")
    jt = JsonlTarget(target, process, name)
    return Target(jt.target, name, assign=jt.assign, batch=jt.assign_many,
                  group=jt.group_factory(),
                  codec=JsonlCodec(jt), hints=MachineHints(name), fork_safe=False,
                  call=jt.call, user_data=call_user_data(jt.process.call, name),
                  make=jt.make, closers=[jt.close], open_assignor=True, timeout=process.timeout,
                  running=lambda: process.running,
                  choices=None if assignor else lambda: offered(target, process)).promise()


def jsonl_target(command: str, *, settings: Settings, assignor: str | None = None,
                 timeout: float | None = None) -> Target:
    """``jsonl:<command>``: one shared process per command, its time limit ``timeout``
    (else the settings')."""
    try:
        process = shared_process(command, timeout or settings.jsonl_timeout)
    except ValueError as exc:
        raise TargetError(str(exc)) from None
    return process_target(f"jsonl:{command}", process, assignor)


def java_target(classpath: str, *, settings: Settings, assignor: str | None = None,
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
