"""Domain events: the one vocabulary shared by the state machine, replay files and stories.

An event is a typed, frozen record of one thing that happens to a group (`Join`, `Crash`,
`Settle`, …: model/event_types.py for the members' events, model/group_events.py for the
group's and its coordinator's); a replay file holds it as a small JSON object, e.g.
``{"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["sticky"]}``
(model/event_registry.py reads and writes those). `apply_event` performs an event on a
target, keeps the reference model in step, and returns the violations the model sees along
the way (protocol steps are observed one by one). Replay is nothing but `apply_event` over
a saved list.
"""

from __future__ import annotations

from ..properties.group import GroupTarget
from .event_registry import EVENT_TYPES, EventFormatError, read_event, read_events, write_events
from .event_steps import (
    MAX_SETTLE_GENERATIONS,
    SETTLE_BUDGET,
    SETTLE_STEP_CAP,
)
from .event_types import DomainEvent
from .spec import ReferenceModel

__all__ = ["EVENT_TYPES", "MAX_SETTLE_GENERATIONS", "SETTLE_BUDGET", "SETTLE_STEP_CAP",
           "DomainEvent", "EventFormatError", "apply_event", "read_event", "read_events",
           "write_events"]


def apply_event(event: DomainEvent, target: GroupTarget, model: ReferenceModel) -> list[str]:
    """Perform one event on the target and the model; return what the model objects to.
    An event that cannot take place (its member is gone, a join that shares no assignor
    with the group) does nothing."""
    return event.apply(target, model) if event.happens(model) else []
