"""The events of static members (KIP-345): a restart within the session timeout (with the
same subscription or a changed one) and a second consumer started with a taken instance id.
A static member joins by `Join` with a ``group_instance_id``; it leaves by `Leave` (its
client sends no LeaveGroup, so the coordinator drops it at its session timeout) and crashes
by `Crash`, as any member.

Only a target whose members are static-capable plays them (``static_membership``, a wire
group whose clients all take ``group.instance.id``); any other target refuses them before
they act, as `Rejoin` is refused where no member can ask to rejoin.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from ..properties import static_rules as S
from ..properties.group import GroupTarget, MemberSpec
from .event_steps import last_seen, settle, until
from .event_types import MemberEvent
from .spec import ReferenceModel

__all__ = ["StaticDuplicate", "StaticRestart"]


def _static_spec(target: GroupTarget, model: ReferenceModel, member: str) -> MemberSpec:
    """The member's configuration; `ValueError` when the target cannot play static members
    or the member has no instance id."""
    if not getattr(target, "static_membership", False):
        raise ValueError(f"{target.name} cannot run static members (KIP-345)")
    spec = model.members[member].spec
    if spec.group_instance_id is None:
        raise ValueError(f"{member} is not a static member: it joined without an instance id")
    return spec


def _is_static(model: ReferenceModel, member: str) -> bool:
    found = model.members.get(member)
    return found is not None and found.spec.group_instance_id is not None


@dataclass(frozen=True)
class StaticRestart(MemberEvent):
    """The static member's consumer stops (no LeaveGroup) and a new one starts with its
    instance id within the session timeout; ``topics``: the new consumer's subscription
    (None: unchanged, the member's subscription now, not the one it joined with).
    Unchanged, into a settled group, KIP-345 promises no rebalance and the same partitions
    (I14); changed, the group rebalances to the new subscription; into a rebalance, the new
    consumer joins it."""

    op: ClassVar[str] = "static_restart"
    topics: tuple[str, ...] | None = None

    def happens(self, model: ReferenceModel) -> bool:
        return _is_static(model, self.member)

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        spec = _static_spec(target, model, self.member)
        current = model.members[self.member].subscription  # a subscribe since its join counts
        topics = self.topics if self.topics is not None else tuple(sorted(current)) or spec.topics
        changed = frozenset(topics) != current
        before = last_seen(model, self.member)
        start = model.last_view.generation if model.last_view else 0
        settled = model.last_view is not None and model.last_view.settled
        again = replace(spec, topics=topics)
        target.leave(self.member)
        model.left(self.member)
        target.join(self.member, again)
        model.joined(self.member, again)
        out = settle(model, target)
        end = model.last_view
        if out or changed or not settled or before is None or end is None:
            return out  # KIP-345 promises only an unchanged restart into a settled group
        model.judge("I14")
        now = end.members.get(self.member)
        return S.static_restart(self.member, before.owned, now.owned if now else frozenset(),
                                start, end.generation)

    def describe(self) -> str:
        to = "" if self.topics is None else f", now subscribed to {', '.join(self.topics)}"
        return f"{self.member} restarts as the same static member{to}"

    def label(self) -> str:
        return f"restart {self.member}"[:12]


@dataclass(frozen=True)
class StaticDuplicate(MemberEvent):
    """A second consumer, ``twin``, starts with the member's instance id: the coordinator
    fences the member, whose client must say so (I14); the fenced member is then closed and
    ``twin`` goes on in its place."""

    op: ClassVar[str] = "static_duplicate"
    twin: str

    def happens(self, model: ReferenceModel) -> bool:
        return _is_static(model, self.member) and self.twin not in model.members

    def apply(self, target: GroupTarget, model: ReferenceModel) -> list[str]:
        """The coordinator replaces the member at the twin's join: from then on the model
        holds it out of the group (its partitions go to the twin at once, while its client
        still holds them until it hears it is fenced: the overlap KIP-345 accepts for a
        misconfigured duplicate, not an I1 breach)."""
        spec = _static_spec(target, model, self.member)
        heard = len(model.reported)
        target.join(self.twin, spec)
        model.left(self.member)
        model.joined(self.twin, spec)
        out = until(model, target, lambda: any(  # its report of another error is not it
            who == self.member and S.FENCED.search(text)
            for who, text in model.reported[heard:]))
        model.judge("I14")
        out += S.fenced_duplicate(self.member, [text for who, text in model.reported[heard:]
                                                if who == self.member])
        target.leave(self.member)
        return out + settle(model, target)

    def describe(self) -> str:
        return f"{self.twin} starts with {self.member}'s group instance id"

    def label(self) -> str:
        return f"twin {self.member}"[:12]
