"""A second, deterministic shrink of a failing event list (delta debugging).

Hypothesis shrinks within its example budget; a long search can leave little of it. This
pass removes every event of one member at once (a member that joined with others need not
be part of the story), then chunks of events, then single events, keeping every removal
after which a fresh target still shows a violation of the same invariant, until no
removal does. The result is 1-minimal: dropping any one remaining event makes the
violation go away.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from ..properties.group import GroupTarget
from .events import DomainEvent
from .promises import Promises
from .replay import replay_events

__all__ = ["invariant_of", "minimize"]

INVARIANT_ID = re.compile(r"\bI\d+a?\b")


def invariant_of(violation: str) -> str:
    found = INVARIANT_ID.search(violation)
    return found.group(0) if found else ""


def _reproduces(events: list[DomainEvent], make_target: Callable[[], GroupTarget],
                invariant: str, promises: Promises | None, generations: bool = True
                ) -> list[str]:
    violations = replay_events(make_target(), events, promises, generations).violations
    return violations if any(invariant_of(v) == invariant for v in violations) else []


def minimize(events: list[DomainEvent], make_target: Callable[[], GroupTarget],
             invariant: str, max_replays: int = 2000,
             seconds: float | None = None,
             promises: Promises | None = None, generations: bool = True,
             on_replay: Callable[[int, int], None] | None = None
             ) -> tuple[list[DomainEvent], list[str]]:
    """The smallest sub-list found that still violates ``invariant``, and its violations;
    with ``seconds``, the smallest found by then (1-minimal only if time allowed).
    ``on_replay`` is told the replays so far and the events kept, after each replay."""
    deadline = None if seconds is None else time.monotonic() + seconds
    current = list(events)
    violations = _reproduces(current, make_target, invariant, promises, generations)
    if not violations:
        return current, []
    replays = 0
    chunk = max(1, len(current) // 2)

    def more() -> bool:
        if on_replay is not None and replays:
            on_replay(replays, len(current))
        return replays < max_replays and (deadline is None or time.monotonic() < deadline)

    for member in sorted({e.who for e in current if e.who is not None}):
        if not more():
            break
        candidate = [e for e in current if e.who != member]
        replays += 1
        found = (_reproduces(candidate, make_target, invariant, promises, generations)
                 if candidate else [])
        if found:
            current, violations = candidate, found

    while chunk >= 1 and more():
        removed_any = False
        start = 0
        while start < len(current) and more():
            candidate = current[:start] + current[start + chunk:]
            replays += 1
            found = (_reproduces(candidate, make_target, invariant, promises, generations)
                     if candidate else [])
            if found:
                current, violations, removed_any = candidate, found, True
            else:
                start += chunk
        if not removed_any:
            chunk //= 2
    return current, violations
