"""Kafka's client at several releases, for the ``java@<version>:`` tests.

The releases come from the Maven local repository ``$GROUPCHECK_MAVEN_REPO`` (read once,
`environment`). Without it, or without a JDK, these tests are skipped with the reason,
unless ``GROUPCHECK_REQUIRE_KAFKA`` is set (CI sets it): then their absence is an error.
"""

from __future__ import annotations

import ctypes.util
import os
import zipfile
from pathlib import Path

import pytest

from groupcheck.targets.processes.java_runtime import JavaUnavailable, tool
from groupcheck.targets.processes.maven_repo import releases

from helpers.environment import SETTINGS

#: the releases the default run checks at the assignor level (oldest, middle, newest)
DEFAULT_RUN = ("2.8.0", "3.4.0", "4.0.0-SNAPSHOT")


def _unavailable(reason: str) -> None:
    if os.environ.get("GROUPCHECK_REQUIRE_KAFKA"):
        raise RuntimeError(f"GROUPCHECK_REQUIRE_KAFKA is set, but {reason}")
    pytest.skip(reason, allow_module_level=True)


def repo_releases(*wanted: str) -> list[str]:
    """The releases the settings' Maven repository holds (those of ``wanted`` when given),
    or skip (fail when required) when it holds none of them or there is no JDK."""
    if not SETTINGS.maven_repo:
        _unavailable("no Maven repository of Kafka's releases ($GROUPCHECK_MAVEN_REPO)")
    try:
        tool("java")
        tool("javac")
    except JavaUnavailable as exc:
        _unavailable(str(exc))
    held = releases(SETTINGS.maven_repo)
    found = [v for v in held if not wanted or v in wanted]
    if not found or (wanted and len(found) < len(wanted)):
        _unavailable(f"{SETTINGS.maven_repo} holds {', '.join(held) or 'no release'}, "
                     f"not all of {', '.join(wanted)}")
    return found


def producer_needs_native_zstd(release: str) -> None:
    """Skip (fail when required) a story that produces with ``release`` when its producer
    cannot start here: 3.8's producer loads zstd-jni's native library as its config class
    starts (4.0.0-SNAPSHOT's does not), and the repository's zstd-jni jar takes it from the
    system."""
    if release.startswith("3.8.") and ctypes.util.find_library("zstd-jni") is None:
        _unavailable(f"java@{release}'s producer needs zstd-jni's native library, which "
                     "this machine lacks (Debian: apt-get install libzstd-jni1)")


def stand_in_jar(path: Path, *members: str) -> Path:
    """A zip file at ``path`` holding empty entries named ``members`` (the class names the
    java: target looks for): a jar for the classpath and resolver rules, no JDK needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as jar:
        for member in members:
            jar.writestr(member, b"")
    return path


def fake_maven_repo(root: Path, *versions: str) -> str:
    """A Maven local repository under ``root`` holding an empty kafka-clients jar of each
    version (enough for the release list; nothing runs from it)."""
    for v in versions:
        folder = root / "org" / "apache" / "kafka" / "kafka-clients" / v
        folder.mkdir(parents=True)
        (folder / f"kafka-clients-{v}.jar").write_bytes(b"")
    return str(root)
