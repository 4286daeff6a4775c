"""Kafka's Java client for the ``java:`` target's tests and the broker's second reader.

Its classpath comes from ``$GROUPCHECK_KAFKA_CLASSPATH`` (read once, `environment`). Without a
JDK or the classpath these tests are skipped, with the reason, unless
``GROUPCHECK_REQUIRE_KAFKA`` is set (CI sets it), in which case their absence is an error.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

from groupcheck.targets.processes.java_frames import JavaFrameReader
from groupcheck.targets.processes.java_runtime import JavaUnavailable, driver_command

from helpers.environment import CLASSPATH


def _skip_or_fail(exc: JavaUnavailable) -> NoReturn:
    if os.environ.get("GROUPCHECK_REQUIRE_KAFKA"):
        raise RuntimeError(f"GROUPCHECK_REQUIRE_KAFKA is set, but {exc}") from None
    pytest.skip(f"Kafka's Java client is not available: {exc}", allow_module_level=True)


def java_command() -> list[str]:
    """The driver's command line (compiled on first use), or skip (fail when required)."""
    try:
        return driver_command("", CLASSPATH)
    except JavaUnavailable as exc:
        _skip_or_fail(exc)


def frame_reader() -> JavaFrameReader:
    """Kafka's message classes as a frame reader (`java_frames`), or skip (fail when
    required)."""
    try:
        return JavaFrameReader("", CLASSPATH)
    except JavaUnavailable as exc:
        _skip_or_fail(exc)
