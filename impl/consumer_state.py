"""The consumer's membership states and the table of their transitions.

What lives here: `MemberState` (Kafka's MemberState, plus FATAL and CLOSED), the events that
move a member between states, and `TRANSITIONS`, the one place that says which event is
allowed in which state and where it leads. Nothing else: `consumer_requests` and
`consumer_membership` decide which event a request, a response or a timer is, and fire it
here.

Theory of operation. A member starts UNJOINED. ``poll`` sends JoinGroup (PREPARING_REBALANCE);
a successful JoinGroup leads to SyncGroup (COMPLETING_REBALANCE); a successful SyncGroup to
STABLE, where the member heartbeats until a rebalance, an error or a leave. Retriable errors
go back to PREPARING_REBALANCE (JoinGroup is sent again at the next poll), errors that reset
the generation to UNJOINED, fatal errors to FATAL, which only ``close`` leaves. An event the
table lacks raises `ConsumerStateError` naming the state and the event.
"""

from __future__ import annotations

import enum

from .consumer_listener import ConsumerStateError

__all__ = ["TRANSITIONS", "Event", "MemberState", "transition"]


class MemberState(enum.Enum):
    """Kafka's MemberState, plus the two ends of a consumer's life."""

    UNJOINED = "UNJOINED"                          # not in a group, or just reset
    PREPARING_REBALANCE = "PREPARING_REBALANCE"    # onJoinPrepare done; JoinGroup sent or due
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"  # joined; SyncGroup sent
    STABLE = "STABLE"                              # synced; heartbeating
    FATAL = "FATAL"                                # a fatal error; every poll raises it
    CLOSED = "CLOSED"


class Event(enum.Enum):
    """What happened to a member; the value says it in words for error messages."""

    SEND_JOIN = "send JoinGroup"
    JOIN_OK = "JoinGroup succeeded"
    JOIN_RETRY = "JoinGroup to be retried"        # MEMBER_ID_REQUIRED, retriable errors
    SYNC_OK = "SyncGroup succeeded"
    SYNC_RETRY = "rebalance to be retried"        # SyncGroup REBALANCE_IN_PROGRESS, ...
    RESET = "generation reset"                    # ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, ...
    FAIL = "fatal error"
    LEAVE = "unsubscribe"
    CLOSE = "close"


_U = MemberState.UNJOINED
_P = MemberState.PREPARING_REBALANCE
_C = MemberState.COMPLETING_REBALANCE
_S = MemberState.STABLE
_F = MemberState.FATAL
_X = MemberState.CLOSED
_E = Event

TRANSITIONS: dict[MemberState, dict[Event, MemberState]] = {
    _U: {_E.SEND_JOIN: _P, _E.RESET: _U, _E.LEAVE: _U, _E.FAIL: _F, _E.CLOSE: _X},
    _P: {_E.SEND_JOIN: _P, _E.JOIN_OK: _C, _E.JOIN_RETRY: _P, _E.RESET: _U, _E.LEAVE: _U,
         _E.FAIL: _F, _E.CLOSE: _X},
    _C: {_E.SYNC_OK: _S, _E.SYNC_RETRY: _P, _E.RESET: _U, _E.LEAVE: _U, _E.FAIL: _F,
         _E.CLOSE: _X},
    _S: {_E.SEND_JOIN: _P, _E.RESET: _U, _E.LEAVE: _U, _E.FAIL: _F, _E.CLOSE: _X},
    _F: {_E.LEAVE: _F, _E.CLOSE: _X},
    _X: {_E.CLOSE: _X},
}


def transition(state: MemberState, event: Event) -> MemberState:
    """The state ``event`` leads to from ``state``; `ConsumerStateError` if not allowed."""
    try:
        return TRANSITIONS[state][event]
    except KeyError:
        raise ConsumerStateError(
            f"can't handle event {event.name} ({event.value}) in state {state.name}") from None
