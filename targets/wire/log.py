"""The merged log of a wire group: every driver's events in the order they happened.

Theory of operation: every driver stamps its events with CLOCK_MONOTONIC nanoseconds, the
clock the harness reads too, so events of several processes can be put in one order. Events
arrive on each driver's reader thread (`receive`); they wait in ``incoming`` until no earlier
event can still be on its way, then `release` moves them, sorted by time, into ``entries``
and gives each the next global sequence number. "No earlier event on its way" is known, not
guessed from a delay: each driver's output is a stream with a mark, a time before which
everything it stamped has arrived — the stamp of its latest event (a driver writes in stamp
order), or the send time of a command whose ack has arrived (a barrier: `synced`). An event
is released once every open stream's mark has passed its stamp; a stream that lags is asked
for a barrier (its ``ping``), one at a time. A busy machine then only delays the merge, never
reorders it. An event that still arrives after a later one was released (a driver that
breaks the contract's order) is shown, and counted in ``late``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CALLBACKS", "Entry", "TopicPartition", "WireLog", "owned_at"]

TopicPartition = tuple[str, int]
CALLBACKS = ("assigned", "revoked", "lost")


@dataclass(frozen=True)
class Entry:
    """One logged happening. ``kind``: assigned / revoked / lost (``phase`` start or end),
    record, error, pause, resume, subscribe, closed; ``started``: the global seq of a
    callback's start (end entries only); ``before`` / ``after``: the client's assignment
    around a subscribe."""

    seq: int
    ts: int
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
    paused: tuple[TopicPartition, ...] | None = None  # the client's, after a callback


@dataclass(order=True)
class _Incoming:
    ts: int
    order: int
    source: int = field(compare=False)
    message: dict[str, Any] = field(compare=False)


def _tps(raw: Any) -> tuple[TopicPartition, ...]:
    return tuple(sorted((str(t), int(p)) for t, p, *_ in raw or ()))


class WireLog:
    """Entries in true order; ``cond`` wakes whoever waits for one."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.entries: list[Entry] = []
        self.incoming: list[_Incoming] = []
        self.sources: set[int] = set()
        self.late = 0
        self._order = 0
        self._starts: dict[tuple[int, str], int] = {}  # (source, member+kind) → start seq
        self.marks: dict[object, int] = {}  # open stream → everything stamped before it arrived
        self._pings: dict[object, Callable[[], None]] = {}
        self._asked: set[object] = set()  # streams with a barrier on its way

    def open_stream(self, stream: object, since_ns: int, ping: Callable[[], None]) -> None:
        """A driver's output, which stamps nothing before ``since_ns``; ``ping`` asks it
        for a barrier."""
        with self.cond:
            self.marks[stream] = max(self.marks.get(stream, since_ns), since_ns)
            self._pings[stream] = ping

    def close_stream(self, stream: object) -> None:
        """The driver's output ended: nothing more can come from it."""
        with self.cond:
            self.marks.pop(stream, None)
            self._pings.pop(stream, None)
            self._asked.discard(stream)
            self.cond.notify_all()

    def synced(self, stream: object, sent_ns: int) -> None:
        """A barrier: the ack of a command sent at ``sent_ns`` arrived from ``stream``."""
        with self.cond:
            self._asked.discard(stream)
            if stream in self.marks:
                self.marks[stream] = max(self.marks[stream], sent_ns)
            self.cond.notify_all()

    def receive(self, source: int, message: dict[str, Any], stream: object = None) -> None:
        with self.cond:
            self._order += 1
            self.sources.add(source)
            ts = int(message.get("ts") or time.monotonic_ns())
            if stream in self.marks:
                self.marks[stream] = max(self.marks[stream], ts)
            self.incoming.append(_Incoming(ts, self._order, source, message))
            self.cond.notify_all()

    def caught_up(self, ns: int) -> bool:
        """Has everything every open stream stamped before ``ns`` arrived? Streams that lag
        are asked for a barrier; called with ``cond`` held."""
        lagging = [s for s, mark in self.marks.items() if mark < ns]
        for stream in lagging:
            if stream not in self._asked:
                self._asked.add(stream)
                self._pings[stream]()
        return not lagging

    def release(self) -> int:
        """Move what can no longer be overtaken into ``entries``; called with ``cond``
        held. Returns how many events are still waiting."""
        if not self.incoming:
            return 0
        self.incoming.sort()
        if not self.caught_up(self.incoming[0].ts):
            return len(self.incoming)
        horizon = min(self.marks.values(), default=time.monotonic_ns())
        ready = [i for i in self.incoming if i.ts <= horizon]
        self.incoming = [i for i in self.incoming if i.ts > horizon]
        for item in ready:
            if self.entries and item.ts < self.entries[-1].ts:
                self.late += 1
            self._append(item)
        return len(self.incoming)

    def _append(self, item: _Incoming) -> None:
        m, seq = item.message, len(self.entries)
        name, member = str(m.get("event", "")), str(m.get("member", ""))
        common: dict[str, Any] = {"seq": seq, "ts": item.ts, "member": member,
                                  "source": item.source}
        if name in ("callback_start", "callback_end"):
            kind = str(m.get("kind", ""))
            key = (item.source, member + "/" + kind)
            started = -1
            if name == "callback_start":
                self._starts[key] = seq
            else:
                started = self._starts.pop(key, -1)
            generation, paused = m.get("generation"), m.get("paused")
            self.entries.append(Entry(
                **common, kind=kind, partitions=_tps(m.get("partitions")),
                phase="start" if name == "callback_start" else "end",
                member_id=str(m.get("memberId") or ""),
                generation=-1 if generation is None else int(generation), started=started,
                paused=None if paused is None else _tps(paused)))
        elif name == "records":
            for t, p, *_ in m.get("records") or ():
                self.entries.append(Entry(**{**common, "seq": len(self.entries)},
                                          kind="record", partitions=((str(t), int(p)),)))
        elif name == "subscribed":
            self.entries.append(Entry(**common, kind="subscribe", before=_tps(m.get("before")),
                                      after=_tps(m.get("after")),
                                      text=",".join(m.get("topics") or ())))
        elif name in ("paused", "resumed"):
            self.entries.append(Entry(**common, kind={"paused": "pause"}.get(name, "resume"),
                                      partitions=_tps(m.get("partitions"))))
        else:
            self.entries.append(Entry(**common, kind=name or "error",
                                      text=str(m.get("message", ""))))

    def wait_for(self, predicate: Any, timeout: float) -> bool:
        """Wait (bounded) until ``predicate()`` holds over the released entries."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                self.release()
                if predicate():
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.05))


def owned_at(entries: list[Entry], sources: dict[str, int], ts: int
             ) -> dict[str, tuple[TopicPartition, ...]]:
    """Each current member's ownership at ``ts`` (``sources``: member → its incarnation),
    from the callback ends in ``entries``."""
    owned: dict[str, set[TopicPartition]] = {n: set() for n in sources}
    for e in entries:
        if e.ts > ts or e.phase != "end" or sources.get(e.member) != e.source:
            continue
        if e.kind == "assigned":
            owned[e.member] |= set(e.partitions)
        elif e.kind in ("revoked", "lost"):
            owned[e.member] -= set(e.partitions)
    return {n: tuple(sorted(ps)) for n, ps in owned.items()}
