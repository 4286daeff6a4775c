"""Target kinds of real consumers on the wire (`registry` loads this module on first use of
one): ``wire:…`` and ``librdkafka:…``, and what a wire group needs to start a member of a
client (`client_setup`)."""

from __future__ import annotations

from typing import Any

from .processes.java_process import java_classpath, java_process, java_profile
from .processes.java_runtime import JavaUnavailable
from .processes.jsonl_process import TargetAnswerError, TargetFailure
from .profile import ProfileError, ReleaseProfile
from .registry import wire_clients
from .settings import Settings
from .target import MachineHints, Target, TargetError
from .wire.backends.factory import BACKENDS, backend_missing
from .wire.clients import ClientUnavailable, built_client, hello
from .wire.members import offered_styles
from .wire.wire_group import WireGroup

__all__ = ["client_setup", "librdkafka_target", "wire_target"]


def librdkafka_target(spec: str, **kwargs: Any) -> Target:
    """``librdkafka:<assignor>[:adversarial]`` is ``wire:librdkafka:…`` by its old name."""
    target = wire_target(f"librdkafka:{spec}", **kwargs)
    target.name = f"librdkafka:{spec}"
    return target


def _client_classpath(client: str, settings: Settings) -> str:
    """Kafka's client for a java member driver (``java``: the settings' classpath;
    ``java@<release>``: that release); '' for the other clients."""
    if built_client(client) != "java":
        return ""
    return java_classpath(client.partition("@")[2], "", settings)


def wire_target(spec: str, *, settings: Settings, **_: Any) -> Target:
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
    hints.commit_styles = offered_styles(infos)
    releases = {c: _release_profile(c, classpaths[c], settings)
                for c in dict.fromkeys(clients) if built_client(c) == "java" and "@" in c}
    generationless = frozenset(c for c, p in releases.items() if not p.has("generation"))
    return Target(target, assignor,
                  group=lambda: WireGroup(target, clients, assignor, broker, classpaths,
                                          settings.wire_trace, generationless,
                                          lambda c: client_setup(c, settings),
                                          nodes=settings.broker_nodes),
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
