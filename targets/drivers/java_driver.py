"""The ``java`` member driver's command line: Kafka's own ``KafkaConsumer`` (classic protocol).

The driver's Java source lives beside this module (``java/*.java``: `JavaDriver` reads the
commands, one `Member` thread per consumer, a small JSON reader and writer of its own). It
is compiled on first use with ``javac --release 11`` against the Kafka client's classpath,
into ``~/.cache/groupcheck/java-driver/<digest>/`` where the digest covers the sources and
the classpath's jars (name, size, modification time): a new source or a new client build
compiles again, anything else reuses the classes. Compilation goes to a temporary folder
renamed into place, so two processes never see half a build.

The classpath is the ``java:`` target's: ``$GROUPCHECK_KAFKA_CLASSPATH``, else
``../shared/kafka`` beside the checkout (or beside the working directory). A folder stands
for ``kafka-clients-*.jar`` and ``lib/*.jar`` in it; anything else is taken as a classpath
(``:``-separated, ``*`` globs).
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
from pathlib import Path

from .cache import build_once, cache_dir

SOURCES = Path(__file__).with_name("java")
MAIN_CLASS = "JavaDriver"
JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Xmx256m",
               "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-Dorg.slf4j.simpleLogger.logFile=System.err")
COMPILE_TIMEOUT = 300.0


class JavaUnavailable(RuntimeError):
    """No ``java``/``javac`` on PATH, or no Kafka client classpath."""


def default_classpath() -> str:
    """``$GROUPCHECK_KAFKA_CLASSPATH``, else ``../shared/kafka`` beside the checkout this
    module is in, or beside the working directory (an installed copy, as tox runs it)."""
    given = os.environ.get("GROUPCHECK_KAFKA_CLASSPATH", "")
    if given:
        return given
    for base in (Path(__file__).resolve().parents[2], Path.cwd()):
        candidate = base.parent / "shared" / "kafka"
        if candidate.is_dir():
            return str(candidate)
    return str(Path.cwd().parent / "shared" / "kafka")


def classpath_jars(classpath: str | None = None) -> list[str]:
    """The jars a classpath names (a folder: its Kafka client jar and ``lib/*.jar``)."""
    classpath = classpath or default_classpath()
    jars: list[str] = []
    for part in classpath.split(os.pathsep):
        if not part:
            continue
        if os.path.isdir(part):
            jars += sorted(glob.glob(os.path.join(part, "kafka-clients-*.jar")))
            jars += sorted(glob.glob(os.path.join(part, "lib", "*.jar")))
        else:
            jars += sorted(glob.glob(part)) if any(c in part for c in "*?[") else [part]
    if not any(os.path.basename(j).startswith("kafka-clients") for j in jars) \
            or not all(os.path.isfile(j) for j in jars):
        raise JavaUnavailable(f"java: no Kafka client jar on the classpath {classpath!r} "
                              "(set GROUPCHECK_KAFKA_CLASSPATH)")
    return jars


def missing() -> str:
    """Why the java driver cannot run here ('' when it can)."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            return f"java: {tool} is not on PATH"
    try:
        classpath_jars()
    except JavaUnavailable as exc:
        return str(exc)
    return ""


def _digest(jars: list[str]) -> str:
    h = hashlib.sha256()
    for source in sorted(SOURCES.glob("*.java")):
        h.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    for jar in jars:
        stat = os.stat(jar)
        h.update(f"{os.path.basename(jar)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return h.hexdigest()[:24]


def build(classpath: str | None = None) -> tuple[Path, list[str]]:
    """The folder of compiled driver classes (compiling on first use) and the jars."""
    jars = classpath_jars(classpath)
    if shutil.which("javac") is None:
        raise JavaUnavailable("java: javac is not on PATH")
    target = cache_dir("java-driver", _digest(jars))
    if (target / f"{MAIN_CLASS}.class").is_file():
        return target, jars
    sources = [str(s) for s in sorted(SOURCES.glob("*.java"))]
    failed = build_once(target, lambda out: [
        "javac", "--release", "11", "-nowarn", "-d", str(out), "-cp", os.pathsep.join(jars),
        *sources], COMPILE_TIMEOUT)
    if failed:
        raise JavaUnavailable(f"java: compiling the driver failed: {failed}")
    return target, jars


def command(classpath: str | None = None) -> list[str]:
    """The command line that starts one java member driver."""
    classes, jars = build(classpath)
    return ["java", *JVM_OPTIONS, "-cp", os.pathsep.join([str(classes), *jars]), MAIN_CLASS]
