"""Which member driver runs which client, and what its ``hello`` said.

A client name in a wire target is one of `SHIPPED` (a driver that ships with groupcheck) or
``cmd=<shell command>`` (a user's own driver, started with ``sh -c``). `hello` starts the
driver once per name and process and keeps its answer (client, version, assignors, profile,
crash mode): a target is checked against it before any group runs. `missing` says why a
shipped driver cannot run here (its library or runtime is absent) — the one reason a test
may skip.
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
from dataclasses import dataclass
from typing import Any

from ...properties.membership import PROFILE_TABLE

#: shipped drivers: client name → (command line, what must be importable or on PATH)
SHIPPED: dict[str, tuple[tuple[str, ...], str]] = {
    "librdkafka": ((sys.executable, "-m", "groupcheck.targets.wire.drivers.librdkafka_member"),
                   "python:confluent_kafka"),
    "kafka-python": ((sys.executable, "-m", "groupcheck.targets.wire.drivers.kafka_python_member"),
                     "python:kafka"),
    "aiokafka": ((sys.executable, "-m", "groupcheck.targets.wire.drivers.aiokafka_member"),
                 "python:aiokafka"),
}
#: shipped drivers in other languages: client name → the module that builds them on first use
#: (its ``command()`` gives the command line, its ``missing()`` what this machine lacks)
BUILT: dict[str, str] = {
    "java": "groupcheck.targets.wire.drivers.java_member",
    "kafkajs": "groupcheck.targets.wire.drivers.kafkajs_member",
}
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


def argv(name: str) -> list[str]:
    if name.startswith("cmd="):
        command = name[len("cmd="):].strip()
        if not command:
            raise ClientUnavailable("wire: cmd= needs a shell command")
        return ["sh", "-c", command]
    if name in BUILT:
        reason = missing(name)
        if reason:
            raise ClientUnavailable(reason)
        try:
            return list(importlib.import_module(BUILT[name]).command())
        except RuntimeError as exc:  # a failed build: javac or npm said why
            raise ClientUnavailable(str(exc)) from None
    if name not in SHIPPED:
        raise ClientUnavailable(f"wire: unknown client {name!r}; expected one of "
                                f"{', '.join([*SHIPPED, *BUILT])} or cmd=<shell command>")
    return list(SHIPPED[name][0])


def missing(name: str) -> str:
    """Why a shipped client cannot run on this machine ('' when it can)."""
    if name.startswith("cmd="):
        return ""
    if name in BUILT:
        return str(importlib.import_module(BUILT[name]).missing())
    argv(name)
    need = SHIPPED[name][1]
    kind, _, what = need.partition(":")
    if kind == "python" and importlib.util.find_spec(what) is None:
        return f"{name}: the Python package {what} is not installed (pip install groupcheck[peers])"
    if kind == "path" and shutil.which(what) is None:
        return f"{name}: {what} is not on PATH"
    return ""


_HELLO: dict[str, ClientInfo] = {}


def hello(name: str) -> ClientInfo:
    """The driver's own account of itself (asked once per process)."""
    if name in _HELLO:
        return _HELLO[name]
    reason = missing(name)
    if reason:
        raise ClientUnavailable(reason)
    from .driver_process import CommandFailed, DriverError, DriverProcess

    driver = DriverProcess(argv(name), name, lambda _d, _m: None, DRIVER_ENV)
    try:
        answer = driver.call("hello")
    except (DriverError, CommandFailed) as exc:
        raise ClientUnavailable(f"wire: {exc}") from None
    finally:
        driver.close()
    info = _info(name, answer)
    _HELLO[name] = info
    return info


def _info(name: str, answer: dict[str, Any]) -> ClientInfo:
    profile = str(answer.get("profile", "kip"))
    if profile not in PROFILE_TABLE:
        raise ClientUnavailable(f"wire: {name} announces profile {profile!r}; expected one "
                                f"of {', '.join(PROFILE_TABLE)}")
    crash = str(answer.get("crash", "command"))
    if crash not in ("command", "kill"):
        raise ClientUnavailable(f"wire: {name} announces crash {crash!r}; expected command "
                                "or kill")
    return ClientInfo(name, str(answer.get("client", name)), str(answer.get("version", "?")),
                      tuple(str(a) for a in answer.get("assignors") or ()), profile, crash)
