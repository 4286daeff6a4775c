"""Kafka's Java client on this machine: its classpath, a JDK, and Java sources compiled
against them once and cached.

Theory of operation. A ``java:[CLASSPATH]`` target names Kafka's client jars (rules in
`classpath_entries`; an empty one means the caller's ``default``, which the command line reads
from ``$GROUPCHECK_KAFKA_CLASSPATH``). `kafka_classpath` expands it into files and checks that
Kafka's consumer classes and slf4j's API are really there. `compile_sources` compiles Java
sources (``processes/java_driver_src/*.java`` for the ``java:`` target's driver,
``wire/drivers/java_member_src/*.java`` for the wire layer's member driver,
``processes/java_frames_src/*.java`` for the broker's second reader, a test's or bench's own)
with ``javac --release 11`` into ``${XDG_CACHE_HOME:-~/.cache}/groupcheck/java/<digest>/``,
where the digest covers the classpath's contents and the sources, so a new Kafka build or a
changed driver compiles afresh and everything else reuses the cache. The cache folder and the
build into a private temporary folder renamed into place are the shipped drivers' one helper
(`build_cache`): two processes compiling at once both succeed and one result is kept. Every
problem is a `JavaUnavailable` with one plain line (the CLI prints it and exits 2). This is the
one place that finds Kafka's classpath and compiles Java.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path

from ..build_cache import build_once, cache_dir

__all__ = ["COMPILE_TIMEOUT", "DRIVER_MAIN", "ENV_CLASSPATH", "JVM_OPTIONS", "KAFKA_CLASS",
           "RELEASE", "SLF4J_CLASS", "JavaUnavailable", "cache_root", "classpath_entries",
           "compile_sources", "driver_command", "driver_sources", "java_command", "kafka_classpath",
           "missing", "tool"]

ENV_CLASSPATH = "GROUPCHECK_KAFKA_CLASSPATH"
KAFKA_CLASS = "org/apache/kafka/clients/consumer/internals/ConsumerProtocol.class"
SLF4J_CLASS = "org/slf4j/LoggerFactory.class"
DRIVER_MAIN = "groupcheck.driver.GroupcheckDriver"
RELEASE = "11"  # the class-file level of Kafka's own jars
#: slf4j-simple, when it is the binding on the classpath, logs nothing; any other binding's
#: output goes to stderr, which the target keeps only as a tail for error messages
JVM_OPTIONS = ("-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=off")


class JavaUnavailable(RuntimeError):
    """No JDK, no classpath, no Kafka classes on it, or the driver does not compile."""


def _jars(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.jar") if p.is_file())


def classpath_entries(spec: str, default: str = "") -> list[Path]:
    """A classpath spec (``default`` when it is empty) as files and class folders: a single
    folder means its ``*.jar`` and ``lib/*.jar``; otherwise a ``:``-separated list of jars,
    class folders and ``dir/*`` globs (every jar in ``dir``)."""
    text = spec or default
    if not text:
        raise JavaUnavailable(
            f"java: no Kafka classpath: give java:CLASSPATH or set ${ENV_CLASSPATH}")
    single = Path(text).expanduser()
    if os.pathsep not in text and single.is_dir() and (_jars(single) or _jars(single / "lib")):
        return _jars(single) + _jars(single / "lib")
    out: list[Path] = []
    for raw in filter(None, text.split(os.pathsep)):
        entry = Path(raw).expanduser()
        if entry.name == "*":
            if not entry.parent.is_dir():
                raise JavaUnavailable(f"java: classpath folder {entry.parent} does not exist")
            out += _jars(entry.parent)
        elif entry.exists():
            out.append(entry)
        else:
            raise JavaUnavailable(f"java: classpath entry {entry} does not exist")
    return [p.resolve() for p in out]


def _holds(entry: Path, member: str) -> bool:
    if entry.is_dir():
        return (entry / member).is_file()
    try:
        with zipfile.ZipFile(entry) as jar:
            jar.getinfo(member)
            return True
    except (KeyError, OSError, zipfile.BadZipFile):
        return False


def kafka_classpath(spec: str, default: str = "") -> list[Path]:
    """The classpath of ``spec`` (else ``default``), checked to hold Kafka's consumer client
    and slf4j's API."""
    entries = classpath_entries(spec, default)
    shown = spec or default
    if not any(_holds(e, KAFKA_CLASS) for e in entries):
        raise JavaUnavailable(f"java: no Kafka client classes (kafka-clients-*.jar) on the "
                              f"classpath {shown!r}")
    if not any(_holds(e, SLF4J_CLASS) for e in entries):
        raise JavaUnavailable(f"java: Kafka's client needs slf4j-api on the classpath "
                              f"{shown!r} (add slf4j-api-*.jar)")
    return entries


def tool(name: str) -> str:
    """``$JAVA_HOME/bin/<name>``, else ``<name>`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", name), os.X_OK):
        return os.path.join(home, "bin", name)
    found = shutil.which(name)
    if found is None:
        raise JavaUnavailable(f"java: no {name} on PATH (install a JDK, 11 or newer, or set "
                              "JAVA_HOME)")
    return found


def driver_sources(folder: str = "java_driver_src", package: str = "groupcheck.targets.processes"
                   ) -> dict[str, bytes]:
    """The ``*.java`` files shipped in ``<package>/<folder>`` (from a checkout, an install
    or a zip), by file name."""
    root = importlib.resources.files(package).joinpath(folder)
    sources = {item.name: item.read_bytes() for item in root.iterdir()
               if item.name.endswith(".java")}
    if not sources:
        raise JavaUnavailable(f"java: the driver's sources are missing from {root}")
    return sources


def _content_digest(classpath: Sequence[Path], sources: dict[str, bytes]) -> str:
    digest = hashlib.sha256(f"release {RELEASE}\n".encode())
    name: str | Path
    for name in sorted(sources):
        digest.update(f"source {name} {len(sources[name])}\n".encode())
        digest.update(sources[name])
    for entry in classpath:
        files = sorted(p for p in entry.rglob("*") if p.is_file()) if entry.is_dir() \
            else [entry]
        for path in files:
            name = path.relative_to(entry) if entry.is_dir() else path.name
            digest.update(f"classpath {name} {path.stat().st_size}\n".encode())
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:20]


def cache_root() -> Path:
    return cache_dir("java", "")


_COMPILED: dict[tuple[str, tuple[str, ...]], Path] = {}
COMPILE_TIMEOUT = 300.0


def compile_sources(sources: dict[str, bytes], classpath: Sequence[Path]) -> Path:
    """The class folder of ``sources`` compiled against ``classpath`` (from the cache when
    it holds them; see the module docstring)."""
    key = (hashlib.sha256(b"".join(sources[n] for n in sorted(sources))).hexdigest(),
           tuple(str(p) for p in classpath))
    if key in _COMPILED and _COMPILED[key].is_dir():  # (a cache emptied meanwhile: again)
        return _COMPILED[key]
    final = cache_dir("java", _content_digest(classpath, sources))
    if not (final / "classes").is_dir():
        _compile_into(final, sources, classpath)
    _COMPILED[key] = final / "classes"
    return final / "classes"


def _compile_into(final: Path, sources: dict[str, bytes], classpath: Sequence[Path]) -> None:
    javac = tool("javac")

    def write_sources(work: Path) -> None:
        (work / "src").mkdir()
        for name, text in sources.items():
            (work / "src" / name).write_bytes(text)
        (work / "classes").mkdir()

    failed = build_once(final, lambda work: [
        javac, "--release", RELEASE, "-encoding", "UTF-8", "-nowarn",
        "-cp", os.pathsep.join(str(p) for p in classpath), "-d", str(work / "classes"),
        *sorted(str(work / "src" / name) for name in sources)], COMPILE_TIMEOUT,
        prepare=write_sources)
    if failed:
        errors = [ln for ln in failed.splitlines() if "error" in ln.lower()]
        raise JavaUnavailable("java: Java sources do not compile against this classpath: "
                              f"{(errors or [failed])[0]}")


def java_command(spec: str, sources: dict[str, bytes], main: str,
                 options: Sequence[str] = JVM_OPTIONS, default: str = "") -> list[str]:
    """The command line that runs class ``main`` of ``sources`` (compiled first when the
    cache lacks them) on the Kafka classpath of ``spec`` (else ``default``)."""
    classpath = kafka_classpath(spec, default)
    java = tool("java")
    classes = compile_sources(sources, classpath)
    return [java, *options, "-cp", os.pathsep.join([str(classes), *(str(p) for p in classpath)]),
            main]


def missing(spec: str = "", default: str = "") -> str:
    """Why Kafka's client cannot run here ('' when it can): no JDK, or no classpath."""
    try:
        tool("java")
        tool("javac")
        kafka_classpath(spec, default)
    except JavaUnavailable as exc:
        return str(exc)
    return ""


def driver_command(spec: str, default: str = "") -> list[str]:
    """The command line of groupcheck's Java driver against the classpath of ``spec`` (else
    ``default``), compiled first when the cache lacks it."""
    return java_command(spec, driver_sources(), DRIVER_MAIN, default=default)
