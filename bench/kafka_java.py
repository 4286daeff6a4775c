"""Kafka's Java client for the benchmarks: find its jars, compile a bench harness, run it.

The classpath is ``--kafka`` when given, else ``$GROUPCHECK_KAFKA_CLASSPATH``, else the
``shared/kafka`` folder beside the checkout (``../shared/kafka``). A folder stands for its
``kafka-clients-*.jar`` with ``lib/slf4j-api-*.jar`` and, when present,
``optional/slf4j-nop-*.jar`` (silent logging; else ``lib/*``); otherwise the value is a
``:``-separated list of jars and ``dir/*`` globs. A harness (``bench/<Name>.java``) is
compiled once with ``javac --release 11`` into ``$XDG_CACHE_HOME/groupcheck/bench/<digest>``
(keyed by the source and the jars' names and sizes), written to a temporary folder and
renamed into place so that two benchmarks compiling at once do not clash.
"""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent


class JavaUnavailable(Exception):
    """No ``java``/``javac`` or no Kafka classpath: the Java side is left out."""


def kafka_classpath(given: str | None) -> list[str]:
    """The jars of Kafka's Java client, by the rules in the module docstring."""
    spec = given or os.environ.get("GROUPCHECK_KAFKA_CLASSPATH")
    if not spec:
        beside = BENCH.parent.parent / "shared" / "kafka"
        if not beside.is_dir():
            raise JavaUnavailable(f"no Kafka classpath: give --kafka, set "
                                  f"GROUPCHECK_KAFKA_CLASSPATH or provide {beside}")
        spec = str(beside)
    if os.path.isdir(spec):
        clients = sorted(glob.glob(os.path.join(spec, "kafka-clients-*.jar")))
        nop = sorted(glob.glob(os.path.join(spec, "optional", "slf4j-nop-*.jar")))
        api = sorted(glob.glob(os.path.join(spec, "lib", "slf4j-api-*.jar")))
        rest = api + nop if nop and api else sorted(glob.glob(os.path.join(spec, "lib",
                                                                           "*.jar")))
        jars = clients + rest
    else:
        jars = [j for part in spec.split(":") for j in sorted(glob.glob(part)) or [part]]
    if not any("kafka-clients" in os.path.basename(j) for j in jars):
        raise JavaUnavailable(f"no kafka-clients jar in {spec}")
    return jars


def compile_harness(name: str, jars: list[str]) -> Path:
    """The folder holding ``bench/<name>.java`` compiled against ``jars``."""
    javac = shutil.which("javac")
    if javac is None or shutil.which("java") is None:
        raise JavaUnavailable("java and javac are needed for the Java side")
    source = BENCH / f"{name}.java"
    digest = hashlib.sha256(source.read_bytes())
    for jar in jars:
        digest.update(f"{os.path.basename(jar)}:{os.path.getsize(jar)}".encode())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    target = cache / "groupcheck" / "bench" / digest.hexdigest()[:16]
    if (target / f"{name}.class").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".compiling-", dir=target.parent))
    try:
        subprocess.run([javac, "--release", "11", "-cp", ":".join(jars), "-d", str(scratch),
                        str(source)], check=True, capture_output=True, text=True)
        try:
            scratch.rename(target)
        except OSError:  # another benchmark compiled it first
            pass
    except subprocess.CalledProcessError as e:
        raise JavaUnavailable(f"javac failed: {e.stderr.strip()}") from e
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def java_command(name: str, jars: list[str], jvm_options: list[str]) -> list[str]:
    """``java ... <name>``: the harness with Kafka's jars, ready for its arguments."""
    classes = compile_harness(name, jars)
    return ["java", *jvm_options, "-cp", ":".join([*jars, str(classes)]), name]
