"""The requests in flight to one JSON-lines process, and how its answers find them:
`Window`.

Each request is written with an ``"id"`` of our own (`Window.line`); an answer that echoes
one answers that request, an answer without one answers the oldest request still unanswered
(a server that ignores ids answers in order). Answers are handed back in request order
(`Window.ready`), so a caller reads them as if it had sent one request at a time. The
window knows no process and no clock: `jsonl_process.JsonlProcess` writes, reads and times.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ...properties.jsonl_shapes import JSONObject
from .process_io import TargetFailure

__all__ = ["Outcome", "Pending", "Window", "request_line"]

#: what a request came to: its answer as the process wrote it (``{"error"}`` included,
#: without our ``"id"``), or the failure that ended it
Outcome = JSONObject | TargetFailure


def request_line(body: Mapping[str, object], ident: int) -> bytes:
    """``body`` as one line with ``"id": ident`` first (a caller's own ``"id"`` is
    replaced); ASCII, so every string, a lone surrogate too, reaches the process intact."""
    if "id" in body:
        body = {k: v for k, v in body.items() if k != "id"}
    text = json.dumps(body, ensure_ascii=True, separators=(",", ":"))
    rest = "}" if text == "{}" else "," + text[1:]
    return f'{{"id":{ident}{rest}\n'.encode("ascii")


@dataclass
class Pending:
    """One request: its body, the id it was last written with (None: not written to the
    process that runs now), and its outcome once known."""

    body: Mapping[str, object]
    ident: int | None = None
    outcome: Outcome | None = None


class Window:
    """The requests not yet handed back, in request order; at most ``size`` of them."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a window holds at least one request, not {size}")
        self.size = size
        self.order: deque[Pending] = deque()
        self.by_id: dict[int, Pending] = {}
        self._unsent: list[Pending] = []
        self._next_id = 0

    def has_room(self) -> bool:
        return len(self.order) < self.size

    def low(self) -> bool:
        """At most half full: time to fill it (fewer, bigger writes than one per answer)."""
        return len(self.order) <= self.size // 2

    def add(self, body: Mapping[str, object]) -> Pending:
        pending = Pending(body)
        self.order.append(pending)
        self._unsent.append(pending)
        return pending

    def line(self, pending: Pending) -> bytes:
        """The line that writes ``pending`` now, under a fresh id."""
        self._next_id += 1
        pending.ident = self._next_id
        self.by_id[self._next_id] = pending
        return request_line(pending.body, self._next_id)

    def unsent(self) -> list[Pending]:
        """Requests with no outcome that the running process was not given (each one
        is handed out once: the caller writes it)."""
        out, self._unsent = self._unsent, []
        return out

    def oldest(self) -> Pending | None:
        """The oldest request written and not answered (what a hang or a crash is blamed
        on)."""
        return next((p for p in self.order if p.outcome is None and p.ident is not None),
                    None)

    def in_flight(self) -> bool:
        return self.oldest() is not None

    def answer(self, answer: JSONObject) -> Pending:
        """Give ``answer`` (parsed, still with its ``"id"``) to its request; raises
        `TargetFailure` for an id no request in flight has, or an answer with nothing to
        answer."""
        ident = answer.pop("id", None)
        if ident is None:
            pending = self.oldest()
            if pending is None:
                raise TargetFailure("an answer to no request")
        else:
            found = self.by_id.get(ident) if type(ident) is int else None
            if found is None or found.outcome is not None:
                raise TargetFailure(f"an answer with id {ident!r}, which no request in "
                                    "flight has")
            pending = found
        self.settle(pending, answer)
        return pending

    def settle(self, pending: Pending, outcome: Outcome) -> None:
        pending.outcome = outcome
        if pending.ident is not None:
            self.by_id.pop(pending.ident, None)

    def restarted(self) -> None:
        """The process was replaced: every request it had not answered is to be written
        again (after the one the failure was blamed on was settled)."""
        for pending in self.order:
            if pending.outcome is None:
                pending.ident = None
        self.by_id.clear()
        self._unsent = [p for p in self.order if p.outcome is None]

    def ready(self) -> Iterator[Outcome]:
        """Hand back, in request order, every outcome known from the oldest request on."""
        while self.order and self.order[0].outcome is not None:
            outcome = self.order.popleft().outcome
            assert outcome is not None
            yield outcome

    def __len__(self) -> int:
        return len(self.order)
