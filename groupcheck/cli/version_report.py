"""``groupcheck --version``: groupcheck's version, Python's, and the versions found of the
optional pieces a run may use (Hypothesis, z3-solver, PySpark, kio, the peer clients, the
KafkaJS driver's install, Java), "not found" for each one missing.

Quick and never failing: the Python packages are read from their installed metadata (none is
imported but confluent-kafka, whose librdkafka version only the module knows), KafkaJS from
its install in groupcheck's cache, Java from ``java -version`` (no JVM beyond it).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import platform
import re
import shutil
import subprocess
from pathlib import Path

from .. import __version__
from ..targets.build_cache import cache_dir
from ..targets.wire.drivers.kafkajs_member import SOURCES as KAFKAJS_SOURCES

__all__ = ["NOT_FOUND", "PACKAGES", "version_lines"]

NOT_FOUND = "not found"

#: (what it is called here, its distribution name)
PACKAGES = (("Hypothesis", "hypothesis"), ("z3-solver", "z3-solver"), ("PySpark", "pyspark"),
            ("kio", "kio"), ("kafka-python", "kafka-python"), ("aiokafka", "aiokafka"))


def _distribution(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return NOT_FOUND


def _confluent_kafka() -> str:
    found = _distribution("confluent-kafka")
    if found == NOT_FOUND:
        return found
    try:
        librdkafka = importlib.import_module("confluent_kafka").libversion()[0]
    except Exception:  # an install that cannot load still has a version to show
        return f"{found} (librdkafka: cannot load)"
    return f"{found} (librdkafka {librdkafka})"


def _kafkajs() -> str:
    """The KafkaJS release installed for the driver in groupcheck's cache, if any."""
    try:
        lock = (KAFKAJS_SOURCES / "package-lock.json").read_bytes()
        digest = hashlib.sha256(lock).hexdigest()[:24]
        package = cache_dir("kafkajs", digest) / "node_modules" / "kafkajs" / "package.json"
        return str(json.loads(package.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError, TypeError):
        return NOT_FOUND


def _java() -> str:
    """The first line ``java -version`` prints (on stderr), or why there is none."""
    java = shutil.which("java")
    if java is None:
        return NOT_FOUND
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{NOT_FOUND} ({type(exc).__name__})"
    first = (out.stderr or out.stdout).strip().splitlines()
    if out.returncode != 0 or not first:
        return f"{NOT_FOUND} (java -version exited {out.returncode})"
    found = re.search(r'version "([^"]+)"', first[0])
    return f"{found.group(1)} ({Path(java)})" if found else first[0]


def version_lines() -> list[str]:
    """One ``name: version`` line per piece, groupcheck's first."""
    found = [("groupcheck", __version__),
             ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
             *((label, _distribution(dist)) for label, dist in PACKAGES[:5]),
             ("confluent-kafka", _confluent_kafka()),
             (PACKAGES[5][0], _distribution(PACKAGES[5][1])),
             ("KafkaJS", _kafkajs()),
             ("Java", _java())]
    width = max(len(label) for label, _ in found)
    return [f"{label + ':':<{width + 1}} {version}" for label, version in found]
