"""The classic group's lifecycle states, the table of legal transitions, and a logical timer.

What lives here: the five ``GroupState`` values of Kafka's ``ClassicGroupState``, the events
that move a group between them, the transition table, the error raised for an event the
table does not allow in the current state, and ``TimerQueue`` (deadlines on the caller's
logical clock). Nothing here knows about members or requests: that is `coordinator_group`
(the group's data) and `coordinator` (the request handlers and timer actions).

Theory of operation
-------------------
A group is ``EMPTY`` until a member joins; any membership change sends it to
``PREPARING_REBALANCE`` (the join phase: JoinGroup requests are parked until every known
member has rejoined or the rebalance timeout fires). Completing the join phase bumps the
generation and moves to ``COMPLETING_REBALANCE`` (the sync phase: followers' SyncGroup
requests are parked until the leader sends the assignment), or back to ``EMPTY`` when no
member is left. The leader's assignment makes the group ``STABLE``. A join, leave or
expiry in ``STABLE`` or ``COMPLETING_REBALANCE`` starts over. ``DEAD`` (the group was
unloaded from this coordinator) is terminal.

The table is Kafka's ``ClassicGroupState.validPreviousStates`` read the other way round,
with each arrow named by what causes it::

    EMPTY                -- PREPARE_REBALANCE   --> PREPARING_REBALANCE
    STABLE               -- PREPARE_REBALANCE   --> PREPARING_REBALANCE
    COMPLETING_REBALANCE -- PREPARE_REBALANCE   --> PREPARING_REBALANCE
    PREPARING_REBALANCE  -- JOIN_COMPLETE       --> COMPLETING_REBALANCE
    PREPARING_REBALANCE  -- JOIN_COMPLETE_EMPTY --> EMPTY
    COMPLETING_REBALANCE -- LEADER_SYNCED       --> STABLE
    any                  -- UNLOAD              --> DEAD

Timers: ``TimerQueue`` holds at most one deadline per key (scheduling a key again replaces
it, as Kafka's coordinator timer does). Due timers fire in (deadline, scheduling order).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass

__all__ = ["TRANSITIONS", "Action", "Due", "GroupEvent", "GroupState", "IllegalTransitionError",
           "TimerQueue", "allows", "next_state"]


class GroupState(enum.Enum):
    """Kafka's ``ClassicGroupState``."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class GroupEvent(enum.Enum):
    """What makes a group change state."""

    PREPARE_REBALANCE = "prepare-rebalance"
    JOIN_COMPLETE = "join-complete"
    JOIN_COMPLETE_EMPTY = "join-complete-empty"
    LEADER_SYNCED = "leader-synced"
    UNLOAD = "unload"


_S = GroupState
_E = GroupEvent

TRANSITIONS: dict[GroupState, dict[GroupEvent, GroupState]] = {
    _S.EMPTY: {
        _E.PREPARE_REBALANCE: _S.PREPARING_REBALANCE,
        _E.UNLOAD: _S.DEAD,
    },
    _S.PREPARING_REBALANCE: {
        _E.JOIN_COMPLETE: _S.COMPLETING_REBALANCE,
        _E.JOIN_COMPLETE_EMPTY: _S.EMPTY,
        _E.UNLOAD: _S.DEAD,
    },
    _S.COMPLETING_REBALANCE: {
        _E.PREPARE_REBALANCE: _S.PREPARING_REBALANCE,
        _E.LEADER_SYNCED: _S.STABLE,
        _E.UNLOAD: _S.DEAD,
    },
    _S.STABLE: {
        _E.PREPARE_REBALANCE: _S.PREPARING_REBALANCE,
        _E.UNLOAD: _S.DEAD,
    },
    _S.DEAD: {
        _E.UNLOAD: _S.DEAD,
    },
}


class IllegalTransitionError(RuntimeError):
    """An event the transition table does not allow in the current state (Kafka:
    ``IllegalStateException`` from ``ClassicGroup.transitionTo``)."""

    def __init__(self, group_id: str, state: GroupState, event: GroupEvent) -> None:
        self.group_id = group_id
        self.state = state
        self.event = event
        super().__init__(
            f"group {group_id!r}: can't handle event {event.name} in state {state.name}"
        )


def next_state(group_id: str, state: GroupState, event: GroupEvent) -> GroupState:
    """The state ``event`` leads to from ``state``, or ``IllegalTransitionError``."""
    try:
        return TRANSITIONS[state][event]
    except KeyError:
        raise IllegalTransitionError(group_id, state, event) from None


def allows(state: GroupState, event: GroupEvent) -> bool:
    """Whether ``event`` is legal in ``state`` (Kafka's ``canRebalance`` is one such test)."""
    return event in TRANSITIONS[state]


Action = Callable[[], None]


@dataclass(frozen=True)
class Due:
    """A timer that has come due: run ``action`` with the clock at ``deadline``."""

    deadline: int
    action: Action


class TimerQueue:
    """Deadlines on a logical clock, one per key; no threads, no real time."""

    def __init__(self) -> None:
        self._timers: dict[Hashable, tuple[int, int, Action]] = {}
        self._seq = itertools.count()

    def schedule(self, key: Hashable, deadline: int, action: Action) -> None:
        """Arm ``key`` at ``deadline``, replacing any timer already under ``key``."""
        self._timers[key] = (deadline, next(self._seq), action)

    def cancel(self, key: Hashable) -> None:
        self._timers.pop(key, None)

    def clear(self) -> None:
        self._timers.clear()

    def deadline_of(self, key: Hashable) -> int | None:
        entry = self._timers.get(key)
        return None if entry is None else entry[0]

    def next_deadline(self) -> int | None:
        if not self._timers:
            return None
        return min(deadline for deadline, _, _ in self._timers.values())

    def pop_due(self, now: int) -> Due | None:
        """Remove and return the earliest timer with ``deadline <= now``, if any."""
        if not self._timers:
            return None
        key, (deadline, _, action) = min(self._timers.items(), key=lambda kv: kv[1][:2])
        if deadline > now:
            return None
        del self._timers[key]
        return Due(deadline, action)
