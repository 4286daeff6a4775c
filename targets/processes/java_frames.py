"""Kafka's own message classes as a reader of Kafka protocol frames.

What lives here: `Frame` (one request or response as it crossed the wire, without its 4-byte
size) and `JavaFrameReader`, which reads frames with Kafka's generated message classes
(``RequestHeaderData``, ``JoinGroupRequestData``, …, from the Kafka client jar on the
``java:`` target's classpath) and gives each as plain data.

Theory of operation: the reader is a small Java program (``java_frames_src/FrameReader.java``,
with the ``java:`` driver's ``Json`` reader and writer) compiled and cached by `java_runtime`
like every Java source groupcheck ships, and run as one long-lived JVM through
`jsonl_process.JsonlProcess`: one JSON line per frame in, one reading out. A reading is
``{"header": {...}, "body": {...}}`` with one entry per field the API version has, under
Kafka's protocol name (snake case, as in Kafka's schemas: ``session_timeout_ms``), or
``{"error": "..."}`` when Kafka's classes refuse the bytes (a short frame, bytes left after
the body, a version the classes do not know). The header version is Kafka's for that API and
version (``ApiMessageType``); an ApiVersions answer always has header v0 (KIP-511). Bytes and
records are lowercase hex, a UUID its 32 hex digits, unknown tags are listed under
``_unknown_tagged_fields``. `second_reader` compares these readings with kio's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Literal, TypedDict, cast

from ...properties.jsonl_shapes import JSONObject
from .java_runtime import driver_sources, java_command
from .jsonl_process import JsonlProcess

__all__ = ["JVM_OPTIONS", "MAIN_CLASS", "Frame", "FrameReading", "FrameRequest",
           "JavaFrameReader", "frame_reader_command", "frame_reader_sources"]

MAIN_CLASS = "groupcheck.frames.FrameReader"
JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m",
               "-Dorg.slf4j.simpleLogger.defaultLogLevel=off")
#: a frame's time limit; the first one also starts the JVM and loads Kafka's classes
TIMEOUT = 60.0

Direction = Literal["request", "response"]


class FrameRequest(TypedDict):
    """One frame as the reader is sent it (``hex``: its bytes)."""

    direction: Direction
    api_key: int
    api_version: int
    hex: str


class FrameReading(TypedDict, total=False):
    """One frame as a reader gives it: its header and body, one entry per field of that API
    version (their fields differ from API to API, hence plain JSON objects), or why the
    bytes were refused."""

    header: JSONObject
    body: JSONObject
    error: str


@dataclass(frozen=True)
class Frame:
    """One frame without its size prefix: header and body; ``label`` names it in reports."""

    direction: Direction
    api_key: int
    api_version: int
    payload: bytes
    label: str = ""

    def as_request(self) -> FrameRequest:
        return {"direction": self.direction, "api_key": self.api_key,
                "api_version": self.api_version, "hex": self.payload.hex()}


def frame_reader_sources() -> dict[str, bytes]:
    """``FrameReader.java`` and the ``java:`` driver's ``Json.java`` it writes with."""
    sources = driver_sources("java_frames_src")
    sources["Json.java"] = driver_sources()["Json.java"]
    return sources


def frame_reader_command(spec: str = "", default: str = "") -> list[str]:
    """The reader's command line on the Kafka classpath of ``spec`` (else ``default``),
    compiled first when the cache lacks it. Raises `java_runtime.JavaUnavailable`."""
    return java_command(spec, frame_reader_sources(), MAIN_CLASS, JVM_OPTIONS, default=default)


class JavaFrameReader:
    """One JVM reading frames with Kafka's classes; ``with JavaFrameReader(...) as r:``."""

    def __init__(self, spec: str = "", default: str = "", timeout: float = TIMEOUT) -> None:
        self.process = JsonlProcess(frame_reader_command(spec, default), timeout,
                                    label="Kafka's frame reader")

    def read(self, frames: Iterable[Frame]) -> list[FrameReading]:
        """Each frame's reading, in order (``{"error": ...}`` for a refused one); `differences`
        (``second_reader``) compares whatever the reader wrote, field by field."""
        return [cast(FrameReading, self.process.request(frame.as_request()))
                for frame in frames]

    def close(self) -> None:
        self.process.close()

    def __enter__(self) -> JavaFrameReader:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
