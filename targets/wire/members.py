"""A wire group's members as the harness keeps them (`WireMember`), and what a callback's
end in the merged log does to one (`apply_callback`).

A member's ownership is exactly its recorded intervals: a partition is owned from the end of
the assign callback that gave it to the end of the revoke or lost callback that took it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...properties.group import CallbackRecord, MemberSpec, TopicPartition
from .clients import ClientInfo
from .driver_process import DriverProcess
from .log import Entry

__all__ = ["WireMember", "apply_callback"]


@dataclass
class WireMember:
    client: ClientInfo
    driver: DriverProcess
    source: int
    spec: MemberSpec
    subscription: frozenset[str]
    owned: set[TopicPartition] = field(default_factory=set)
    marks: set[TopicPartition] = field(default_factory=set)  # the app's pause marks
    member_id: str = ""
    generation: int = -1
    assigns: int = 0
    joined_owned: frozenset[TopicPartition] = frozenset()
    polling: bool = True
    cooperative: bool = False  # every assignor of its list is cooperative (KIP-429)


def apply_callback(m: WireMember, e: Entry) -> CallbackRecord:
    """The member after a callback's end entry; the callback as the model reads it."""
    before = tuple(sorted(m.owned))
    if e.kind == "assigned":
        m.owned |= set(e.partitions)
        m.assigns += 1
        m.joined_owned = frozenset(m.owned)
    else:
        m.owned -= set(e.partitions)
    m.member_id, m.generation = e.member_id, e.generation
    if e.paused is not None:  # the client says which partitions it holds paused
        m.marks = set(e.paused)
    return CallbackRecord(e.seq, e.member, e.kind, e.partitions, before, e.generation,
                          e.member_id, started=e.started)
