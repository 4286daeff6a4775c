"""The broker's data: topics, their partitions' record batches, and committed offsets.

What lives here: `Topics` (create, grow, delete; each partition an in-memory log of v2
record batches) and `Offsets` (each group's committed offsets). Nothing here knows the wire:
the handlers in `data_apis` translate requests into calls on these.

Theory of operation
-------------------
A produced batch is read with kio's record-batch reader (magic 2, CRC, record count), then
stored as the bytes the producer sent with the one field a leader assigns rewritten: the
base offset (the first 8 bytes, outside the CRC). The high watermark is the next offset to
assign. A fetch returns whole batches from the one holding the fetch offset on, at least
one batch and then up to the byte limit (KIP-74). Memory is bounded by the caller's limit
on bytes kept per partition: past it the oldest batches go and the log start offset moves,
as retention would. No compression, no transactions, no timestamps index.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from kio.records.readers import read_batch
from kio.serial.errors import SerialError

__all__ = ["MAX_TOPIC_PARTITIONS", "Batch", "Committed", "Offsets", "PartitionLog", "StoreError",
           "Topic", "Topics"]

_EARLIEST = -2
_LATEST = -1


class StoreError(Exception):
    """A request the data cannot satisfy; ``code`` is the Kafka error code to answer."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


_UNKNOWN_TOPIC_OR_PARTITION = 3
_CORRUPT_MESSAGE = 2
_OFFSET_OUT_OF_RANGE = 1
_TOPIC_ALREADY_EXISTS = 36
_INVALID_PARTITIONS = 37
#: the most partitions a topic may have here: each is a log in memory, and a CreateTopics
#: request may ask for 2**31 - 1 of them in four bytes (Kafka answers INVALID_PARTITIONS to
#: a count its own checks refuse, so does this broker past the bound)
MAX_TOPIC_PARTITIONS = 100_000


@dataclass
class Batch:
    base_offset: int
    last_offset: int
    max_timestamp: int
    data: bytes


@dataclass
class PartitionLog:
    """One partition: its batches in offset order and its start and end offsets."""

    batches: list[Batch] = field(default_factory=list)
    log_start: int = 0
    high_watermark: int = 0
    size: int = 0

    def append(self, records: bytes, limit: int) -> int:
        """Append every batch in ``records``; return the base offset of the first."""
        first = self.high_watermark
        offset = 0
        while offset < len(records):
            try:
                batch, size = read_batch(records, offset)
            except (SerialError, ValueError, IndexError) as e:
                raise StoreError(_CORRUPT_MESSAGE, f"record batch at byte {offset}: {e}") from None
            data = bytearray(records[offset:offset + size])
            data[:8] = self.high_watermark.to_bytes(8, "big", signed=True)
            last = self.high_watermark + batch.last_offset_delta
            self.batches.append(Batch(self.high_watermark, last, batch.max_timestamp, bytes(data)))
            self.size += size
            self.high_watermark = last + 1
            offset += size
        self._trim(limit)
        return first

    def _trim(self, limit: int) -> None:
        while self.size > limit and len(self.batches) > 1:
            gone = self.batches.pop(0)
            self.size -= len(gone.data)
            self.log_start = self.batches[0].base_offset

    def read(self, fetch_offset: int, max_bytes: int) -> bytes:
        """Whole batches from the one holding ``fetch_offset``: one at least, then up to
        ``max_bytes``."""
        if not self.log_start <= fetch_offset <= self.high_watermark:
            raise StoreError(_OFFSET_OUT_OF_RANGE, f"offset {fetch_offset} not in "
                             f"[{self.log_start}, {self.high_watermark}]")
        out: list[bytes] = []
        total = 0
        for batch in self.batches:
            if batch.last_offset < fetch_offset:
                continue
            if out and total + len(batch.data) > max_bytes:
                break
            out.append(batch.data)
            total += len(batch.data)
        return b"".join(out)

    def offset_for_time(self, timestamp: int) -> int:
        """ListOffsets: earliest, latest, or the first batch with a timestamp ≥ the one
        asked (batch granularity: no time index)."""
        if timestamp == _EARLIEST:
            return self.log_start
        if timestamp == _LATEST:
            return self.high_watermark
        for batch in self.batches:
            if batch.max_timestamp >= timestamp:
                return batch.base_offset
        return -1


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionLog]
    changed_ms: int = 0


class Topics:
    """Every topic of the broker; ids are derived from the name, so runs replay exactly."""

    def __init__(self, *, bytes_per_partition: int = 64 * 1024 * 1024) -> None:
        self._topics: dict[str, Topic] = {}
        self.bytes_per_partition = bytes_per_partition

    def __contains__(self, name: object) -> bool:
        return name in self._topics

    def names(self) -> list[str]:
        return sorted(self._topics)

    def get(self, name: str) -> Topic:
        topic = self._topics.get(name)
        if topic is None:
            raise StoreError(_UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {name!r}")
        return topic

    def partition_counts(self) -> dict[str, int]:
        return {name: len(t.partitions) for name, t in self._topics.items()}

    def log_ends(self, names: Iterable[str] | None = None
                 ) -> dict[tuple[str, int], tuple[int, int]]:
        """Each partition's log start offset and high watermark (of the topics ``names``
        that exist, else of every topic)."""
        topics = self._topics if names is None else \
            {n: self._topics[n] for n in names if n in self._topics}
        return {(name, i): (p.log_start, p.high_watermark)
                for name, t in topics.items() for i, p in enumerate(t.partitions)}

    def create(self, name: str, partitions: int, now_ms: int = 0) -> Topic:
        if name in self._topics:
            raise StoreError(_TOPIC_ALREADY_EXISTS, f"topic {name!r} already exists")
        if partitions < 1:
            raise StoreError(_INVALID_PARTITIONS, f"{partitions} partitions: need at least 1")
        _within_bound(partitions)
        seed = zlib.crc32(name.encode()).to_bytes(4, "big") * 4
        topic = Topic(name, uuid.UUID(bytes=seed, version=4),
                      [PartitionLog() for _ in range(partitions)], now_ms)
        self._topics[name] = topic
        return topic

    def grow(self, name: str, partitions: int, now_ms: int = 0) -> None:
        """Add partitions up to ``partitions`` in all (CreatePartitions never shrinks)."""
        topic = self.get(name)
        if partitions <= len(topic.partitions):
            raise StoreError(_INVALID_PARTITIONS, f"topic {name!r} has {len(topic.partitions)} "
                             f"partitions; cannot grow it to {partitions}")
        _within_bound(partitions)
        topic.partitions.extend(PartitionLog() for _ in range(partitions - len(topic.partitions)))
        topic.changed_ms = now_ms

    def delete(self, name: str) -> None:
        self.get(name)
        del self._topics[name]

    def partition(self, name: str, index: int) -> PartitionLog:
        topic = self.get(name)
        if not 0 <= index < len(topic.partitions):
            raise StoreError(_UNKNOWN_TOPIC_OR_PARTITION, f"{name}-{index} does not exist")
        return topic.partitions[index]


@dataclass(frozen=True)
class Committed:
    offset: int
    metadata: str | None
    leader_epoch: int = -1


class Offsets:
    """Committed offsets: group → (topic, partition) → offset and metadata."""

    def __init__(self) -> None:
        self._groups: dict[str, dict[tuple[str, int], Committed]] = {}

    def commit(self, group: str, topic: str, partition: int, entry: Committed) -> None:
        self._groups.setdefault(group, {})[(topic, partition)] = entry

    def get(self, group: str, topic: str, partition: int) -> Committed | None:
        return self._groups.get(group, {}).get((topic, partition))

    def of_group(self, group: str) -> dict[tuple[str, int], Committed]:
        return dict(self._groups.get(group, {}))

    def forget_topic(self, topic: str) -> None:
        for committed in self._groups.values():
            for key in [k for k in committed if k[0] == topic]:
                del committed[key]


def _within_bound(partitions: int) -> None:
    if partitions > MAX_TOPIC_PARTITIONS:
        raise StoreError(_INVALID_PARTITIONS, f"{partitions} partitions: this broker keeps at "
                         f"most {MAX_TOPIC_PARTITIONS:,} a topic")
