"""What a wire group has shown since its last view (`Shown`), and what one entry of the
merged log shows (`show_entry`): a callback's end, a record, an error, a pause mark or a
subscribe call, each judged against the member that logged it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ...properties.group import (
    CallbackRecord,
    RaisedError,
    RebalanceRecord,
    SubscribeCall,
    TopicPartition,
)
from .log import Entry
from .members import WireMember, apply_callback
from .raised import raised_error

__all__ = ["Shown", "show_entry"]


@dataclass
class Shown:
    """The tuples of the next `GroupView`, as the entries and generations show them."""

    callbacks: list[CallbackRecord] = field(default_factory=list)
    records: list[tuple[str, TopicPartition]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    subscribes: list[SubscribeCall] = field(default_factory=list)
    pauses: list[tuple[str, str, tuple[TopicPartition, ...]]] = field(default_factory=list)
    rebalances: list[RebalanceRecord] = field(default_factory=list)
    raised: list[RaisedError] = field(default_factory=list)

    def clear(self) -> None:
        """Forget what a view has taken."""
        for f in fields(self):
            getattr(self, f.name).clear()


def show_entry(shown: Shown, said: dict[str, str], m: WireMember, e: Entry) -> bool:
    """Show one entry of ``m``'s; False for an error repeated with nothing from it between
    (``said``: each member's last error shown, '' since something else). A record also moves
    the member's position as read (`WireMember.read`)."""
    if e.kind == "error" and said.get(e.member) == e.text:
        return False
    said[e.member] = e.text if e.kind == "error" else ""
    if e.kind in ("assigned", "revoked", "lost") and e.phase == "end":
        shown.callbacks.append(apply_callback(m, e))
    elif e.kind == "record":
        tp = e.partitions[0]
        shown.records.append((e.member, tp))
        m.read[tp] = max(m.read.get(tp, 0), e.offset + 1)
    elif e.kind == "error":
        shown.errors.append((e.member, f"{m.client.name}: {e.text}"))
        shown.raised += [raised_error(e.member, e.text)] if e.raised_by else []
    elif e.kind in ("pause", "resume"):
        m.marks = m.marks | set(e.partitions) if e.kind == "pause" \
            else m.marks - set(e.partitions)
        shown.pauses.append((e.member, e.kind, e.partitions))
    elif e.kind == "subscribe":
        shown.subscribes.append(
            SubscribeCall(e.member, frozenset(e.before), frozenset(e.after)))
    return True
