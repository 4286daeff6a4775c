"""Members the coordinator will not let in while the group keeps its members, read from a
broker's exchange log: `last_joins` (each member's latest JoinGroup) and `cannot_join`.

Kafka's coordinator admits a JoinGroup only when the protocols it offers (its assignors, in
preference order) share a name with every member of the group; otherwise it answers
INCONSISTENT_GROUP_PROTOCOL, and answers so again to every retry for as long as those members
stay. A member whose latest JoinGroup got that answer from the coordinator itself (not one
the harness injected), while each other live member's latest JoinGroup was admitted with
protocols that share none of its own, cannot join until one of them leaves: a settle that
waits for it waits in vain, and the wire group says so at once instead (`WireGroup.step`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["INCONSISTENT_GROUP_PROTOCOL", "LastJoin", "cannot_join", "last_joins"]

INCONSISTENT_GROUP_PROTOCOL = 23  # Kafka's error code


@dataclass(frozen=True)
class LastJoin:
    """A member's latest JoinGroup: the protocols it offered and the coordinator's answer
    (None while it is in flight); ``steered``: the answer was the harness's, not the
    coordinator's own."""

    protocols: tuple[str, ...]
    error_code: int | None
    steered: bool = False


def last_joins(exchanges: Iterable[Any], group: str | None = None) -> dict[str, LastJoin]:
    """Client id → its latest JoinGroup (of ``group``, or of any group for None)."""
    joins: dict[str, LastJoin] = {}
    for e in exchanges:
        if e.api != "JoinGroup" or not e.who.client_id:
            continue
        if group is not None and getattr(e.request, "group_id", group) != group:
            continue
        protocols = tuple(str(p.name) for p in getattr(e.request, "protocols", None) or ())
        code = None if e.answered_ms is None else (e.error_code or 0)
        joins[e.who.client_id] = LastJoin(protocols, code, bool(e.steering))
    return joins


def cannot_join(joins: dict[str, LastJoin], live: Iterable[str]) -> str:
    """Why a live member cannot join while the other live members stay ('' for none): the
    coordinator refused its latest JoinGroup with INCONSISTENT_GROUP_PROTOCOL, and every other
    live member was admitted with protocols that share none of its own."""
    members = sorted(live)
    for name in members:
        refused = joins.get(name)
        if refused is None or refused.steered \
                or refused.error_code != INCONSISTENT_GROUP_PROTOCOL:
            continue
        others = [joins.get(n) for n in members if n != name]
        admitted = [j for j in others if j is not None and j.error_code == 0]
        if not others or len(admitted) != len(others):
            continue  # someone has not been admitted yet: the group may still change
        common = set.intersection(*(set(j.protocols) for j in admitted))
        if not common & set(refused.protocols):
            shared = f"[{', '.join(sorted(common))}]" if common else "no assignor"
            return (f"the coordinator refused {name}'s JoinGroup with "
                    f"INCONSISTENT_GROUP_PROTOCOL: it offers [{', '.join(refused.protocols)}]"
                    f", the group's other members ({', '.join(n for n in members if n != name)})"
                    f" have {shared} in common")
    return ""
