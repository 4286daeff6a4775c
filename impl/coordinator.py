"""Kafka's classic group coordinator for one group, as a sans-I/O state machine.

What lives here: the public face (``receive``, ``advance``, ``next_deadline``, ``unload``
and the harness's read-only view) and the request handlers, which decide what a JoinGroup,
SyncGroup, Heartbeat or LeaveGroup means in the group's current state. The steps of a
rebalance and the timer actions live in `coordinator_rebalance`, the group's data in
`coordinator_group`, its states and their transition table in `coordinator_state`.
No I/O, no threads, no real time: the caller hands in envelopes and a logical clock and
gets envelopes back.

Theory of operation
-------------------
``receive(envelope, now_ms)`` first fires every timer due by ``now_ms``, then handles the
request. A request is answered at once, or *parked* on its member (a JoinGroup during the
join phase, a SyncGroup during the sync phase) and answered later, when some other request
or a timer completes the phase. So every call returns the responses that became due, in
the order Kafka would complete them, possibly for other clients and possibly none for this
one. ``advance(now_ms)`` only fires timers; ``next_deadline()`` tells a driver how far it
may jump. Timers fire with the clock at their own deadline, so a chain of timers inside
one ``advance`` computes the same deadlines it would with small steps.

The rules follow Kafka 4.0's ``GroupMetadataManager`` (classic groups); docstrings cite
the KIP or ticket behind a rule. Member ids are ``clientId-UUID`` (``instanceId-UUID`` for
static members) with the UUID drawn from a seeded RNG, so runs replay exactly.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping
from types import MappingProxyType

from .coordinator_group import MemberSnapshot, Waiter
from .coordinator_rebalance import RebalanceCore, session_timer
from .coordinator_state import GroupEvent, GroupState
from .group_messages import (
    UNKNOWN_MEMBER_ID,
    Envelope,
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

__all__ = ["GroupCoordinator"]

_S = GroupState


class GroupCoordinator(RebalanceCore):
    """One classic group on its coordinator. Defaults are Kafka's broker defaults."""

    def __init__(self, group_id: str, *, initial_rebalance_delay_ms: int = 3000,
                 group_max_size: int = 2**31 - 1, min_session_timeout_ms: int = 6000,
                 max_session_timeout_ms: int = 1_800_000,
                 new_member_join_timeout_ms: int = 300_000, seed: int = 0) -> None:
        super().__init__(group_id, initial_rebalance_delay_ms=initial_rebalance_delay_ms,
                         new_member_join_timeout_ms=new_member_join_timeout_ms)
        self.group_id = group_id
        self.group_max_size = group_max_size
        self.min_session_timeout_ms = min_session_timeout_ms
        self.max_session_timeout_ms = max_session_timeout_ms
        self._rng = random.Random(seed)

    # -- driving -------------------------------------------------------------------------

    def receive(self, envelope: Envelope, now_ms: int) -> list[Envelope]:
        """Fire due timers, handle one request; return every response that became due."""
        self._fire_timers(now_ms)
        waiter = (envelope.client, envelope.request_id)
        message = envelope.message
        if isinstance(message, JoinGroupRequest):
            self._join(message, waiter)
        elif isinstance(message, SyncGroupRequest):
            self._sync(message, waiter)
        elif isinstance(message, HeartbeatRequest):
            self._heartbeat(message, waiter)
        elif isinstance(message, LeaveGroupRequest):
            self._leave(message, waiter)
        else:
            raise TypeError(f"the coordinator receives requests, not {type(message).__name__}")
        return self._drain()

    def advance(self, now_ms: int) -> list[Envelope]:
        """Move the clock to ``now_ms``, firing due timers; return the responses they free."""
        self._fire_timers(now_ms)
        return self._drain()

    def expire_session(self, member_id: str, now_ms: int) -> list[Envelope]:
        """End ``member_id``'s session at ``now_ms`` as if its session timer fired there (a
        harness's fault injection); the same exemptions apply. Unknown ids are ignored."""
        self._fire_timers(now_ms)
        self._session_expired(member_id)
        return self._drain()

    def next_deadline(self) -> int | None:
        """The earliest armed timer, or None."""
        return self._timers.next_deadline()

    def unload(self, now_ms: int) -> list[Envelope]:
        """The group leaves this coordinator (→ Dead): parked calls get NOT_COORDINATOR."""
        self._fire_timers(now_ms)
        for member in self._group.members():
            self._complete_join(member, JoinGroupResponse(Errors.NOT_COORDINATOR,
                                                          member_id=member.member_id))
            self._complete_sync(member, SyncGroupResponse(Errors.NOT_COORDINATOR))
        self._group.transition(GroupEvent.UNLOAD)
        self._timers.clear()
        return self._drain()

    # -- introspection (read-only) -------------------------------------------------------

    @property
    def now_ms(self) -> int:
        return self._now

    @property
    def state(self) -> GroupState:
        return self._group.state

    @property
    def generation_id(self) -> int:
        return self._group.generation_id

    @property
    def protocol_type(self) -> str | None:
        return self._group.protocol_type

    @property
    def protocol_name(self) -> str | None:
        return self._group.protocol_name

    @property
    def leader_id(self) -> str | None:
        return self._group.leader_id

    @property
    def members(self) -> Mapping[str, MemberSnapshot]:
        """Member id → snapshot, in Java HashMap order."""
        group = self._group
        return MappingProxyType({m.member_id: group.view(m) for m in group.members()})

    @property
    def assignments(self) -> Mapping[str, bytes]:
        """Member id → stored assignment, for members that have one."""
        return MappingProxyType({m.member_id: m.assignment for m in self._group.members()
                                 if m.assignment is not None})

    @property
    def pending_members(self) -> frozenset[str]:
        """Ids handed out with MEMBER_ID_REQUIRED and not yet joined (KIP-394)."""
        return frozenset(self._group.pending_join)

    def member_error(self, member_id: str, instance_id: str | None) -> Errors | None:
        """What a request naming this member and instance id is refused with (None: it
        names a member): FENCED_INSTANCE_ID when the instance id is another member id's
        (KIP-345), for OffsetCommit as for the group's own requests."""
        return self._group.validate_member(member_id, instance_id)

    def _new_member_id(self, client_id: str, instance_id: str | None) -> str:
        """``clientId-UUID`` (``instanceId-UUID`` for a static member), from a seeded RNG."""
        prefix = instance_id if instance_id is not None else client_id
        return f"{prefix}-{uuid.UUID(int=self._rng.getrandbits(128), version=4)}"

    # -- JoinGroup -----------------------------------------------------------------------

    def _join(self, req: JoinGroupRequest, waiter: Waiter) -> None:
        group = self._group
        if not self.min_session_timeout_ms <= req.session_timeout_ms <= self.max_session_timeout_ms:
            self._reply(waiter, JoinGroupResponse(Errors.INVALID_SESSION_TIMEOUT,
                                                  member_id=req.member_id))
        elif not self._accept_joining_member(req.member_id):
            self._drop(req.member_id)
            self._reply(waiter, JoinGroupResponse(Errors.GROUP_MAX_SIZE_REACHED))
        elif group.is_in(_S.DEAD):
            self._reply(waiter, JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE,
                                                  member_id=req.member_id))
        elif not group.supports_protocols(req.protocol_type, req.protocols):
            self._reply(waiter, JoinGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL,
                                                  member_id=req.member_id))
        elif req.member_id == UNKNOWN_MEMBER_ID:
            self._join_new_member(req, waiter)
        elif req.member_id in group.pending_join:
            self._join_pending_member(req, waiter)
        else:
            self._join_existing_member(req, waiter)

    def _accept_joining_member(self, member_id: str) -> bool:
        """``group.max.size`` (GROUP_MAX_SIZE_REACHED): while preparing, count the members
        that have rejoined, so the last ones to rejoin are the ones turned away."""
        group = self._group
        if group.is_in(_S.EMPTY, _S.DEAD):
            return True
        if group.is_in(_S.PREPARING_REBALANCE):
            rejoined = member_id in group and group.member(member_id).join_waiter is not None
            return rejoined or group.awaiting_join_count() < self.group_max_size
        return member_id in group or len(group) < self.group_max_size

    def _join_new_member(self, req: JoinGroupRequest, waiter: Waiter) -> None:
        """KIP-394: a dynamic member gets its id with MEMBER_ID_REQUIRED and is pending until
        it rejoins with it (expiring after its session timeout); a static member is added at
        once, or replaces the member its instance id maps to (KIP-345)."""
        group = self._group
        new_id = self._new_member_id(req.client_id, req.group_instance_id)
        if req.group_instance_id is None:
            group.pending_join.add(new_id)
            self._arm_session(new_id, req.session_timeout_ms)
            self._reply(waiter, JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id=new_id))
            return
        old_id = group.static_members.get(req.group_instance_id)
        if old_id is None:
            self._add_member_then_rebalance(req, waiter, new_id)
        else:
            self._replace_static_member(req, waiter, old_id, new_id)

    def _join_pending_member(self, req: JoinGroupRequest, waiter: Waiter) -> None:
        if req.group_instance_id is not None:
            # Kafka throws IllegalStateException here: a pending member is never static.
            self._reply(waiter, JoinGroupResponse(Errors.UNKNOWN_SERVER_ERROR,
                                                  member_id=req.member_id))
        else:
            self._add_member_then_rebalance(req, waiter, req.member_id)

    def _join_existing_member(self, req: JoinGroupRequest, waiter: Waiter) -> None:
        """In Stable the leader's join always rebalances, so does a changed follower; an
        unchanged follower (or, while completing, an unchanged member) gets the current
        generation back. JoinGroup carries no generation: staleness is caught at sync."""
        group = self._group
        error = group.validate_member(req.member_id, req.group_instance_id)
        if error is not None:
            self._reply(waiter, JoinGroupResponse(error, member_id=req.member_id))
            return
        member = group.member(req.member_id)
        unchanged = member.matches(req.protocols)
        if group.is_in(_S.PREPARING_REBALANCE):
            self._update_member_then_rebalance(member, req, waiter)
        elif group.is_in(_S.COMPLETING_REBALANCE) and unchanged:
            self._reply(waiter, self._current_generation(member, with_members=True))
        elif group.is_in(_S.STABLE) and unchanged and group.leader_id != member.member_id:
            self._reply(waiter, self._current_generation(member, with_members=False))
        elif group.is_in(_S.COMPLETING_REBALANCE, _S.STABLE):
            self._update_member_then_rebalance(member, req, waiter)
        else:
            self._reply(waiter, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID,
                                                  member_id=req.member_id))

    def _replace_static_member(self, req: JoinGroupRequest, waiter: Waiter, old_id: str,
                               new_id: str) -> None:
        """KIP-345: the old member id is fenced (its parked calls get FENCED_INSTANCE_ID).
        In Stable with an unchanged selected protocol there is no rebalance, and a leader
        gets the member list with ``skip_assignment`` (KIP-814); while completing, the
        leader may already hold the old id, so the group rebalances."""
        group = self._group
        assert req.group_instance_id is not None
        new, old = group.replace_static(req.group_instance_id, old_id, new_id)
        self._timers.cancel(session_timer(old_id))
        self._complete_join(old, JoinGroupResponse(Errors.FENCED_INSTANCE_ID, member_id=old_id))
        self._complete_sync(old, SyncGroupResponse(Errors.FENCED_INSTANCE_ID))
        self._arm_session(new_id, new.session_timeout_ms)
        self._update(new, req, waiter)
        if group.is_in(_S.STABLE):
            if group.protocol_name == group.select_protocol():
                is_leader = group.leader_id == new_id
                self._complete_join(new, self._current_generation(
                    new, with_members=True, skip_assignment=is_leader))
            else:
                self._maybe_prepare_rebalance_or_complete_join()
        elif group.is_in(_S.COMPLETING_REBALANCE):
            self._prepare_rebalance()
        else:
            self._maybe_complete_join_phase()

    # -- SyncGroup -----------------------------------------------------------------------

    def _sync(self, req: SyncGroupRequest, waiter: Waiter) -> None:
        """Member check, then generation (ILLEGAL_GENERATION), then protocol name. Parked
        while completing until the leader's assignment arrives; members the leader left
        out get empty bytes."""
        group = self._group
        error = self._validate_sync(req)
        if error is not None:
            self._reply(waiter, SyncGroupResponse(error))
        elif group.is_in(_S.EMPTY):
            self._reply(waiter, SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
        elif group.is_in(_S.PREPARING_REBALANCE):
            self._reply(waiter, SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
        elif group.is_in(_S.COMPLETING_REBALANCE):
            member = group.member(req.member_id)
            self._complete_sync(member, SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
            member.sync_waiter = waiter
            self._remove_pending_sync(req.member_id)
            if group.leader_id == req.member_id:
                self._store_assignment(dict(req.assignments))
        else:
            self._remove_pending_sync(req.member_id)
            member = group.member(req.member_id)
            self._reply(waiter, SyncGroupResponse(Errors.NONE, member.assignment or b"",
                                                  group.protocol_name))

    def _validate_sync(self, req: SyncGroupRequest) -> Errors | None:
        group = self._group
        if group.is_in(_S.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(req.member_id, req.group_instance_id)
        if error is not None:
            return error
        if req.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        name = req.protocol_name
        if name is not None and group.protocol_name is not None and name != group.protocol_name:
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    # -- Heartbeat and LeaveGroup ----------------------------------------------------------

    def _heartbeat(self, req: HeartbeatRequest, waiter: Waiter) -> None:
        """Member check, then generation; Preparing → REBALANCE_IN_PROGRESS; each accepted
        heartbeat re-arms the session timeout."""
        group = self._group
        if group.is_in(_S.DEAD):
            error: Errors | None = Errors.COORDINATOR_NOT_AVAILABLE
        else:
            error = group.validate_member(req.member_id, req.group_instance_id)
        if error is None and req.generation_id != group.generation_id:
            error = Errors.ILLEGAL_GENERATION
        if error is None and group.is_in(_S.EMPTY):
            error = Errors.UNKNOWN_MEMBER_ID
        if error is None:
            member = group.member(req.member_id)
            self._arm_session(member.member_id, member.session_timeout_ms)
            in_rebalance = group.is_in(_S.PREPARING_REBALANCE)
            error = Errors.REBALANCE_IN_PROGRESS if in_rebalance else Errors.NONE
        self._reply(waiter, HeartbeatResponse(error))

    def _leave(self, req: LeaveGroupRequest, waiter: Waiter) -> None:
        """By member id, or by instance id with member id "" (admin removal, KIP-345)."""
        group = self._group
        if group.is_in(_S.DEAD):
            self._reply(waiter, LeaveGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE))
            return
        results = tuple((member_id, instance_id, self._leave_one(member_id, instance_id))
                        for member_id, instance_id in req.members)
        self._reply(waiter, LeaveGroupResponse(Errors.NONE, results))
        if any(error is Errors.NONE for _, _, error in results):
            if group.is_in(_S.STABLE, _S.COMPLETING_REBALANCE):
                self._maybe_prepare_rebalance_or_complete_join()
            elif group.is_in(_S.PREPARING_REBALANCE):
                self._maybe_complete_join_phase()

    def _leave_one(self, member_id: str, instance_id: str | None) -> Errors:
        group = self._group
        if member_id == UNKNOWN_MEMBER_ID:
            known = group.static_members.get(instance_id) if instance_id is not None else None
            if known is None:
                return Errors.UNKNOWN_MEMBER_ID
            self._drop(known)
            return Errors.NONE
        if member_id in group.pending_join:
            self._drop(member_id)
            return Errors.NONE
        error = group.validate_member(member_id, instance_id)
        if error is None:
            self._drop(member_id)
        return error or Errors.NONE
