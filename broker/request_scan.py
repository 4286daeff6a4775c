"""The broker's own walk over a request's bytes, before kio reads them.

What lives here: `scan`, which walks a request header or body along its kio schema with the
checks Kafka's generated readers make, and returns the bytes kio is to read; `ScanError`,
what it says of bytes that cannot be a request (where, which field, why).

Theory of operation
-------------------
kio 0.6.5 reads a request natively, with two habits a broker must not have:

- an unknown tagged field is a KeyError ("Unknown tagged field tag: N"), where KIP-482 has
  a reader skip it (that is how a newer client adds a field an older broker does not know);
- an array's count is allocated before one item is read: five bytes ask for hundreds of
  GiB and the process aborts. Kafka's readers refuse a count larger than the bytes left
  ("Tried to allocate a collection of size N, but there are only M bytes remaining").

So the broker walks every request first, field by field as kio would read it, with
Kafka's checks: a string, bytes or array length within the bytes left (a string within
32767 bytes), null only where the field is nullable, a varint in at most 5 bytes. Where
Kafka reads more leniently than kio, the walk notes an edit that gives kio what Kafka would
have read: an unknown tagged field is cut out (and its section's count lowered); a known
tagged field sent as null is cut out too (Kafka reads null, kio its default, None); a
string that is not UTF-8 is re-encoded with U+FFFD in place of bad bytes, as Java's decoder
reads it; a boolean byte other than 0 or 1 becomes 1 (Kafka: true); a negative length or
null marker other than -1 becomes -1 (Kafka: null). A request that needs no edit is
returned as it came (no copy). A broker keeps nothing of the unknown tags: Kafka's request
classes hold them in ``_unknownTaggedFields`` only to write them again, and a broker never
writes a request.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any

__all__ = ["MAX_STRING", "Landmark", "ScanError", "landmarks", "scan", "uvarint"]

#: Kafka's readers refuse a string longer than this ("had invalid length").
MAX_STRING = 0x7FFF
_FIXED = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint16": 2, "uint32": 4,
          "uint64": 8, "float64": 8, "uuid": 16, "error_code": 2, "timedelta_i32": 4,
          "timedelta_i64": 8, "datetime_i64": 8}
_Edit = tuple[int, int, bytes]  # replace data[start:end] with these bytes


@dataclass(frozen=True, slots=True)
class Landmark:
    """Where a length, a count or a tagged-field section starts in a request; ``width`` is
    2 or 4 for a fixed-width length, 0 for a varint length, -1 for a tagged-field count."""

    offset: int
    width: int
    field: str


class ScanError(Exception):
    """Bytes that cannot be this request: ``offset`` into the payload, ``field`` a path."""

    def __init__(self, reason: str, offset: int, field: str) -> None:
        super().__init__(reason)
        self.reason, self.offset, self.field = reason, offset, field


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    kind: str  # a Kafka type ("string", "int32", ...) or "entity"
    array: bool
    nullable: bool  # Kafka lets this field be null on the wire
    entity: _Entity | None
    item: _Field | None = None  # an array's item


@dataclass(frozen=True, slots=True)
class _Entity:
    name: str
    flexible: bool
    fields: tuple[_Field, ...]
    tagged: dict[int, _Field]


def _optional(hint: Any) -> tuple[Any, bool]:
    if typing.get_origin(hint) in (UnionType, typing.Union):
        args = [a for a in typing.get_args(hint) if a is not NoneType]
        return args[0], len(args) < len(typing.get_args(hint))
    return hint, False


_LAYOUTS: dict[type[Any], _Entity] = {}


def _entity(cls: type[Any]) -> _Entity:
    """The layout kio reads for ``cls`` (cached)."""
    found = _LAYOUTS.get(cls)
    if found is None:
        found = _LAYOUTS[cls] = _compile(cls)
    return found


def _compile(cls: type[Any]) -> _Entity:
    hints = typing.get_type_hints(cls)
    header = cls.__name__ == "RequestHeader"
    fields: list[_Field] = []
    tagged: dict[int, _Field] = {}
    for f in dataclasses.fields(cls):
        inner, optional = _optional(hints[f.name])
        array = typing.get_origin(inner) is tuple
        if array:
            inner, _ = _optional(typing.get_args(inner)[0])
        nested = _entity(inner) if isinstance(inner, type) and dataclasses.is_dataclass(inner) \
            else None
        kind = "entity" if nested else str(f.metadata["kafka_type"])
        if header and f.name == "client_id":
            kind, optional = "legacy_string", True  # never compact, even in header v2
        item = _Field(f.name, kind, False, False, nested) if array else None
        spec = _Field(f.name, kind, array, optional, nested, item)
        if "tag" in f.metadata:
            tagged[int(f.metadata["tag"])] = spec
        else:
            fields.append(spec)
    return _Entity(cls.__name__, bool(cls.__flexible__), tuple(fields), tagged)


class _Walk:
    """One pass over ``data`` from an offset; collects the edits kio needs."""

    def __init__(self, data: bytes, start: int) -> None:
        self.data, self.pos = data, start
        self.edits: list[_Edit] = []
        self.path: list[str] = []
        self.marks: list[Landmark] | None = None  # kept only for `landmarks`

    def fail(self, reason: str, at: int | None = None) -> ScanError:
        return ScanError(reason, self.pos if at is None else at, ".".join(self.path))

    def take(self, size: int) -> int:
        start = self.pos
        if size > len(self.data) - start:
            raise self.fail(f"{size} bytes needed, {len(self.data) - start} left")
        self.pos += size
        return start

    def signed(self, size: int) -> int:
        start = self.take(size)
        return int.from_bytes(self.data[start:self.pos], "big", signed=True)

    def uvarint(self) -> int:
        value, shift, start = 0, 0, self.pos
        for _ in range(5):
            if self.pos >= len(self.data):
                raise self.fail("varint cut short")
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
        raise self.fail("varint longer than 5 bytes", start)

    def null_mark(self, start: int, value: int, width: int) -> None:
        """A negative length or marker: Kafka reads null; kio reads only -1 as null."""
        if value != -1:
            self.edits.append((start, start + width, (-1).to_bytes(width, "big", signed=True)))

    def length(self, spec: _Field, flexible: bool, width: int) -> int | None:
        """A length prefix: None for null (refused where the field is not nullable)."""
        start = self.pos
        if self.marks is not None:
            self.marks.append(Landmark(start, 0 if flexible else width, ".".join(self.path)))
        if flexible:
            n: int | None = self.uvarint() - 1
            n = None if n == -1 else n
        else:
            n = self.signed(width)
            if n < 0:
                if spec.nullable:
                    self.null_mark(start, n, width)
                n = None
        if n is None and not spec.nullable:
            raise self.fail("non-nullable field was serialized as null", start)
        if n is not None and n > len(self.data) - self.pos:
            raise self.fail(f"length {n}, but only {len(self.data) - self.pos} bytes left",
                            start)
        return n


def _string(walk: _Walk, spec: _Field, flexible: bool) -> None:
    start = walk.pos
    n = walk.length(spec, flexible and spec.kind != "legacy_string", 2)
    if n is None:
        return
    if n > MAX_STRING:
        raise walk.fail(f"string had invalid length {n}", start)
    body = walk.data[walk.pos:walk.pos + n]
    walk.pos += n
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        fixed = body.decode("utf-8", "replace").encode("utf-8")
        prefix = (uvarint(len(fixed) + 1) if flexible and spec.kind != "legacy_string"
                  else len(fixed).to_bytes(2, "big"))
        if len(fixed) > MAX_STRING:
            raise walk.fail(f"string had invalid length {len(fixed)}", start) from None
        walk.edits.append((start, walk.pos, prefix + fixed))


def uvarint(value: int) -> bytes:
    """``value`` as an unsigned varint (compact lengths, tag numbers and tag sizes)."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _value(walk: _Walk, spec: _Field, flexible: bool) -> None:
    """One value of ``spec`` (one item, if it is an array)."""
    kind = spec.kind
    if kind == "entity":
        assert spec.entity is not None
        _read_entity(walk, spec.entity, spec.nullable)
    elif kind in ("string", "legacy_string"):
        _string(walk, spec, flexible)
    elif kind in ("bytes", "records"):
        n = walk.length(spec, flexible, 4)
        walk.take(n or 0)
    elif kind == "bool":
        start = walk.take(1)
        if walk.data[start] > 1:
            walk.edits.append((start, start + 1, b"\x01"))
    else:
        walk.take(_FIXED[kind])


def _field(walk: _Walk, spec: _Field, flexible: bool) -> None:
    walk.path.append(spec.name)
    if spec.array:
        count = walk.length(spec, flexible, 4)
        assert spec.item is not None
        for _ in range(count or 0):
            _value(walk, spec.item, flexible)
    else:
        _value(walk, spec, flexible)
    walk.path.pop()


def _read_entity(walk: _Walk, entity: _Entity, nullable: bool) -> None:
    if nullable:
        start = walk.pos
        marker = walk.signed(1)
        if marker < 0:
            walk.null_mark(start, marker, 1)
            return
    for spec in entity.fields:
        _field(walk, spec, entity.flexible)
    if entity.flexible:
        _tagged(walk, entity)


def _tagged(walk: _Walk, entity: _Entity) -> None:
    """A tagged-field section: known tags read, unknown ones cut out (KIP-482)."""
    count_at = walk.pos
    if walk.marks is not None:
        walk.marks.append(Landmark(count_at, -1, ".".join(walk.path)))
    count = walk.uvarint()
    count_end, kept = walk.pos, count
    for _ in range(count):
        field_at = walk.pos
        tag, size = walk.uvarint(), walk.uvarint()
        if size > len(walk.data) - walk.pos:
            raise walk.fail(f"tagged field {tag} of {size} bytes, "
                            f"{len(walk.data) - walk.pos} left", field_at)
        spec = entity.tagged.get(tag)
        value_at = walk.pos
        if spec is None or _null_primitive(spec, walk.data, value_at, size):
            walk.pos = value_at + size
            walk.edits.append((field_at, walk.pos, b""))
            kept -= 1
        else:
            _field(walk, spec, entity.flexible)
    if kept != count:
        walk.edits.append((count_at, count_end, uvarint(kept)))


def _null_primitive(spec: _Field, data: bytes, at: int, size: int) -> bool:
    """A known tagged string or bytes field sent as null (a compact length of 0)."""
    return (spec.nullable and not spec.array and spec.kind in ("string", "bytes", "records")
            and size > 0 and data[at] == 0)


def scan(data: bytes, *layout: type[Any]) -> bytes:
    """The bytes kio is to read for the entities of ``layout``, one after the other from
    the start of ``data`` (``data`` itself when no edit is needed; bytes after the last are
    left alone, as Kafka leaves them); `ScanError` for bytes that are not these entities."""
    walk = _Walk(data, 0)
    for cls in layout:
        walk.path = [cls.__name__]
        _read_entity(walk, _entity(cls), False)
    if not walk.edits:
        return data
    out = bytearray()
    done = 0
    for begin, end, replacement in sorted(walk.edits):
        out += data[done:begin]
        out += replacement
        done = end
    out += data[done:]
    return bytes(out)


def landmarks(data: bytes, *layout: type[Any]) -> list[Landmark]:
    """Every length, count and tagged-field section of a readable request, in order: where
    a fuzzer lies about a length or slips in a tagged field."""
    walk = _Walk(data, 0)
    walk.marks = []
    for cls in layout:
        walk.path = [cls.__name__]
        _read_entity(walk, _entity(cls), False)
    return walk.marks
