"""A second reader of every byte groupcheck's broker reads and writes: Kafka's own message
classes (`java_frames`) against the broker's codec (kio, `broker.protocol`), field by field.

What lives here: `frames_of` (the frames an exchange log kept, with ``keep_frames``),
`kio_reading` (one frame as kio reads it, in the shape of `java_frames`' readings),
`differences` (two readings compared, each difference with its path and both values) and
`second_reading` (a batch of frames read by both, the `Disagreement`\\ s).

Theory of operation: both readings are plain data — objects keyed by field name, lists,
numbers, strings, booleans, null, bytes as hex — so they compare without either side's
types. Names meet in one form: kio drops the ``_ms`` of a field it reads as a duration or a
time (``session_timeout`` for Kafka's ``session_timeout_ms``), so such a field gets it back;
names are then matched lowercased without underscores. kio's null time (the wire's -1) is -1
and its null UUID the zero UUID, as Kafka's classes read them. A field one reader has and the
other lacks is a difference; so is a frame one reader refuses and the other reads. A frame
both refuse agrees (nothing was read). Tags neither knows (``_unknown_tagged_fields``, only
Kafka's classes list them) are not compared.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kio.index import load_request_schema
from kio.serial import entity_reader

from ...broker import Exchange
from ...broker.protocol import response_type
from .java_frames import Frame, FrameReading, JavaFrameReader

__all__ = ["Disagreement", "differences", "frames_of", "kio_reading", "second_reading"]

_TIMES = frozenset({"timedelta_i32", "timedelta_i64", "datetime_i64"})
_MS = datetime.timedelta(milliseconds=1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_SHOWN = 160  # characters of a value in a report line


@dataclass(frozen=True)
class Disagreement:
    """One field (``path``) the two readers of frame ``frame`` read differently."""

    frame: str
    path: str
    kafka: Any
    kio: Any

    def line(self) -> str:
        return f"{self.frame} {self.path}: Kafka reads {_shown(self.kafka)}, " \
               f"kio reads {_shown(self.kio)}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"


def frames_of(exchanges: Iterable[Exchange]) -> list[Frame]:
    """Every request and response an exchange log kept the bytes of, in arrival order."""
    out: list[Frame] = []
    for e in exchanges:
        name = f"#{e.seq} {e.api} v{e.api_version} ({e.who.client_id or '?'})"
        if e.raw_request is not None:
            out.append(Frame("request", e.api_key, e.api_version, e.raw_request,
                             f"{name} request"))
        if e.raw_response is not None:
            out.append(Frame("response", e.api_key, e.api_version, e.raw_response,
                             f"{name} response"))
    return out


def kio_reading(frame: Frame) -> FrameReading:
    """``frame`` read by kio: ``{"header": ..., "body": ...}``, or ``{"error": ...}``."""
    try:
        schema = (load_request_schema(frame.api_key, frame.api_version)
                  if frame.direction == "request"
                  else response_type(frame.api_key, frame.api_version))
        header, size = entity_reader(schema.__header_schema__)(frame.payload, 0)
        body, used = entity_reader(schema)(frame.payload, size)
    except Exception as e:  # noqa: BLE001 - kio's refusal, whatever it is, is the reading
        return {"error": f"{type(e).__name__}: {e}"}
    if size + used != len(frame.payload):
        return {"error": f"{len(frame.payload) - size - used} bytes left after the body"}
    return {"header": _plain(header), "body": _plain(body)}


def _name(field: dataclasses.Field[Any]) -> str:
    """The field's name as Kafka's schema spells it (kio drops ``_ms`` on times)."""
    kind = field.metadata.get("kafka_type", "")
    return field.name + "_ms" if kind in _TIMES and not field.name.endswith("_ms") \
        else field.name


def _plain(value: Any, kind: str = "") -> Any:
    """A kio value as plain data; ``kind`` is the field's Kafka type."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_name(f): _plain(getattr(value, f.name), f.metadata.get("kafka_type", ""))
                for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_plain(item, kind) for item in value]
    if value is None:
        return -1 if kind == "datetime_i64" else uuid.UUID(int=0).hex if kind == "uuid" else None
    if isinstance(value, datetime.timedelta):
        return value // _MS
    if isinstance(value, datetime.datetime):
        return (value - _EPOCH) // _MS
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        return int(value)  # i16, i32, ErrorCode, …
    raise TypeError(f"no plain form for a {type(value).__name__}")


def _key(name: str) -> str:
    return name.replace("_", "").lower()


def differences(kafka: Any, kio: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Where two readings differ: (path, Kafka's value, kio's value); a field only one side
    has is ``<absent>`` on the other."""
    if isinstance(kafka, dict) and isinstance(kio, dict):
        theirs = {_key(k): k for k in kafka if not k.startswith("_")}
        ours = {_key(k): k for k in kio}
        out: list[tuple[str, Any, Any]] = []
        for key in [*theirs, *(k for k in ours if k not in theirs)]:
            name = theirs.get(key) or ours[key]
            where = f"{path}.{name}" if path else name
            if key not in ours:
                out.append((where, kafka[name], "<absent>"))
            elif key not in theirs:
                out.append((where, "<absent>", kio[name]))
            else:
                out += differences(kafka[theirs[key]], kio[ours[key]], where)
        return out
    if isinstance(kafka, list) and isinstance(kio, list):
        out = [] if len(kafka) == len(kio) else [
            (f"{path} (length)", len(kafka), len(kio))]
        for i, (a, b) in enumerate(zip(kafka, kio, strict=False)):
            out += differences(a, b, f"{path}[{i}]")
        return out
    same = type(kafka) is type(kio) or (isinstance(kafka, (int, float)) and isinstance(
        kio, (int, float)) and not isinstance(kafka, bool) and not isinstance(kio, bool))
    return [] if same and kafka == kio else [(path, kafka, kio)]


def _compare(frame: Frame, kafka: FrameReading, kio: FrameReading) -> list[Disagreement]:
    label = frame.label or f"{frame.direction} {frame.api_key} v{frame.api_version}"
    if "error" in kafka or "error" in kio:
        if "error" in kafka and "error" in kio:
            return []  # both refuse it
        return [Disagreement(label, "(frame)", kafka.get("error", "read"),
                             kio.get("error", "read"))]
    return [Disagreement(label, path, a, b) for path, a, b in differences(kafka, kio)]


def second_reading(frames: Iterable[Frame], reader: JavaFrameReader) -> list[Disagreement]:
    """Every frame read by Kafka's classes (one JVM, ``reader``) and by kio; where they
    differ."""
    batch = list(frames)
    out: list[Disagreement] = []
    for frame, kafka in zip(batch, reader.read(batch), strict=True):
        out += _compare(frame, kafka, kio_reading(frame))
    return out
