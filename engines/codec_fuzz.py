"""The codec's fuzz inputs, for the codec tests and the long fuzz run
(``bench/fuzz_codec.py``): sample messages from a seeded `random.Random`, the length and
count fields of an encoding, mutations of encodings, and the check that every decoder gives a
value or a `CodecError`, nothing else (I10's last clause, on groupcheck's own codec).

Standard library and `groupcheck.impl` only (no Hypothesis).
"""

from __future__ import annotations

import random
import struct
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from ..impl.consumer_protocol import (
    AssignmentData,
    SubscriptionData,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from ..impl.errors import CodecError
from ..impl.jsonl import error_text, handle
from ..impl.types import Assignment, Subscription

Kind = Literal["subscription", "assignment"]
KINDS: tuple[Kind, Kind] = ("subscription", "assignment")
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
KAFKA_CLASSES = {"SchemaException", "RuntimeException", "IllegalArgumentException"}

# Names as Kafka writes them, and the characters that make Java's order differ from
# Python's (U+E000..U+FFFF against astral ones), invalid-in-Java lone surrogates aside.
_NAMES = ["t", "t1", "t2", "orders", "x.y-z_1", "__consumer_offsets", "ｔｏｐｉｃ", "naïve",
          "😀-events", "\ue000", "\U0001f600", "", "zz", "Aa", "BB"]


@dataclass(frozen=True)
class WireField:
    """A fixed-size integer field of an encoding: a header, length or count."""

    offset: int
    size: int  # 2 or 4 bytes
    name: str

    def read(self, data: bytes) -> int:
        fmt = ">h" if self.size == 2 else ">i"
        return int(struct.unpack_from(fmt, data, self.offset)[0])


def wire_fields(data: bytes, kind: Kind) -> list[WireField]:
    """The header and every length and count field of a well-formed encoding (the layout
    comes from its header), in wire order; of any other input, those that lie before the
    first field that runs past the end."""
    if len(data) < 2:
        return []
    fields = [WireField(0, 2, "version")]
    pos = 2

    def int_field(size: int, name: str) -> int:
        nonlocal pos
        f = WireField(pos, size, name)
        fields.append(f)
        pos += size
        return max(f.read(data), 0)

    def string(name: str) -> None:
        nonlocal pos
        n = int_field(2, name)  # read first: int_field moves pos
        pos += n

    def bytes_field(name: str) -> None:
        nonlocal pos
        n = int_field(4, name)
        pos += n

    def entries(name: str) -> None:
        nonlocal pos
        for i in range(int_field(4, f"{name}.count")):
            string(f"{name}[{i}].topic.len")
            n = int_field(4, f"{name}[{i}].partitions.count")
            pos += 4 * n

    layout = min(fields[0].read(data), 3)
    try:
        if kind == "assignment":
            entries("assigned")
            bytes_field("userData.len")
            return fields
        for i in range(int_field(4, "topics.count")):
            string(f"topics[{i}].len")
        bytes_field("userData.len")
        if layout >= 1:
            entries("owned")
        if layout >= 2:
            pos += 4
        if layout >= 3:
            string("rack.len")
    except struct.error:  # not well formed (already mutated): the fields up to there
        fields.pop()
    return fields


def bad_values(field: WireField, data: bytes) -> list[int]:
    """Values a hostile writer puts in a length or count field: negative, extreme, one more
    than it should be, more than the bytes that remain."""
    lo, hi = (INT16_MIN, INT16_MAX) if field.size == 2 else (INT32_MIN, INT32_MAX)
    current = field.read(data)
    left = len(data) - field.offset - field.size
    candidates = [-1, -2, lo, hi, current + 1, current - 1, left + 1, 0, 3, 4, 100]
    return [v for v in candidates if lo <= v <= hi]


def set_field(data: bytes, field: WireField, value: int) -> bytes:
    fmt = ">h" if field.size == 2 else ">i"
    return data[:field.offset] + struct.pack(fmt, value) + data[field.offset + field.size:]


def flip_bits(data: bytes, bits: list[int]) -> bytes:
    out = bytearray(data)
    for bit in bits:
        out[(bit // 8) % len(out)] ^= 1 << (bit % 8)
    return bytes(out)


def with_header(data: bytes, version: int) -> bytes:
    """The same body under another 2-byte header."""
    return struct.pack(">h", version) + data[2:]


def random_name(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return rng.choice(_NAMES)
    alphabet = "ab-._\u00e9\u4e2d\ue000\ufffd\U0001f600\U00010000"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))


def random_subscription(rng: random.Random, max_items: int = 6) -> Subscription:
    topics = [random_name(rng) for _ in range(rng.randint(0, max_items))]
    owned = [(rng.choice(topics) if topics and rng.random() < 0.8 else random_name(rng),
              rng.choice([0, 1, 2, 7, 99, rng.randint(INT32_MIN, INT32_MAX)]))
             for _ in range(rng.randint(0, max_items))]
    return Subscription(
        topics=topics,
        user_data=None if rng.random() < 0.3 else rng.randbytes(rng.randint(0, 12)),
        owned_partitions=owned,
        generation_id=rng.choice([-1, 0, 1, 5, INT32_MAX, rng.randint(INT32_MIN, INT32_MAX)]),
        rack_id=rng.choice([None, "", "r1", "rack-a", random_name(rng)]),
    )


def random_assignment(rng: random.Random, max_items: int = 6) -> Assignment:
    names = [random_name(rng) for _ in range(rng.randint(1, 3))]
    partitions = [(rng.choice(names), rng.choice([0, 1, 3, rng.randint(INT32_MIN, INT32_MAX)]))
                  for _ in range(rng.randint(0, max_items))]
    user_data = None if rng.random() < 0.5 else rng.randbytes(rng.randint(0, 12))
    return Assignment(partitions, user_data)


def large_subscription(topics: int = 500) -> Subscription:
    """Kafka's scale case: one member subscribed to 500 topics, owning one partition each."""
    names = [f"topic-{i:04d}" for i in range(topics)]
    return Subscription(topics=names, user_data=None, owned_partitions=[(t, 0) for t in names],
                        generation_id=7, rack_id="rack-a")


_LARGE = encode_subscription(large_subscription(), 3)


def random_encoding(rng: random.Random, kind: Kind) -> bytes:
    """A valid encoding of a random message at a random version (0..3, or a future one)."""
    version = rng.choice([0, 1, 2, 3, 3, 4, 100])
    if kind == "subscription":
        return encode_subscription(random_subscription(rng), version)
    return encode_assignment(random_assignment(rng), version)


def mutate(rng: random.Random, data: bytes, kind: Kind, other: bytes) -> bytes:
    """One random mutation of a valid encoding ``data``; ``other`` is spliced in by some."""
    choice = rng.randrange(8)
    fields = wire_fields(data, kind)
    if choice <= 2 and fields:  # a length, count or header field set to a hostile value
        field = rng.choice(fields)
        return set_field(data, field, rng.choice(bad_values(field, data)))
    if choice == 3:
        return flip_bits(data, [rng.randrange(8 * len(data)) for _ in range(rng.randint(1, 4))])
    if choice == 4:
        return data[:rng.randrange(len(data))]
    if choice == 5:
        return data[:rng.randint(0, len(data))] + other[rng.randint(0, len(other)):]
    if choice == 6:  # trailing bytes, or a future, older or negative header
        if rng.random() < 0.5:
            return data + rng.randbytes(rng.randint(1, 8))
        return with_header(data, rng.choice([-1, -2, INT16_MIN, 0, 1, 2, 3, 4, 7, INT16_MAX]))
    i = rng.randrange(len(data))  # a chunk deleted, duplicated or overwritten
    j = rng.randint(i, min(len(data), i + 8))
    return rng.choice([data[:i] + data[j:], data[:j] + data[i:],
                       data[:i] + rng.randbytes(j - i) + data[j:]])


def fuzz_input(rng: random.Random) -> bytes:
    """The next fuzz input: random bytes (sometimes behind a plausible header), or one or
    two mutations of a valid encoding (one in a thousand of the 500-topic one)."""
    if rng.random() < 0.001:
        return mutate(rng, _LARGE, "subscription", random_encoding(rng, "subscription"))
    if rng.random() < 0.2:
        body = rng.randbytes(rng.randint(0, 40))
        return body if rng.random() < 0.5 else struct.pack(">h", rng.randint(-2, 5)) + body
    kind = rng.choice(KINDS)
    data = random_encoding(rng, kind)
    other = random_encoding(rng, rng.choice(KINDS))
    for _ in range(rng.choice([1, 1, 1, 2])):
        if not data:
            break
        data = mutate(rng, data, kind, other)
    return data


def _check_error(exc: CodecError, data: bytes) -> str | None:
    header = struct.unpack_from(">h", data)[0] if len(data) >= 2 else None
    if not 0 <= exc.offset <= len(data):
        return f"offset {exc.offset} outside the input"
    if exc.version != header or exc.kafka_class not in KAFKA_CLASSES or not exc.field:
        return f"bad error details: version {exc.version}, class {exc.kafka_class}"
    return None


def _check_value(value: SubscriptionData | AssignmentData, data: bytes) -> str | None:
    if value.version != struct.unpack_from(">h", data)[0] or value.version < 0:
        return f"version {value.version} is not the header"
    if not 0 <= value.remaining <= len(data) - 2:
        return f"remaining {value.remaining} outside the input"
    return None


DECODERS: dict[Kind, Any] = {"subscription": decode_subscription,
                             "assignment": decode_assignment}


def decoder_problems(data: bytes, outcomes: Counter[str] | None = None) -> list[str]:
    """Feed ``data`` to every decoder (the codec's and the JSON-lines ``decode_*`` ops):
    each must give a value or a `CodecError` (with sane details), and the JSON-lines answer
    must agree with the codec. Returns the problems found, empty when none; counts each
    codec outcome (``"subscription: value"``, ``"assignment: SchemaException"``, …) in
    ``outcomes`` if given."""
    problems: list[str] = []
    for kind, decode in DECODERS.items():
        outcome: Any
        try:
            outcome = decode(data)
            problem = _check_value(outcome, data)
        except CodecError as exc:
            outcome, problem = exc, _check_error(exc, data)
        except Exception as exc:  # anything else is what we are looking for
            problems.append(f"decode_{kind} raised {type(exc).__name__}: {exc}")
            continue
        if problem:
            problems.append(f"decode_{kind}: {problem}")
        if outcomes is not None:
            label = outcome.kafka_class if isinstance(outcome, CodecError) else "value"
            outcomes[f"{kind}: {label}"] += 1
        answer = handle({"op": f"decode_{kind}", "hex": data.hex()})
        if isinstance(outcome, CodecError):
            text = error_text(outcome)
            if answer != {"error": text, "dataError": text}:
                problems.append(f"jsonl decode_{kind}: {answer!r}, expected the error {text}")
        elif "error" in answer or answer.get("version") != outcome.version:
            problems.append(f"jsonl decode_{kind}: {answer!r} for a value the codec decodes")
    return problems
