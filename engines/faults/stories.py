"""A fault point as a short story on a fresh group: the events that bring the group to the
point's step, the fault aimed at one member, the step, then a settle.

What lives here: `MEMBERS`, `TOPIC`, `PointNames` (a point's members and topic, apart from every
other point's: `PointNames.of`), `protocol_assignor` (the assignor a point's members run under its
rebalance protocol), `aimed_at` (the member a point's fault is aimed at), `crashed` (the members
its story crashes), `member_styles` (how each member commits) and `story` (the point's events,
or why the wire group cannot play it).

Theory of operation: the group forms on one topic of `PARTITIONS` partitions. The first join arms
the fault on the first member as soon as its consumer starts (a fault event is aimed at a member of
the group: the requests it sent in the meantime are not hit), and a second member follows; a second
join arms it on the first member of a settled group, then the second joins; a leave and a crash arm
it on the first of three settled members, then the third leaves or crashes (a LeaveGroup fault at a
leave is aimed at the member leaving: no other sends one). An error point is `CoordinatorError`, a
delayed answer is `Delay` by the member's request timeout (`targets.wire.timeouts`) and a margin, a
closed connection is `ConnectionClosed` and a moved coordinator `CoordinatorMoved` (the broker the
points run on has two nodes, `concurrent`), each aimed at the member's next request of the point's
API; the group ends with `Settle`, judged as every wire story is. Records arrive on every partition
before the fault and after it, and each member commits in a style of `STYLES` its client offers
(else none), so every point is judged for delivery (I17) too: the member the faults aim at commits
after every poll, so an OffsetCommit fault meets a commit, and the next owners start from what was
committed. Points played side by side on one broker are told apart by their members' names (the
broker aims a fault at a client id) and topics: `PointNames.of` suffixes `MEMBERS` and `TOPIC` with
the point's number, the same whether the point is played alone or beside others.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.event_types import Crash, Join, Leave
from ...model.events import DomainEvent
from ...model.group_events import (
    ConnectionClosed,
    CoordinatorError,
    CoordinatorMoved,
    Delay,
    Partitions,
    Produce,
    Settle,
)
from ...targets.wire.round_records import COOPERATIVE_PROTOCOLS
from ...targets.wire.timeouts import past_request_timeout
from ...targets.wire.wire_group import CONFIG
from .points import FaultPoint, Protocol

__all__ = ["FAULT_EVENTS", "MEMBERS", "PARTITIONS", "STYLES", "TOPIC", "PointNames", "aimed_at",
           "crashed", "fault_number", "member_styles", "protocol_assignor", "story"]

MEMBERS = ("c1", "c2", "c3")
TOPIC, PARTITIONS = "t0", 4
#: each member's commit style, where its client offers it (issue: delivery through faults)
STYLES = ("sync", "auto", "revoke")
#: the events that arm a point's fault
FAULT_EVENTS = (CoordinatorError, Delay, ConnectionClosed, CoordinatorMoved)
#: the assignor a protocol's points run when the target's own is of the other protocol
_DEFAULT = {"eager": "range", "cooperative": "cooperative-sticky"}


def protocol_assignor(protocol: Protocol, assignor: str) -> str:
    """The target's ``assignor`` when it rebalances under ``protocol``, else Kafka's usual
    assignor of that protocol."""
    cooperative = assignor in COOPERATIVE_PROTOCOLS
    return assignor if cooperative == (protocol == "cooperative") else _DEFAULT[protocol]


@dataclass(frozen=True)
class PointNames:
    """A story's three members and its topic."""

    members: tuple[str, ...] = MEMBERS
    topic: str = TOPIC

    @classmethod
    def of(cls, number: int) -> PointNames:
        """The names of the point numbered ``number``: ``c1-7``, ``c2-7``, ``c3-7``, ``t0-7``."""
        return cls(tuple(f"{m}-{number}" for m in MEMBERS), f"{TOPIC}-{number}")


def aimed_at(point: FaultPoint, names: PointNames = PointNames()) -> str:
    members = names.members
    return members[2] if point.step == "leave" and point.api == "LeaveGroup" else members[0]


def crashed(point: FaultPoint, names: PointNames = PointNames()) -> frozenset[str]:
    """The members the point's story crashes."""
    return frozenset(names.members[2:]) if point.step == "crash" else frozenset()


def _fault(point: FaultPoint, client: str, member: str) -> list[DomainEvent] | str:
    """The events that arm the point's fault (none for `points.no_fault`), or why a wire
    group cannot."""
    if point.kind == "none":
        return []
    if point.kind == "error":
        return [CoordinatorError(member, point.api, point.error)]
    if point.kind == "delay":
        try:
            seconds = past_request_timeout(client, CONFIG, point.api)
        except ValueError as exc:
            return str(exc)
        return [Delay(member, point.api, round(seconds * 1000))]
    if point.kind == "close":
        return [ConnectionClosed(member, point.api)]
    return [CoordinatorMoved(member, point.api)]


def member_styles(offered: tuple[str, ...]) -> tuple[str, ...]:
    """The commit style of each of `MEMBERS`: its `STYLES` entry where ``offered``, else
    ``none``."""
    return tuple(style if style in offered else "none" for style in STYLES)


def story(point: FaultPoint, client: str, assignor: str, names: PointNames = PointNames(),
          styles: tuple[str, ...] = ("none",)) -> list[DomainEvent] | str:
    """The point's events for members of ``client`` run with ``assignor`` (the protocol's,
    `protocol_assignor`), under ``names``, committing in the `STYLES` among ``styles`` (the
    client's offer); a string: why a wire group cannot play it."""
    fault = _fault(point, client, aimed_at(point, names))
    if isinstance(fault, str):
        return fault
    members = names.members
    first, second, third = (Join(m, (names.topic,), (assignor,), commit_style=style)
                            for m, style in zip(members, member_styles(styles), strict=True))
    records: list[DomainEvent] = [Produce(names.topic, p) for p in range(PARTITIONS)]
    opening: list[DomainEvent] = [Partitions(names.topic, PARTITIONS)]
    if point.step == "first_join":
        return [*opening, first, *records, *fault, second, *records, Settle()]
    if point.step == "second_join":
        return [*opening, first, *records, Settle(), *fault, second, *records, Settle()]
    gone = Crash(members[2]) if crashed(point, names) else Leave(members[2])
    return [*opening, first, second, third, *records, Settle(), *fault, gone, *records,
            Settle()]


def fault_number(events: list[DomainEvent]) -> int | None:
    """The number (from 1) of the story's event that arms its fault (None: it has none)."""
    return next((i for i, e in enumerate(events, 1) if isinstance(e, FAULT_EVENTS)), None)
