"""One confluent-kafka `Consumer` on its own poll thread, and the log every member writes to.

Rules of this file: the `Consumer` is created, driven and closed only on its own thread (a
command queue carries the driver's requests: subscribe, pause, resume, stop or restart
polling, close); callbacks run inside ``poll`` on that thread, as in any application. Every
callback is logged twice in the shared `WireLog` — when it starts and when it ends, after the
callback has applied the change to the client (``(incremental_)assign`` / ``unassign``) — so
an ownership interval runs from the end of an assign callback to the end of the revoke or
lost callback that releases the partition. Records, consumer errors, pause / resume and
subscribe calls are logged too, each with the next global sequence number and a
``time.monotonic()`` stamp. Nothing here waits on a fixed sleep: the driver waits on a
command's completion, the log's condition variable, or the queue, always with a deadline.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TopicPartition = tuple[str, int]

SESSION_TIMEOUT_MS = 2000  # a mock rebalance round lasts about session.timeout.ms − 1000
HEARTBEAT_INTERVAL_MS = 300
MAX_POLL_INTERVAL_MS = 3000  # the rebalance timeout too; librdkafka wants ≥ the session
STATS_INTERVAL_MS = 200
POLL_SECONDS = 0.05
IDLE_SECONDS = 0.2  # how long an idle (stalled) thread blocks on its queue per turn
COMMAND_TIMEOUT = 60.0  # a command not done by then is a harness error (never a hang)
SLOW_REVOKE_LIMIT = 30.0  # a slow revoke callback gives up waiting for a taker after this


@dataclass(frozen=True)
class Entry:
    """One logged happening. ``kind``: assigned / revoked / lost (``phase`` start or end),
    record, error, pause, resume, subscribe; ``started``: the seq of the callback's start
    (end entries only); ``before`` / ``after``: the client's assignment around a subscribe."""

    seq: int
    t: float
    member: str
    source: int  # which incarnation of the member (a name comes back after leave or crash)
    kind: str
    partitions: tuple[TopicPartition, ...] = ()
    phase: str = ""
    member_id: str = ""
    generation: int = -1
    started: int = -1
    text: str = ""
    before: tuple[TopicPartition, ...] = ()
    after: tuple[TopicPartition, ...] = ()


@dataclass
class Stats:
    """The member's last librdkafka statistics of its group: state and join state."""

    seq_at: int  # entries in the log when they arrived
    t: float
    state: str
    join_state: str


class WireLog:
    """The global, ordered log of every member; a condition wakes whoever waits on it."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.entries: list[Entry] = []
        self.stats: dict[int, Stats] = {}  # by source
        self.sources = 0

    def new_source(self) -> int:
        with self.cond:
            self.sources += 1
            return self.sources

    def add(self, member: str, source: int, kind: str, **fields: Any) -> int:
        with self.cond:
            seq = len(self.entries)
            self.entries.append(Entry(seq, time.monotonic(), member, source, kind, **fields))
            self.cond.notify_all()
            return seq

    def add_stats(self, source: int, state: str, join_state: str) -> None:
        with self.cond:
            self.stats[source] = Stats(len(self.entries), time.monotonic(), state, join_state)
            self.cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, timeout)

    def taken_by_other(self, member: str, partitions: set[TopicPartition], since: int) -> bool:
        """Another member finished an assign callback naming one of ``partitions``."""
        return any(e.kind == "assigned" and e.phase == "end" and e.member != member
                   and partitions & set(e.partitions) for e in self.entries[since:])


def group_metadata(consumer: Any) -> tuple[int, str]:
    """The generation and member id librdkafka holds right now, read from its serialized
    consumer group metadata (``CGMDv2:``, a native int32 generation, then NUL-terminated
    group id and member id) — the Python client has no accessor for the generation."""
    raw = bytes(consumer.consumer_group_metadata())
    if not raw.startswith(b"CGMDv2:") or len(raw) < 11:
        return -1, str(consumer.memberid() or "")
    generation = int.from_bytes(raw[7:11], sys.byteorder, signed=True)
    _group, _, rest = raw[11:].partition(b"\0")
    member_id, _, _ = rest.partition(b"\0")
    return generation, member_id.decode("utf-8", "replace")


def _parts(parts: list[Any]) -> tuple[TopicPartition, ...]:
    return tuple(sorted((p.topic, p.partition) for p in parts))


@dataclass
class _Command:
    op: str
    args: tuple[Any, ...] = ()
    done: threading.Event = field(default_factory=threading.Event)
    error: str = ""


class WireMember(threading.Thread):
    """A librdkafka consumer of the group, polling on this thread until it is closed."""

    def __init__(self, name: str, conf: dict[str, Any], log: WireLog,
                 cooperative: bool) -> None:
        super().__init__(name=f"groupcheck-{name}", daemon=True)
        self.member, self.conf, self.log, self.cooperative = name, dict(conf), log, cooperative
        self.source = log.new_source()
        self.muted = False  # a crashed process: what librdkafka does later is no app's doing
        self.commands: queue.Queue[_Command] = queue.Queue()
        self.polling = True
        self.slow_revoke = False
        self.consumer: Any = None

    # --- the driver's side ------------------------------------------------------------------

    def call(self, op: str, *args: Any, timeout: float = COMMAND_TIMEOUT) -> None:
        """Run one command on the member's thread and wait (bounded) until it is done."""
        command = _Command(op, args)
        self.commands.put(command)
        if not command.done.wait(timeout):
            raise TimeoutError(f"librdkafka: {self.member} did not finish {op} in {timeout:.0f}s")
        if command.error:
            self._add("error", text=f"{op}: {command.error}")

    def _add(self, kind: str, **fields: Any) -> int:
        return -1 if self.muted else self.log.add(self.member, self.source, kind, **fields)

    # --- the member's thread ----------------------------------------------------------------

    def run(self) -> None:
        from confluent_kafka import Consumer

        conf = {**self.conf, "stats_cb": self._stats,
                "statistics.interval.ms": STATS_INTERVAL_MS}
        self.consumer = Consumer(conf)
        try:
            while True:
                try:
                    command = self.commands.get(timeout=0 if self.polling else IDLE_SECONDS)
                except queue.Empty:
                    command = None
                if command is not None:
                    finished = self._run_command(command)
                    if finished:
                        return
                    continue
                if self.polling:
                    self._poll_once()
        finally:
            self._close()

    def _run_command(self, command: _Command) -> bool:
        try:
            getattr(self, f"_do_{command.op}")(*command.args)
        except Exception as exc:  # noqa: BLE001 - the client's error is what we report
            command.error = f"{type(exc).__name__}: {exc}"
        finally:
            command.done.set()
        return command.op == "close"

    def _poll_once(self) -> None:
        message = self.consumer.poll(POLL_SECONDS)
        if message is None:
            return
        if message.error() is not None:
            self._add("error", text=str(message.error().str()), member_id=self._member_id())
        else:
            self._add("record", partitions=((message.topic(), message.partition()),))

    def _close(self) -> None:
        if self.consumer is not None:
            consumer, self.consumer = self.consumer, None
            try:
                consumer.close()
            except Exception as exc:  # noqa: BLE001 - closing twice or after a fatal error
                self._add("error", text=f"close: {exc}")

    # --- commands ---------------------------------------------------------------------------

    def _do_subscribe(self, topics: tuple[str, ...]) -> None:
        before = _parts(self.consumer.assignment())
        self.consumer.subscribe(list(topics), on_assign=self._on_assign,
                                on_revoke=self._on_revoke, on_lost=self._on_lost)
        after = _parts(self.consumer.assignment())
        self._add("subscribe", before=before, after=after, text=",".join(topics))

    def _do_pause(self, partitions: tuple[TopicPartition, ...]) -> None:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        owned = set(_parts(self.consumer.assignment()))  # an application pauses what it has
        mine = tuple(tp for tp in partitions if tp in owned)
        self.consumer.pause([KafkaTopicPartition(t, p) for t, p in mine])
        self._add("pause", partitions=mine)

    def _do_resume(self, partitions: tuple[TopicPartition, ...]) -> None:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        self.consumer.resume([KafkaTopicPartition(t, p) for t, p in partitions])
        self._add("resume", partitions=partitions)

    def _do_polling(self, on: bool) -> None:
        self.polling = on

    def _do_slow_revoke(self) -> None:
        self.slow_revoke = True

    def _do_close(self) -> None:
        self.slow_revoke = False  # nobody takes over before the LeaveGroup that close sends
        self._close()

    # --- callbacks (inside poll, on this thread) --------------------------------------------

    def _member_id(self) -> str:
        return str(self.consumer.memberid() or "") if self.consumer is not None else ""

    def _membership(self) -> tuple[int, str]:
        return group_metadata(self.consumer) if self.consumer is not None else (-1, "")

    def _stats(self, text: str) -> None:
        group = json.loads(text).get("cgrp") or {}
        self.log.add_stats(self.source, str(group.get("state", "")),
                           str(group.get("join_state", "")))

    def _callback(self, kind: str, consumer: Any, parts: list[Any]) -> None:
        partitions = _parts(parts)
        generation, member_id = self._membership()
        started = self._add(kind, partitions=partitions, phase="start", member_id=member_id,
                            generation=generation)
        if kind == "revoked" and self.slow_revoke and partitions:
            self.slow_revoke = False  # slower than the rebalance: until someone else has them
            wanted = set(partitions)
            self.log.wait_for(lambda: self.log.taken_by_other(self.member, wanted, started),
                              SLOW_REVOKE_LIMIT)
        if kind == "assigned":
            (consumer.incremental_assign if self.cooperative else consumer.assign)(parts)
        elif self.cooperative:
            consumer.incremental_unassign(parts)
        else:
            consumer.unassign()
        self._add(kind, partitions=partitions, phase="end", member_id=member_id,
                  generation=generation, started=started)

    def _on_assign(self, consumer: Any, parts: list[Any]) -> None:
        self._callback("assigned", consumer, parts)

    def _on_revoke(self, consumer: Any, parts: list[Any]) -> None:
        self._callback("revoked", consumer, parts)

    def _on_lost(self, consumer: Any, parts: list[Any]) -> None:
        self._callback("lost", consumer, parts)


def consumer_conf(bootstraps: str, assignor: str) -> dict[str, Any]:
    """Quick rebalances on the mock: a 2 s session, 300 ms heartbeats, a 3 s poll interval."""
    return {"bootstrap.servers": bootstraps, "group.id": "groupcheck",
            "partition.assignment.strategy": assignor,
            "session.timeout.ms": SESSION_TIMEOUT_MS,
            "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
            "max.poll.interval.ms": MAX_POLL_INTERVAL_MS,
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "log_level": 3}
