"""The merged log of a wire group: every driver's events in the order they happened.

Theory of operation: every driver stamps its events with CLOCK_MONOTONIC nanoseconds, the clock
the harness reads too, so events of several processes can be put in one order. Events arrive on
each driver's reader thread (`receive`); they wait in ``incoming`` until no earlier event can
still be on its way, then `release` moves them, sorted by time, into ``entries`` and gives each
the next global sequence number. The owner's ``drained`` is asked, with the moment of asking:
has every driver handed on every line it stamped before then (its pipe read to the end, or a
line stamped at or after that moment handed on already: a driver stamps and writes its lines
in one order, so a busy driver shared by many groups, whose pipe is never empty, holds no
group back)? A driver writes a line before it acts on what the line says (a revoke callback's
end before its client rejoins), so once that holds, every event stamped before the moment of
asking that anything received depends on has been received, and all those stamped before it
go out; until it holds, nothing goes out (the readers are threads of
the harness's own process: on two cores at load 12 one can wait its turn for over a second; a
driver stuck in the middle of a line is the step's `STEP_WAIT`). This matters on a busy machine
(fifty consumers, the broker in the harness's process, two cores), where a reader thread can
wait 100 ms and more for its turn: a member's revoke shown after another's assign that it
preceded reads as one partition owned twice (I1). Without ``drained`` the log waits a grace
that follows the deliveries: twice the longest delay (arrival minus stamp) among the last
`DELAY_WINDOW` events, at least `MERGE_GRACE_NS`, at most `MAX_GRACE_NS`. An event that arrives
after a later one was already released is still shown, and counted in ``late`` (without
``drained``, one source's events go out at once). An event whose fields cannot be read is a
driver's breach of the contract, not a client's doing: a `HarnessError`.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ...properties.harness import HarnessError
from .drivers.messages import DriverEvent, JsonPartition

__all__ = ["CALLBACKS", "DELAY_WINDOW", "MAX_GRACE_NS", "MERGE_GRACE_NS", "Entry",
           "TopicPartition", "WireLog", "owned_at"]

TopicPartition = tuple[str, int]
MERGE_GRACE_NS = 30_000_000  # the least grace
MAX_GRACE_NS = 1_000_000_000  # well inside a session timeout (2 s), so a step still moves
DELAY_WINDOW = 256  # the deliveries the grace follows
CALLBACKS = ("assigned", "revoked", "lost")


@dataclass(frozen=True)
class Entry:
    """One logged happening. ``kind``: assigned / revoked / lost (``phase`` start or end),
    record (one per record: its partition, ``offset`` and the client's ``generation``),
    commit (``style``, ``offsets``, the outcome in ``text``), error, pause, resume, subscribe,
    closed; ``started``: the global seq of a callback's start (end entries only); ``before`` /
    ``after``: the client's assignment around a subscribe."""

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
    raised_by: str = ""  # an error's: the client call that raised it to the application
    offset: int = -1  # a record's
    style: str = ""  # a commit's commit style
    offsets: tuple[tuple[str, int, int], ...] = ()  # a commit's (topic, partition, next offset)


@dataclass(order=True)
class _Incoming:
    ts: int
    order: int
    source: int = field(compare=False)
    message: DriverEvent = field(compare=False)


def _tps(raw: Iterable[JsonPartition] | None) -> tuple[TopicPartition, ...]:
    return tuple(sorted((str(t), int(p)) for t, p, *_ in raw or ()))


def _generation(message: DriverEvent) -> int:
    generation = message.get("generation")
    return -1 if generation is None else int(generation)


class WireLog:
    """Entries in true order; ``cond`` wakes whoever waits for one."""

    def __init__(self, drained: Callable[[int], bool] | None = None) -> None:
        self.cond = threading.Condition()
        self.drained = drained
        self.entries: list[Entry] = []
        self.incoming: list[_Incoming] = []
        self.sources: set[int] = set()
        self.late = 0
        self.delays: collections.deque[int] = collections.deque(maxlen=DELAY_WINDOW)
        self._order = 0
        self._starts: dict[tuple[int, str], int] = {}  # (source, member+kind) → start seq

    def receive(self, source: int, message: DriverEvent) -> None:
        with self.cond:
            self._order += 1
            self.sources.add(source)
            now = time.monotonic_ns()
            ts = int(message.get("ts") or now)
            if 0 <= now - ts <= MAX_GRACE_NS:  # a stamp off any clock says nothing of delays
                self.delays.append(now - ts)
            self.incoming.append(_Incoming(ts, self._order, source, message))
            self.cond.notify_all()

    def grace(self) -> int:
        """How old an event must be before no other can overtake it (nanoseconds)."""
        slowest = max(self.delays, default=0)
        return min(MAX_GRACE_NS, max(MERGE_GRACE_NS, 2 * slowest))

    def release(self) -> int:
        """Move what can no longer be overtaken into ``entries``; called with ``cond``
        held. Returns how many events are still waiting."""
        horizon = time.monotonic_ns()  # taken before the pipes are asked
        if self.drained is not None:
            if not self.drained(horizon):  # nothing goes out past a line on its way, and
                return max(1, len(self.incoming))  # the caller learns one is coming
        elif len(self.sources) > 1:
            horizon -= self.grace()
        if not self.incoming:
            return 0
        self.incoming.sort()
        ready = [i for i in self.incoming if i.ts <= horizon]
        self.incoming = [i for i in self.incoming if i.ts > horizon]
        for item in ready:
            if self.entries and item.ts < self.entries[-1].ts:
                self.late += 1
            try:
                self._append(item)
            except (ValueError, TypeError, KeyError) as exc:  # no client said that
                raise HarnessError(f"wire log: a driver event it cannot read: "
                                   f"{str(item.message)[:200]} ({exc})", thread="wire log") \
                    from exc
        return len(self.incoming)

    def _append(self, item: _Incoming) -> None:
        m, seq = item.message, len(self.entries)
        name, member = str(m.get("event", "")), str(m.get("member", ""))
        common = Entry(seq, item.ts, member, item.source, kind=name or "error")
        if name in ("callback_start", "callback_end"):
            kind = str(m.get("kind", ""))
            key = (item.source, member + "/" + kind)
            started = -1
            if name == "callback_start":
                self._starts[key] = seq
            else:
                started = self._starts.pop(key, -1)
            paused = m.get("paused")
            self.entries.append(replace(
                common, kind=kind, partitions=_tps(m.get("partitions")),
                phase="start" if name == "callback_start" else "end",
                member_id=str(m.get("memberId") or ""),
                generation=_generation(m), started=started,
                paused=None if paused is None else _tps(paused)))
        elif name == "records":
            generation = _generation(m)
            for t, p, *offset in m.get("records") or ():
                self.entries.append(replace(common, seq=len(self.entries), kind="record",
                                            partitions=((str(t), int(p)),),
                                            offset=int(offset[0]) if offset else -1,
                                            generation=generation))
        elif name == "commit":
            self.entries.append(replace(
                common, style=str(m.get("style", "")), text=str(m.get("outcome", "")),
                offsets=tuple((str(t), int(p), int(o)) for t, p, o in m.get("offsets") or ()),
                generation=_generation(m)))
        elif name == "subscribed":
            self.entries.append(replace(common, kind="subscribe",
                                        before=_tps(m.get("before")),
                                        after=_tps(m.get("after")),
                                        text=",".join(m.get("topics") or ())))
        elif name in ("paused", "resumed"):
            self.entries.append(replace(common, kind={"paused": "pause"}.get(name, "resume"),
                                        partitions=_tps(m.get("partitions"))))
        else:
            self.entries.append(replace(common, text=str(m.get("message", "")),
                                        raised_by=str(m.get("raised_by", ""))))

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
