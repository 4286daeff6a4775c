"""The ``java`` member driver's command line: Kafka's own ``KafkaConsumer`` (classic protocol).

The driver's Java source lives beside this module (``java_member_src/*.java``: `JavaDriver`
reads the commands, one `Member` thread per consumer, its `Commits` doing the
commit style the ``create`` names); its JSON reader and writer is the
``java:`` target's ``Json``, compiled in with it. It runs on the ``java:`` target's Kafka
classpath and is compiled and cached the way that target's driver is: everything about finding
Kafka's jars, a JDK and compiling is `java_runtime`'s (the caller's classpath, which the command
line reads from ``$GROUPCHECK_KAFKA_CLASSPATH``; one cache folder per digest of the sources and
the classpath's contents).
"""

from __future__ import annotations

from ...processes.java_runtime import driver_sources, java_command
from ...processes.java_runtime import missing as runtime_missing

__all__ = ["JVM_OPTIONS", "MAIN_CLASS", "command", "missing"]

MAIN_CLASS = "JavaDriver"
#: the member driver logs the client's warnings to stderr (the driver's stderr tail is kept)
JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k", "-Xmx256m",
               "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-Dorg.slf4j.simpleLogger.logFile=System.err")


def missing(classpath: str = "") -> str:
    """Why the java driver cannot run on ``classpath`` here ('' when it can)."""
    return runtime_missing(classpath)


def command(classpath: str = "") -> list[str]:
    """The command line that starts one java member driver (compiling on first use)."""
    sources = driver_sources("java_member_src", package="groupcheck.targets.wire.drivers")
    sources["Json.java"] = driver_sources()["Json.java"]  # the java: target's reader
    return java_command(classpath, sources, MAIN_CLASS, JVM_OPTIONS)
