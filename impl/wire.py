"""Big-endian primitives of Kafka's non-flexible protocol types.

A `Reader` walks the input's bytes and checks every length and count against the bytes
that remain *before* allocating, so a hostile length field costs nothing. Every failure
is a `CodecError` carrying the offset and the field being read.

Arrays of strings and of ``{string, array of int32}`` have bulk methods (`Reader.texts`,
`Reader.keyed_int32_arrays`, `Writer.strings`, `Writer.keyed_int32_arrays`) that read or
write a whole array in one loop with no call per field; whenever that loop meets anything
out of the ordinary they hand over to the field-by-field methods, so values and errors are
exactly those of the field-by-field methods.
"""

from __future__ import annotations

import codecs
import struct

from .errors import CodecError

__all__ = ["Reader", "Writer"]


def _java_replace(exc: UnicodeError) -> tuple[str, int]:
    """Replace malformed UTF-8 as Java's decoder does: like Python's maximal-subpart rule,
    except that an encoded surrogate (ED A0..BF 80..BF, CESU-8) is one U+FFFD, not three."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    obj, start = exc.object, exc.start
    if (start + 2 < len(obj) and obj[start] == 0xED and 0xA0 <= obj[start + 1] <= 0xBF
            and 0x80 <= obj[start + 2] <= 0xBF):
        return "\ufffd", start + 3
    return "\ufffd", exc.end


_JAVA_REPLACE = "groupcheck-java-replace"
codecs.register_error(_JAVA_REPLACE, _java_replace)

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_MAX_STRING = 0x7FFF


class Reader:
    """Sequential reader over bytes; ``version`` is reported in errors."""

    __slots__ = ("_buf", "pos", "version", "context")

    def __init__(self, data: bytes | bytearray | memoryview, context: str) -> None:
        self._buf = data if type(data) is bytes else bytes(data)
        self.pos = 0
        self.version: int | None = None
        self.context = context

    @property
    def remaining(self) -> int:
        return len(self._buf) - self.pos

    def fail(self, field: str, message: str | None = None,
             kafka_class: str = "SchemaException") -> CodecError:
        """A `CodecError` at the current offset; by default Kafka's buffer-underflow error."""
        text = message or f"Buffer underflow while parsing consumer protocol's {self.context}"
        return CodecError(text, offset=self.pos, field=field, version=self.version,
                          kafka_class=kafka_class)

    def null_field(self, field: str) -> CodecError:
        return self.fail(field, f"non-nullable field {field} was serialized as null",
                         "RuntimeException")

    def _need(self, n: int, field: str) -> None:
        if n > len(self._buf) - self.pos:
            raise self.fail(field)

    def int16(self, field: str) -> int:
        self._need(2, field)
        (v,) = _I16.unpack_from(self._buf, self.pos)
        self.pos += 2
        return int(v)

    def int32(self, field: str) -> int:
        self._need(4, field)
        (v,) = _I32.unpack_from(self._buf, self.pos)
        self.pos += 4
        return int(v)

    def int32_array(self, count: int, field: str) -> list[int]:
        """``count`` int32 values in one unpack (the count is already validated >= 0)."""
        self._need(4 * count, field)
        values = struct.unpack_from(f">{count}i", self._buf, self.pos)
        self.pos += 4 * count
        return list(values)

    def _null(self, field: str, n: int, start: int, nullable: bool) -> bool:
        """Whether length ``n`` reads as null (Java reads any negative length as null); a
        null where ``field`` is not nullable is a `CodecError`, read from ``start``."""
        if n >= 0:
            return False
        if nullable:
            return True
        self.pos = start
        raise self.null_field(field)

    def string(self, field: str, nullable: bool = False, strict_utf8: bool = False) -> str | None:
        """int16 length + UTF-8. Malformed UTF-8 becomes U+FFFD as in Java's ``new String``,
        or a `CodecError` with ``strict_utf8``."""
        start = self.pos
        n = self.int16(field)
        if self._null(field, n, start, nullable):
            return None
        if n > self.remaining:
            self.pos = start
            raise self.fail(field, f"Error reading byte array of {n} byte(s): only "
                            f"{self.remaining - 2} byte(s) available", "RuntimeException")
        raw = self._buf[self.pos:self.pos + n]
        try:
            text = raw.decode("utf-8", "strict" if strict_utf8 else _JAVA_REPLACE)
        except UnicodeDecodeError as exc:
            raise self.fail(field, f"invalid UTF-8 in {field}: {exc.reason}") from None
        self.pos += n
        return text

    def text(self, field: str) -> str:
        """A non-nullable string."""
        value = self.string(field)
        if value is None:  # unreachable: string() raises on null unless nullable
            raise self.null_field(field)
        return value

    def bytes_(self, field: str, nullable: bool = True) -> bytes | None:
        start = self.pos
        n = self.int32(field)
        if self._null(field, n, start, nullable):
            return None
        if n > self.remaining:
            left, self.pos = self.remaining, start
            raise self.fail(field, f"bytes field {field} of {n} byte(s) overruns the "
                            f"{left} byte(s) left", "IllegalArgumentException")
        out = self._buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def count(self, field: str, min_item_size: int) -> int:
        """A non-nullable array count, checked against the bytes that remain: more items than
        bytes is Kafka's "Tried to allocate" error; fewer than ``count * min_item_size`` bytes
        is an underflow. Either way nothing is allocated."""
        start = self.pos
        n = self.int32(field)
        if n < 0:
            self.pos = start
            raise self.null_field(field)
        left = self.remaining
        if n > left or n * min_item_size > left:
            self.pos = start
            if n > left:
                raise self.fail(field, f"Tried to allocate a collection of size {n}, but "
                                f"there are only {left} bytes remaining", "RuntimeException")
            raise self.fail(field)
        return n

    def texts(self, n: int, field: str) -> list[str]:
        """``n`` non-nullable strings: what ``n`` calls of `text` give, values and errors.

        One loop reads them all and checks the bounds once at the end (every length is
        at least 0, so the end position bounds every string); anything else re-reads the
        array field by field, which raises the same error `text` raises."""
        buf, start = self._buf, self.pos
        pos = start
        out: list[str] = []
        append = out.append
        try:
            for _ in range(n):
                k = buf[pos] << 8 | buf[pos + 1]
                if k & 0x8000:
                    break
                first = pos + 2
                pos = first + k
                append(buf[first:pos].decode("utf-8", _JAVA_REPLACE))
            else:
                if pos <= len(buf):
                    self.pos = pos
                    return out
        except IndexError:
            pass
        self.pos = start
        return [self.text(field) for _ in range(n)]

    def keyed_int32_arrays(self, n: int, key_field: str,
                           values_field: str) -> list[tuple[str, list[int]]]:
        """``n`` entries of {non-nullable string, array of int32}: what ``n`` rounds of
        `text`, `count` (4 bytes an item) and `int32_array` give, values and errors.

        The fast loop stops before unpacking any array that would run past the end, so a
        hostile count costs nothing; anything out of the ordinary re-reads field by field."""
        buf, start = self._buf, self.pos
        end = len(buf)
        pos = start
        out: list[tuple[str, list[int]]] = []
        append = out.append
        int32 = _I32.unpack_from
        try:
            for _ in range(n):
                k = buf[pos] << 8 | buf[pos + 1]
                first = pos + 2
                counted = first + k
                (c,) = int32(buf, counted)
                values = counted + 4
                pos = values + 4 * c
                if k & 0x8000 or c < 0 or pos > end:
                    break
                if c == 1:
                    items = [int32(buf, values)[0]]
                else:
                    items = list(struct.unpack_from(f">{c}i", buf, values))
                append((buf[first:counted].decode("utf-8", _JAVA_REPLACE), items))
            else:
                self.pos = pos
                return out
        except (IndexError, struct.error):
            pass
        self.pos = start
        slow: list[tuple[str, list[int]]] = []
        for _ in range(n):
            key = self.text(key_field)
            slow.append((key, self.int32_array(self.count(values_field, 4), values_field)))
        return slow


def _encoded(values: list[str]) -> list[bytes] | None:
    """The UTF-8 of each value (Java writes '?' for an unpaired surrogate), or None when
    one is not a string or is too long: those take the field-by-field path."""
    try:
        raws = [s.encode("utf-8", "replace") for s in values]
    except AttributeError:
        return None
    return None if raws and max(map(len, raws)) > _MAX_STRING else raws


class Writer:
    """Accumulates big-endian fields into one bytearray."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def int16(self, v: int) -> None:
        self.buf += _I16.pack(v)

    def int32(self, v: int) -> None:
        self.buf += _I32.pack(v)

    def int32_array(self, values: list[int]) -> None:
        self.buf += _I32.pack(len(values))
        self.buf += struct.pack(f">{len(values)}i", *values)

    def string(self, s: str | None, field: str = "string") -> None:
        if s is None:
            self.buf += _I16.pack(-1)
            return
        raw = s.encode("utf-8", "replace")  # Java writes '?' for an unpaired surrogate
        if len(raw) > 0x7FFF:
            raise CodecError(f"'{field}' field is too long to be serialized ({len(raw)} bytes)",
                             offset=len(self.buf), field=field, version=None,
                             kafka_class="RuntimeException")
        self.buf += _I16.pack(len(raw))
        self.buf += raw

    def strings(self, values: list[str], field: str = "string") -> None:
        """Each value as by `string` (not the array count), in one go when none is too long."""
        raws = _encoded(values)
        if raws is None:
            for s in values:
                self.string(s, field)  # raises at the first one too long, as `string` does
            return
        pack = _I16.pack
        self.buf += b"".join([part for raw in raws for part in (pack(len(raw)), raw)])

    def keyed_int32_arrays(self, entries: list[tuple[str, list[int]]],
                           key_field: str = "string") -> None:
        """An array of {string, array of int32}: its count, then each entry as by `string`
        and `int32_array`."""
        raws = _encoded([key for key, _ in entries])
        if raws is None:
            self.int32(len(entries))
            for key, values in entries:
                self.string(key, key_field)
                self.int32_array(values)
            return
        i16, i32 = _I16.pack, _I32.pack
        parts = [i32(len(entries))]
        for raw, (_, values) in zip(raws, entries, strict=True):
            n = len(values)
            parts += (i16(len(raw)), raw, i32(n),
                      i32(values[0]) if n == 1 else struct.pack(f">{n}i", *values))
        self.buf += b"".join(parts)

    def bytes_(self, b: bytes | None) -> None:
        if b is None:
            self.buf += _I32.pack(-1)
            return
        self.buf += _I32.pack(len(b))
        self.buf += b

    def getvalue(self) -> bytes:
        return bytes(self.buf)
