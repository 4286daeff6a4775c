"""Which member driver runs which client, and what its ``hello`` said.

A client name in a wire target is one of `SHIPPED` (a driver that ships with groupcheck, on
the harness's own installed library), one of `BUILT` (``java`` may name its release:
``java@3.4.0``, whose classpath the caller resolves), a release of another shipped client
(``librdkafka@2.3.0``, ``kafka-python@2.0.2``, ``aiokafka@0.14.0``, ``kafkajs@1.16.0``: the
driver runs in that release's own environment, installed into the cache on first use by
`release_envs`) or ``cmd=<shell command>`` (a user's own driver, started with ``sh -c``). `hello`
starts the driver once per name and process and keeps its answer (client, version,
assignors, profile, crash mode): a target is checked against it before any group runs.
`missing` says why a shipped driver cannot run here (its library or runtime is absent) — the
one reason a test may skip. The java driver runs on Kafka's client: every function takes the
classpath the caller resolved from its settings.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from dataclasses import dataclass

from ...properties.membership import PROFILE_TABLE
from . import release_envs
from .driver_process import CommandFailed, DriverError, DriverProcess
from .drivers import java_member, kafkajs_member
from .drivers.messages import COMMIT_STYLES, DEFAULT_COMMIT_STYLE, Ack

__all__ = ["BUILT", "DRIVER_ENV", "SHIPPED", "ClientInfo", "ClientUnavailable", "argv",
           "built_client", "hello", "missing"]

#: shipped drivers: client name → (command line, what must be importable or on PATH)
SHIPPED: dict[str, tuple[tuple[str, ...], str]] = {
    "librdkafka": ((sys.executable, "-m", "groupcheck.targets.wire.drivers.librdkafka_member"),
                   "python:confluent_kafka"),
    "kafka-python": ((sys.executable, "-m", "groupcheck.targets.wire.drivers.kafka_python_member"),
                     "python:kafka"),
    "aiokafka": ((sys.executable, "-m", "groupcheck.targets.wire.drivers.aiokafka_member"),
                 "python:aiokafka"),
}
#: shipped drivers in other languages, built on first use
BUILT = ("java", "kafkajs")
#: fixed hash seed for the Python drivers: kafka-python writes topics in set order
DRIVER_ENV = {"PYTHONHASHSEED": "0"}


class ClientUnavailable(ValueError):
    """A client name that names no driver, or whose driver cannot run here."""


@dataclass(frozen=True)
class ClientInfo:
    """A driver's ``hello``: who it is and what it can do."""

    name: str  # the name in the target string
    client: str
    version: str
    assignors: tuple[str, ...]
    profile: str
    crash: str  # "command" | "kill"
    #: the client takes a group instance id (KIP-345); a driver that does not say has none
    static_membership: bool = False
    #: the commit styles its driver offers (the contract's); a driver that does not say: none
    commit_styles: tuple[str, ...] = (DEFAULT_COMMIT_STYLE,)


def _built_missing(name: str, classpath: str) -> str:
    return java_member.missing(classpath) if name == "java" else kafkajs_member.missing()


def _built_command(name: str, classpath: str) -> list[str]:
    return java_member.command(classpath) if name == "java" else kafkajs_member.command()


def built_client(name: str) -> str:
    """The built driver a client name runs (``java@3.4.0`` → ``java``; '' for none)."""
    base, at, release = name.partition("@")
    if base in BUILT and (not at or (base == "java" and release)):
        return base
    return ""


def argv(name: str, classpath: str = "") -> list[str]:
    """The command line that starts the driver of client ``name`` (``classpath``: Kafka's
    client, for the java driver)."""
    if name.startswith("cmd="):
        command = name[len("cmd="):].strip()
        if not command:
            raise ClientUnavailable("wire: cmd= needs a shell command")
        return ["sh", "-c", command]
    if built_client(name):
        reason = missing(name, classpath)
        if reason:
            raise ClientUnavailable(reason)
        try:
            return _built_command(built_client(name), classpath)
        except RuntimeError as exc:  # a failed build: javac or npm said why
            raise ClientUnavailable(str(exc)) from None
    if release_envs.is_release(name):
        try:
            return release_envs.command(name)
        except release_envs.ReleaseUnavailable as exc:
            raise ClientUnavailable(str(exc)) from None
    if name not in SHIPPED:
        releases = ", ".join(f"{c}@<version>" for c in (*release_envs.RELEASE_CLIENTS, "java"))
        raise ClientUnavailable(f"wire: unknown client {name!r}; expected one of "
                                f"{', '.join([*SHIPPED, *BUILT])}, {releases} or "
                                "cmd=<shell command>")
    return list(SHIPPED[name][0])


def missing(name: str, classpath: str = "") -> str:
    """Why a shipped client cannot run on this machine ('' when it can). A release
    (``kafka-python@2.0.2``) is installed into the cache here on first use: it is missing
    when that fails (offline, or no such release)."""
    if name.startswith("cmd="):
        return ""
    if built_client(name):
        return _built_missing(built_client(name), classpath)
    if release_envs.is_release(name):
        return release_envs.missing(name)
    argv(name)
    need = SHIPPED[name][1]
    kind, _, what = need.partition(":")
    if kind == "python" and importlib.util.find_spec(what) is None:
        return f"{name}: the Python package {what} is not installed (pip install groupcheck[peers])"
    if kind == "path" and shutil.which(what) is None:
        return f"{name}: {what} is not on PATH"
    return ""


_HELLO: dict[tuple[str, str], ClientInfo] = {}


def hello(name: str, classpath: str = "") -> ClientInfo:
    """The driver's own account of itself (asked once per process and classpath)."""
    key = (name, classpath if built_client(name) == "java" else "")
    if key in _HELLO:
        return _HELLO[key]
    reason = missing(name, classpath)
    if reason:
        raise ClientUnavailable(reason)
    driver = DriverProcess(argv(name, classpath), name, lambda _d, _m: None, DRIVER_ENV)
    try:
        answer = driver.call("hello")
    except (DriverError, CommandFailed) as exc:
        raise ClientUnavailable(f"wire: {exc}") from None
    finally:
        driver.close()
    info = _info(name, answer)
    _HELLO[key] = info
    return info


def _info(name: str, answer: Ack) -> ClientInfo:
    profile = str(answer.get("profile", "kip"))
    if profile not in PROFILE_TABLE:
        raise ClientUnavailable(f"wire: {name} announces profile {profile!r}; expected one "
                                f"of {', '.join(PROFILE_TABLE)}")
    crash = str(answer.get("crash", "command"))
    if crash not in ("command", "kill"):
        raise ClientUnavailable(f"wire: {name} announces crash {crash!r}; expected command "
                                "or kill")
    styles = tuple(str(s) for s in answer.get("commit_styles") or (DEFAULT_COMMIT_STYLE,))
    if not set(styles) <= set(COMMIT_STYLES):
        raise ClientUnavailable(f"wire: {name} announces commit styles {list(styles)}; "
                                f"expected some of {', '.join(COMMIT_STYLES)}")
    return ClientInfo(name, str(answer.get("client", name)), str(answer.get("version", "?")),
                      tuple(str(a) for a in answer.get("assignors") or ()), profile, crash,
                      answer.get("static_membership") is True, styles)
