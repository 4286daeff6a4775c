"""The environment the tests run in, read once, as the command line reads it at its edge:
the targets' settings (``GROUPCHECK_KAFKA_CLASSPATH`` for ``java:`` and the java member
driver, ``GROUPCHECK_BROKER``, …) and the golden vectors' folder. The registry's functions
below are the library's, with these settings passed down (``broker`` picks a backend)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from groupcheck.cli.shared import Environment
from groupcheck.properties.group import GroupTarget
from groupcheck.targets import registry
from groupcheck.targets.settings import Settings
from groupcheck.targets.target import Target
from groupcheck.targets.wire import clients

ENVIRONMENT = Environment.read(os.environ)
SETTINGS = ENVIRONMENT.settings
#: Kafka's client jars, for ``java:`` targets and the java member driver ('' when unset)
CLASSPATH = SETTINGS.kafka_classpath


def on_broker(broker: str) -> Settings:
    """The settings with ``broker`` as the wire backend (what ``--broker`` does)."""
    return replace(SETTINGS, broker=broker)


def resolve(target: str, *, settings: Settings = SETTINGS, **options: Any) -> Target:
    return registry.resolve(target, settings=settings, **options)


def group_target_factory(target: str, assignor: str | None = None,
                         settings: Settings = SETTINGS) -> Callable[[], GroupTarget]:
    return registry.group_target_factory(target, assignor, settings)


def make_group_target(target: str, settings: Settings = SETTINGS) -> GroupTarget:
    return registry.make_group_target(target, settings)


def missing(client: str) -> str:
    """Why a wire client cannot run here ('' when it can), on these settings."""
    return clients.missing(client, CLASSPATH)
