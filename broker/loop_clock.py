"""The coordinator's clock: the milliseconds the broker's loop was able to run.

What lives here: `LoopClock`, the clock the broker's coordinators read
(`server.BrokerCore.now_ms`), and the timers armed on it (each group's next session or
rebalance deadline).

Theory of operation
-------------------
A session timer judges a member's silence, but a member is silent only if the broker could
have heard it. When the broker's own process stops running (a long garbage collection, a
starved CPU), heartbeats keep arriving and wait in the sockets; on waking, a wall clock
would expire every member at once before those heartbeats are read, and the harness would
report lost partitions that no client caused. So the clock leaves out any stall of the
loop: a watch runs every `WATCH_S`, and a callback that runs later than `STALL_S` past
its due time (the watch, or a group's timer) takes the time it waited off the clock. The
watch runs in the same loop turn as the reads of what arrived during the stall, before
the requests they carry are served, so those requests see the corrected clock; a group
timer that fires early by the corrected clock is armed again (`server.BrokerCore._tick`).
A member's own stall is not the broker's: a client that stops heartbeating is still
expired at its session timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable

__all__ = ["EARLY_MS", "STALL_S", "WATCH_S", "LoopClock"]

WATCH_S = 0.05
STALL_S = 0.25  # far beyond a loop's ordinary lateness, far below a session timeout
EARLY_MS = 5  # a timer may fire this much before its deadline by the clock's rounding


class LoopClock:
    """Milliseconds since the loop started, less the stalls it noticed; never goes back."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._t0 = loop.time()
        self._stalled = 0.0  # seconds taken off the clock
        self._accounted = self._t0  # the loop time up to which stalls are counted
        self._last_ms = 0
        self._watch: asyncio.TimerHandle | None = None
        self._timers: dict[Hashable, asyncio.TimerHandle] = {}
        self._watch_at(self._t0 + WATCH_S)

    @property
    def stalled_s(self) -> float:
        """Seconds of stalls left out so far."""
        return self._stalled

    def now_ms(self) -> int:
        now = int((self._loop.time() - self._t0 - self._stalled) * 1000)
        self._last_ms = max(self._last_ms, now)
        return self._last_ms

    def loop_time(self, ms: int) -> float:
        """The loop time at which the clock will read ``ms`` (if the loop does not stall)."""
        return self._t0 + self._stalled + ms / 1000

    def late(self, due: float) -> bool:
        """A callback due at loop time ``due`` runs now: if the loop stalled past
        `STALL_S` since then (and since the last stall counted), take the stall off."""
        now = self._loop.time()
        stall = now - max(due, self._accounted)
        if stall <= STALL_S:
            return False
        self._stalled += stall
        self._accounted = now
        return True

    def arm(self, key: Hashable, deadline_ms: int | None, fire: Callable[[int], None]) -> None:
        """Call ``fire(deadline_ms)`` once the clock reaches ``deadline_ms``, in place of
        what was armed under ``key`` (None: only disarm it)."""
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        if deadline_ms is not None:
            due = self.loop_time(deadline_ms)
            self._timers[key] = self._loop.call_at(due, self._due, key, deadline_ms, due, fire)

    def close(self) -> None:
        for timer in [*self._timers.values(), *filter(None, [self._watch])]:
            timer.cancel()
        self._timers.clear()

    def _due(self, key: Hashable, deadline_ms: int, due: float,
             fire: Callable[[int], None]) -> None:
        del self._timers[key]
        self.late(due)
        if self.now_ms() < deadline_ms - EARLY_MS:  # a stall was left out: not due yet
            self.arm(key, deadline_ms, fire)
        else:
            fire(deadline_ms)

    def _watch_at(self, due: float) -> None:
        self._watch = self._loop.call_at(due, self._watched, due)

    def _watched(self, due: float) -> None:
        self.late(due)
        self._watch_at(self._loop.time() + WATCH_S)
