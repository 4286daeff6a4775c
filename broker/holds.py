"""Responses a hold rule keeps back, and their release in the harness's order.

What lives here: `Holds`, the broker's held responses on its event loop: `keep` parks one
until it is released (or the broker closes), `release` sends some in a given order, each
written before the next is let go.
"""

from __future__ import annotations

import asyncio
import itertools

from .steering import Exchange, Held

__all__ = ["Holds"]


class Holds:
    """The held responses; to be used from the broker's event loop only."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._held: dict[int, Held] = {}
        self._ids = itertools.count(1)
        self._last = 0

    async def keep(self, exchange: Exchange, tag: str) -> asyncio.Future[bool] | None:
        """Wait until this response is released; the future to set once it is written
        (None: the broker closed)."""
        held = Held(next(self._ids), exchange, self._loop.create_future(), tag)
        self._held[held.hold_id] = held
        self._last = held.hold_id
        try:
            sent: asyncio.Future[bool] | None = await held.waiter
        finally:
            self._held.pop(held.hold_id, None)  # released, or its connection is gone
        return sent

    def held(self, tag: str | None = None) -> list[Held]:
        return [h for h in self._held.values() if not h.waiter.done()
                and (tag is None or h.tag == tag)]

    async def release(self, hold_ids: list[int]) -> list[int]:
        """Send held responses in this order, each written before the next is let go; the
        ids of those written. An answer no longer held is skipped, not an error: released
        already (by another ordering), its connection closed, its member crashed or gone —
        whoever waited for it has gone, and the others still get theirs."""
        written: list[int] = []
        for hold_id in hold_ids:
            if not 0 < hold_id <= self._last:
                raise ValueError(f"no response was ever held as {hold_id}")
            held = self._held.pop(hold_id, None)
            if held is None or held.waiter.done():
                continue
            sent: asyncio.Future[bool] = self._loop.create_future()
            held.waiter.set_result(sent)
            if await sent:
                written.append(hold_id)
        return written

    def close(self) -> None:
        """Let every held response go unsent: the broker is closing."""
        for held in self._held.values():
            if not held.waiter.done():
                held.waiter.set_result(None)
