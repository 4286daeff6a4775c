"""The rebalance engine under `coordinator`: outbox, timers, and the join and sync phases.

What lives here: everything a rebalance does once a request handler (in `coordinator`) has
decided what the request means — add or update a member, prepare a rebalance, complete the
join phase, store and propagate the leader's assignment — and the timer actions that drive
the same steps without a request (initial-rebalance delay, join-phase timeout, sync
timeout, session expiry). Responses are appended to an outbox that `coordinator` drains.

Theory of operation: Kafka 4.0's ``GroupMetadataManager`` (classic groups) step for step;
``prepare_rebalance`` → (delay / all rejoined / timeout) → ``complete_join_phase`` →
(leader's sync) → ``store_assignment``. Kafka leaves some parked requests unanswered for
ever (their member was removed, or the same member parked a newer one); we answer them,
so a sans-I/O driver never waits on a request that cannot complete: a removed member's
parked call gets UNKNOWN_MEMBER_ID, a superseded one REBALANCE_IN_PROGRESS (a real client
hits its request timeout and retries, with the same outcome).
"""

from __future__ import annotations

from .coordinator_group import ClassicGroup, Member, Waiter
from .coordinator_state import GroupEvent, GroupState, TimerQueue, allows
from .group_messages import (
    Envelope,
    Errors,
    JoinGroupRequest,
    JoinGroupResponse,
    Response,
    SyncGroupResponse,
)

__all__ = ["RebalanceCore", "session_timer"]

_S = GroupState
_JOIN_TIMER = ("join",)
_SYNC_TIMER = ("sync",)


def session_timer(member_id: str) -> tuple[str, str]:
    return ("session", member_id)


class RebalanceCore:
    """The group, its timers and the outbox; the steps every handler and timer shares."""

    def __init__(self, group_id: str, *, initial_rebalance_delay_ms: int,
                 new_member_join_timeout_ms: int) -> None:
        self.initial_rebalance_delay_ms = initial_rebalance_delay_ms
        self.new_member_join_timeout_ms = new_member_join_timeout_ms
        self._group = ClassicGroup(group_id)
        self._timers = TimerQueue()
        self._now = 0
        self._out: list[Envelope] = []

    # -- plumbing ------------------------------------------------------------------------

    def _fire_timers(self, now_ms: int) -> None:
        if now_ms < self._now:
            raise ValueError(f"clock went backwards: {now_ms} < {self._now}")
        while (due := self._timers.pop_due(now_ms)) is not None:
            self._now = due.deadline
            due.action()
        self._now = now_ms

    def _drain(self) -> list[Envelope]:
        out, self._out = self._out, []
        return out

    def _reply(self, waiter: Waiter, response: Response) -> None:
        self._out.append(Envelope(waiter[0], waiter[1], response))

    def _complete_join(self, member: Member, response: JoinGroupResponse) -> None:
        if member.join_waiter is not None:
            waiter, member.join_waiter = member.join_waiter, None
            self._reply(waiter, response)

    def _complete_sync(self, member: Member, response: SyncGroupResponse) -> bool:
        if member.sync_waiter is None:
            return False
        waiter, member.sync_waiter = member.sync_waiter, None
        self._reply(waiter, response)
        return True

    def _arm_session(self, member_id: str, timeout_ms: int) -> None:
        self._timers.schedule(session_timer(member_id), self._now + timeout_ms,
                              lambda: self._session_expired(member_id))

    def _drop(self, member_id: str) -> None:
        """Remove a member (or pending id), cancel its session, answer its orphaned calls."""
        removed = self._group.remove(member_id)
        self._timers.cancel(session_timer(member_id))
        if removed is not None:
            self._complete_join(removed, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            self._complete_sync(removed, SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))

    # -- members ---------------------------------------------------------------------------

    def _current_generation(self, member: Member, *, with_members: bool,
                            skip_assignment: bool = False) -> JoinGroupResponse:
        group = self._group
        is_leader = group.leader_id == member.member_id
        return JoinGroupResponse(
            Errors.NONE, group.generation_id, group.protocol_name, group.leader_id or "",
            member.member_id, group.member_list() if with_members and is_leader else (),
            skip_assignment)

    def _add_member_then_rebalance(self, req: JoinGroupRequest, waiter: Waiter,
                                   member_id: str) -> None:
        """A new member's join times out after ``new_member_join_timeout_ms`` (5 min), as it
        cannot heartbeat; a join during the initial rebalance extends the delay."""
        group = self._group
        member = Member(member_id, req.group_instance_id, req.client_id, req.protocol_type,
                        tuple(req.protocols), req.session_timeout_ms,
                        req.rebalance_timeout_ms, is_new=True)
        if group.is_in(_S.PREPARING_REBALANCE) and group.previous_state is _S.EMPTY:
            group.new_member_added = True
        group.add(member, waiter)
        self._arm_session(member_id, self.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance_or_complete_join()

    def _update_member_then_rebalance(self, member: Member, req: JoinGroupRequest,
                                      waiter: Waiter) -> None:
        self._update(member, req, waiter)
        self._maybe_prepare_rebalance_or_complete_join()

    def _update(self, member: Member, req: JoinGroupRequest, waiter: Waiter) -> None:
        """Take the request's protocols and timeouts; park the join on the member."""
        superseded = self._group.update(member, req.protocols, req.rebalance_timeout_ms,
                                        req.session_timeout_ms, waiter)
        if superseded is not None:
            self._reply(superseded, JoinGroupResponse(Errors.REBALANCE_IN_PROGRESS,
                                                      member_id=member.member_id))

    # -- rebalance -----------------------------------------------------------------------

    def _maybe_prepare_rebalance_or_complete_join(self) -> None:
        if allows(self._group.state, GroupEvent.PREPARE_REBALANCE):
            self._prepare_rebalance()
        else:
            self._maybe_complete_join_phase()

    def _prepare_rebalance(self) -> None:
        """Parked syncs get REBALANCE_IN_PROGRESS. Out of Empty the join phase waits the
        initial delay (extended by new joins, capped by the rebalance timeout); otherwise it
        ends when all members rejoined or at the group's rebalance timeout."""
        group = self._group
        if group.is_in(_S.COMPLETING_REBALANCE):
            self._reset_and_propagate(Errors.REBALANCE_IN_PROGRESS)
        group.pending_sync.clear()
        self._timers.cancel(_SYNC_TIMER)
        initial = group.is_in(_S.EMPTY)
        group.transition(GroupEvent.PREPARE_REBALANCE)
        if initial:
            delay = self.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule_initial_delay(delay, remaining)
        elif group.has_all_members_joined():
            self._complete_join_phase()
        else:
            self._schedule_join_timeout()

    def _schedule_initial_delay(self, delay: int, remaining: int) -> None:
        self._timers.schedule(_JOIN_TIMER, self._now + delay,
                              lambda: self._initial_delay_expired(delay, remaining))

    def _schedule_join_timeout(self) -> None:
        self._timers.schedule(_JOIN_TIMER, self._now + self._group.rebalance_timeout_ms(),
                              self._complete_join_phase)

    def _initial_delay_expired(self, delay: int, remaining: int) -> None:
        """``group.initial.rebalance.delay.ms``: wait again while members keep arriving."""
        group = self._group
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            new_delay = min(self.initial_rebalance_delay_ms, remaining)
            self._schedule_initial_delay(new_delay, max(remaining - delay, 0))
        else:
            self._complete_join_phase()

    def _maybe_complete_join_phase(self) -> None:
        """Never during the initial rebalance: only its delay timer ends that one."""
        group = self._group
        if (group.is_in(_S.PREPARING_REBALANCE) and group.has_all_members_joined()
                and group.previous_state is not _S.EMPTY):
            self._complete_join_phase()

    def _complete_join_phase(self) -> None:
        """Drop dynamic members that did not rejoin (static ones stay), elect a rejoined
        leader, bump the generation, answer every join; only the leader gets the members.
        If nobody rejoined yet someone is left (static), wait another rebalance timeout."""
        group = self._group
        self._timers.cancel(_JOIN_TIMER)
        for member in group.not_yet_rejoined():
            if member.instance_id is None:
                self._drop(member.member_id)
        if group.is_in(_S.DEAD):
            return
        if not group.elect_joined_leader() and len(group) > 0:
            self._schedule_join_timeout()
            return
        group.init_next_generation()
        if group.is_in(_S.EMPTY):
            return
        for member in group.members():
            self._complete_join(member, self._current_generation(member, with_members=True))
            self._arm_session(member.member_id, member.session_timeout_ms)
            member.is_new = False
            group.pending_sync.add(member.member_id)
        generation = group.generation_id
        self._timers.schedule(_SYNC_TIMER, self._now + group.rebalance_timeout_ms(),
                              lambda: self._sync_expired(generation))

    def _sync_expired(self, generation: int) -> None:
        """Members that did not sync within the rebalance timeout are removed."""
        group = self._group
        if generation != group.generation_id or not group.pending_sync:
            return
        if group.is_in(_S.COMPLETING_REBALANCE, _S.STABLE):
            for member_id in sorted(group.pending_sync):
                self._drop(member_id)
            self._prepare_rebalance()

    def _session_expired(self, member_id: str) -> None:
        """An expired member is removed and the group rebalances; members parked in join or
        sync are exempt, except new ones (their 5-minute join timeout)."""
        group = self._group
        if group.is_in(_S.DEAD):
            return
        if member_id in group.pending_join:
            self._drop(member_id)
            if group.is_in(_S.PREPARING_REBALANCE) and group.has_all_members_joined():
                self._complete_join_phase()
            return
        if member_id not in group:
            return
        member = group.member(member_id)
        parked = member.join_waiter is not None or member.sync_waiter is not None
        if member.is_new or not parked:
            self._remove_member_and_update_group(member_id)

    def _remove_member_and_update_group(self, member_id: str) -> None:
        group = self._group
        self._drop(member_id)
        if group.is_in(_S.STABLE, _S.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join()
        elif group.is_in(_S.PREPARING_REBALANCE) and group.has_all_members_joined():
            self._complete_join_phase()

    # -- sync phase ----------------------------------------------------------------------

    def _remove_pending_sync(self, member_id: str) -> None:
        group = self._group
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            self._timers.cancel(_SYNC_TIMER)

    def _store_assignment(self, assignment: dict[str, bytes]) -> None:
        group = self._group
        for member in group.members():
            member.assignment = assignment.get(member.member_id, b"")
        self._propagate(Errors.NONE)
        group.transition(GroupEvent.LEADER_SYNCED)

    def _reset_and_propagate(self, error: Errors) -> None:
        for member in self._group.members():
            member.assignment = None
        self._propagate(error)

    def _propagate(self, error: Errors) -> None:
        """Answer every parked sync; each answered member's session timer is re-armed."""
        name = self._group.protocol_name if error is Errors.NONE else None
        for member in self._group.members():
            response = SyncGroupResponse(error, member.assignment or b"", name)
            if self._complete_sync(member, response):
                self._arm_session(member.member_id, member.session_timeout_ms)
