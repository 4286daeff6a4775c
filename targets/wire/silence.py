"""Members that fell silent, or rejoined unprompted, after a successful SyncGroup, read from
a broker's exchange log.

A member whose SyncGroup was answered without error has joined its generation: from then on
its client heartbeats (every ``heartbeat.interval.ms``) or rejoins. One that sends nothing
more to its coordinator while its application keeps polling never completed the join on its
side; its session runs out and the group goes on without it. kafka-python 3 does this now
and then (findings/wire-kafka-python-range-subscription-change-I11.json, also on a plain
join): it logs the SyncGroup answer and never applies it. The wire layer names such members
when a step waits in vain, and tests that run kafka-python recognise the finding by it.

A member whose next request to its coordinator after such an answer is a JoinGroup, with no
error answer between to tell it to, dropped the generation it was given. A leader may do that
once when its metadata changed; kafka-python 3 does it every time the join completes while its
application is not inside ``poll`` (it discards the finished join and sends a new one), and with
a second member the group rebalances again and again (`rejoined_after_sync`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["COORDINATOR_APIS", "rejoined_after_sync", "silent_after_sync"]

#: what a joined member sends its coordinator to stay in its group (an OffsetCommit does not
#: count: kafka-python's auto-commit goes on, with its stale generation, while it hangs)
COORDINATOR_APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup")


def _by_member(exchanges: Iterable[Any]) -> tuple[dict[str, list[Any]], int]:
    """Each member's requests to its coordinator, and the log's latest receive time."""
    by_member: dict[str, list[Any]] = {}
    now = 0
    for e in exchanges:
        now = max(now, e.received_ms)
        if e.api in COORDINATOR_APIS and e.who.client_id:
            by_member.setdefault(e.who.client_id, []).append(e)
    return by_member, now


def rejoined_after_sync(exchanges: Iterable[Any]) -> dict[str, int]:
    """Client id → how many times the member's next request to its coordinator after a
    SyncGroup answered without error was a JoinGroup (members that never did are left out)."""
    counts: dict[str, int] = {}
    for who, requests in sorted(_by_member(exchanges)[0].items()):
        for e, after in zip(requests, requests[1:], strict=False):
            if e.api == "SyncGroup" and e.answered_ms is not None and e.error_code == 0 \
                    and after.api == "JoinGroup":
                counts[who] = counts.get(who, 0) + 1
    return counts


def silent_after_sync(exchanges: Iterable[Any], quiet_ms: int,
                      at_ns: int | None = None) -> dict[str, int]:
    """Client id → generation, for each member that sent its coordinator nothing for at least
    ``quiet_ms`` after a SyncGroup answered without error: until its next request to the
    coordinator (a LeaveGroup when it closes, say), or until now: ``at_ns``
    (CLOCK_MONOTONIC) on the broker's clock, else the log's latest request (a lone member's
    silence shows only with ``at_ns``: nobody else's traffic moves the log's clock)."""
    exchanges = list(exchanges)
    by_member, now = _by_member(exchanges)
    if at_ns is not None and exchanges:
        last = max(exchanges, key=lambda e: e.received_ns)
        now = max(now, last.received_ms + (at_ns - last.received_ns) // 1_000_000)
    silent: dict[str, int] = {}
    for who, requests in sorted(by_member.items()):
        for e, after in zip(requests, [*requests[1:], None], strict=True):
            until = now if after is None else after.received_ms
            if e.api == "SyncGroup" and e.answered_ms is not None and e.error_code == 0 \
                    and until - e.answered_ms >= quiet_ms:
                silent[who] = int(e.request.generation_id)
    return silent
