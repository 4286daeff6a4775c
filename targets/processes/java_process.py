"""``java:[CLASSPATH]``: Kafka's own Java client as a target.

What runs: groupcheck's driver (``java_driver_src/*.java``), a small Java program that answers
the JSON-lines contract with Kafka's real ``ConsumerProtocol`` and its four classic
assignors, emulating client mode as a consumer configured with one assignor builds its
subscription (see ``AssignOp.java``). It is compiled on first use against the classpath
(`java_runtime`) and runs as one long-lived JVM per Python process, through the same
`jsonl_process.JsonlProcess` as any ``jsonl:`` target: every request has a time limit, a JVM
that does not answer in time is killed (the request fails with `TargetTimeout`, which every
engine reports as ``TIMEOUT``) and the next request starts a fresh one.

So a ``java:`` target is a plain ``assign(request) -> response`` function (the request
names its assignor) plus the other ops, usable wherever a ``jsonl:`` target is: the
registry's `Target` for check, prove, fuzz, diff and replay, and `audit_parts` for the
audit's executors. `java_profile` asks the driver once per process what its client release
can do (`profile.ReleaseProfile`).
"""

from __future__ import annotations

import threading
import weakref

from ...properties.jsonl_shapes import AssignFn
from ..adapters.codecs import JsonlCodec
from ..profile import ReleaseProfile
from ..settings import Settings
from .java_runtime import JavaUnavailable, driver_command
from .jsonl_process import DEFAULT_TIMEOUT, JsonlProcess, JsonlTarget, shared_process
from .maven_repo import release_classpath

__all__ = ["AssignFn", "audit_parts", "java_classpath", "java_process", "java_profile",
           "split_release"]



def split_release(kind: str) -> tuple[str, str]:
    """``java@3.4.0`` → ``("java", "3.4.0")``; ``java`` → ``("java", "")``."""
    base, _, version = kind.partition("@")
    return base, version


def java_classpath(version: str, classpath: str, settings: Settings) -> str:
    """The classpath Kafka's client is run from: the release ``version`` (``java@<version>``,
    from the settings' Maven repository or Kafka distribution), else ``classpath``, else the
    settings' ``kafka_classpath`` (''  when none is set: the caller's error to give)."""
    if version:
        if classpath:
            raise JavaUnavailable(f"java@{version}: names its release; it takes no classpath "
                                  f"(give java:{classpath} instead)")
        return release_classpath(version, settings.maven_repo, settings.kafka_home)
    return classpath or settings.kafka_classpath


def java_process(classpath: str, timeout: float | None = None,
                 default: str = "", label: str = "") -> JsonlProcess:
    """The driver's process for ``classpath`` (``default`` when it is empty; compiled first
    if needed; the JVM itself starts with the first request), named ``label`` in errors.
    Raises `java_runtime.JavaUnavailable`."""
    label = label or (f"java:{classpath}" if classpath else "java (default classpath)")
    return shared_process(driver_command(classpath, default), timeout or DEFAULT_TIMEOUT,
                          label=label)


def audit_parts(classpath: str, assignor: str, timeout: float | None = None,
                default: str = "") -> tuple[AssignFn, JsonlCodec]:
    """The assign function and the codec of ``java:<classpath>`` (``default`` when it is
    empty) for one assignor, with the JVM started (so its start-up is not charged to the
    first request's time limit)."""
    process = java_process(classpath, timeout, default)
    target = JsonlTarget(f"{assignor}@java:{classpath}", process, assignor)
    process.call({"op": "ping"})
    return target.assign, JsonlCodec(target)


_PROFILES: weakref.WeakKeyDictionary[JsonlProcess, ReleaseProfile] = weakref.WeakKeyDictionary()
_PROFILES_LOCK = threading.Lock()


def java_profile(process: JsonlProcess) -> ReleaseProfile:
    """The client release behind ``process`` (a `java_process`), from its driver's
    ``profile`` op, asked once per process (a restarted JVM runs the same classpath).
    Raises `jsonl_process.TargetAnswerError` or `TargetFailure` when the driver cannot
    answer, `profile.ProfileError` when the answer has the wrong shape."""
    with _PROFILES_LOCK:
        known = _PROFILES.get(process)
    if known is not None:
        return known
    profile = ReleaseProfile.from_answer("java", process.call({"op": "profile"}))
    with _PROFILES_LOCK:
        return _PROFILES.setdefault(process, profile)
