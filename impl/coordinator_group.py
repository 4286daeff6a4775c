"""The data of one classic group (Kafka's ``ClassicGroup`` and ``ClassicGroupMember``).

What lives here: the members and their parked requests, pending members (KIP-394), static
members (KIP-345), the leader, the generation and the protocol vote. No request handling,
no timers, no responses: `coordinator` drives this data; it only keeps it consistent.

Iteration order matters and follows Java: ``ClassicGroup.members`` is a ``HashMap``, so the
leader's member list, the order join and sync responses go out, the leader fallback when
the leader leaves ("first key") or does not rejoin ("first rejoined member") and the vote
tie-break all follow Java ``HashMap`` order (`javahash`). The map's table only grows, so its
capacity is that of the largest size the group ever had.
"""

from __future__ import annotations

from dataclasses import dataclass

from .coordinator_state import GroupEvent, GroupState, next_state
from .group_messages import Errors, JoinGroupMember
from .javahash import capacity_for, string_map_order

__all__ = ["ClassicGroup", "Member", "MemberSnapshot", "Protocols", "Waiter"]

Waiter = tuple[str, int]
"""A parked request: (client, request id) of the envelope that carried it."""

Protocols = tuple[tuple[str, bytes], ...]


@dataclass
class Member:
    """One member as the coordinator sees it; ``assignment`` is None until a leader's sync."""

    member_id: str
    instance_id: str | None
    client_id: str
    protocol_type: str
    protocols: Protocols
    session_timeout_ms: int
    rebalance_timeout_ms: int
    assignment: bytes | None = None
    is_new: bool = False
    join_waiter: Waiter | None = None
    sync_waiter: Waiter | None = None

    @property
    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def vote(self, candidates: set[str]) -> str:
        """The member's first-listed protocol that every member supports."""
        for name in self.protocol_names:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def matches(self, protocols: Protocols) -> bool:
        """Same protocols, same metadata, same order (Kafka: ``ClassicGroupMember.matches``)."""
        return self.protocols == tuple(protocols)


@dataclass(frozen=True)
class MemberSnapshot:
    """A read-only snapshot of a member for the harness."""

    member_id: str
    instance_id: str | None
    protocols: Protocols
    metadata: bytes | None
    assignment: bytes | None
    awaiting_join: bool
    awaiting_sync: bool


class ClassicGroup:
    """Members, leader, generation and protocol of one group; state changes via the table."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.state = GroupState.EMPTY
        self.previous_state = GroupState.DEAD
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.new_member_added = False
        self.pending_join: set[str] = set()
        self.pending_sync: set[str] = set()
        self.static_members: dict[str, str] = {}
        self._members: dict[str, Member] = {}
        self._largest_size = 0

    # -- state -------------------------------------------------------------------------

    def transition(self, event: GroupEvent) -> None:
        new = next_state(self.group_id, self.state, event)
        self.previous_state, self.state = self.state, new

    def is_in(self, *states: GroupState) -> bool:
        return self.state in states

    # -- members -----------------------------------------------------------------------

    def __contains__(self, member_id: object) -> bool:
        return member_id in self._members

    def __len__(self) -> int:
        return len(self._members)

    def member(self, member_id: str) -> Member:
        return self._members[member_id]

    def member_ids(self) -> list[str]:
        """Member ids in Java ``HashMap`` iteration order."""
        return string_map_order(self._members, capacity_for(self._largest_size))

    def members(self) -> list[Member]:
        return [self._members[m] for m in self.member_ids()]

    def add(self, member: Member, waiter: Waiter | None) -> None:
        """Kafka ``ClassicGroup.add``: the first member sets the protocol type, the first
        member with no leader present becomes leader."""
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        if not self._members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self._members[member.member_id] = member
        self._largest_size = max(self._largest_size, len(self._members))
        member.join_waiter = waiter
        self.pending_join.discard(member.member_id)

    def remove(self, member_id: str) -> Member | None:
        """Kafka ``ClassicGroup.remove``: a leaving leader hands over to the first remaining
        member in HashMap order (rejoined or not)."""
        removed = self._members.pop(member_id, None)
        if removed is not None and removed.instance_id is not None:
            self.static_members.pop(removed.instance_id, None)
        if self.leader_id == member_id:
            ids = self.member_ids()
            self.leader_id = ids[0] if ids else None
        self.pending_join.discard(member_id)
        self.pending_sync.discard(member_id)
        return removed

    def replace_static(self, instance_id: str, old_id: str, new_id: str) -> tuple[Member, Member]:
        """KIP-345: the instance's member gets ``new_id``; returns (new, old). The caller
        fences the old member's parked calls. Leadership and a pending sync move along."""
        old = self._members.pop(old_id)
        new = Member(new_id, instance_id, old.client_id, old.protocol_type, old.protocols,
                     old.session_timeout_ms, old.rebalance_timeout_ms, old.assignment)
        self._members[new_id] = new
        if self.leader_id == old_id:
            self.leader_id = new_id
        if old_id in self.pending_sync:
            self.pending_sync.discard(old_id)
            self.pending_sync.add(new_id)
        self.static_members[instance_id] = new_id
        return new, old

    def update(self, member: Member, protocols: Protocols, rebalance_timeout_ms: int,
               session_timeout_ms: int, waiter: Waiter | None) -> Waiter | None:
        """Kafka ``ClassicGroup.updateMember``; returns a parked join it supersedes."""
        member.protocols = tuple(protocols)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        superseded, member.join_waiter = member.join_waiter, waiter
        return superseded

    def validate_member(self, member_id: str, instance_id: str | None) -> Errors | None:
        """Kafka ``ClassicGroup.validateMember``: a static member is checked through its
        instance id (FENCED_INSTANCE_ID if it maps to another member id, KIP-345)."""
        if instance_id is not None:
            known = self.static_members.get(instance_id)
            if known is None:
                return Errors.UNKNOWN_MEMBER_ID
            return None if known == member_id else Errors.FENCED_INSTANCE_ID
        return None if member_id in self._members else Errors.UNKNOWN_MEMBER_ID

    # -- join phase ----------------------------------------------------------------------

    def awaiting_join_count(self) -> int:
        return sum(1 for m in self._members.values() if m.join_waiter is not None)

    def has_all_members_joined(self) -> bool:
        """Every member has a parked join and no MEMBER_ID_REQUIRED id is outstanding
        (KIP-394)."""
        return self.awaiting_join_count() == len(self._members) and not self.pending_join

    def not_yet_rejoined(self) -> list[Member]:
        return [m for m in self.members() if m.join_waiter is None]

    def elect_joined_leader(self) -> bool:
        """Kafka ``maybeElectNewJoinedLeader``: keep a rejoined leader, else take the first
        rejoined member in HashMap order; False when nobody rejoined."""
        if self.leader_id is None:
            return False
        if self._members[self.leader_id].join_waiter is not None:
            return True
        for member in self.members():
            if member.join_waiter is not None:
                self.leader_id = member.member_id
                return True
        return False

    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the largest of its members'."""
        return max((m.rebalance_timeout_ms for m in self._members.values()), default=0)

    def supports_protocols(self, protocol_type: str, protocols: Protocols) -> bool:
        """Kafka ``supportsProtocols``: an empty group takes any non-empty offer; otherwise
        the type must match and one offered protocol must be supported by every member."""
        if self.state is GroupState.EMPTY:
            return bool(protocol_type) and bool(protocols)
        if protocol_type != self.protocol_type:
            return False
        if not self._members:  # Java counts supporters: 0 == numMembers() holds for any name
            return bool(protocols)
        names = self.candidate_protocols()
        return any(n in names for n, _ in protocols)

    def candidate_protocols(self) -> set[str]:
        members = list(self._members.values())
        if not members:
            return set()
        common = set(members[0].protocol_names)
        for member in members[1:]:
            common &= set(member.protocol_names)
        return common

    def select_protocol(self) -> str:
        """Each member votes for its first-listed candidate; most votes wins.

        Ties (inferred from ``stream().max()`` over a ``HashMap<String, Integer>``): the first
        protocol in that map's iteration order wins, the map being filled in the order the
        votes arrive, i.e. members in HashMap order.
        """
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        return next(p for p in string_map_order(votes) if votes[p] == best)

    def init_next_generation(self) -> None:
        """Generation += 1 always, even when the group ends up empty."""
        self.generation_id += 1
        if self._members:
            self.protocol_name = self.select_protocol()
            self.transition(GroupEvent.JOIN_COMPLETE)
        else:
            self.protocol_name = None
            self.transition(GroupEvent.JOIN_COMPLETE_EMPTY)
        self.pending_sync.clear()

    def member_list(self) -> tuple[JoinGroupMember, ...]:
        """What the leader receives: every member with its metadata for the selected
        protocol, in HashMap order."""
        assert self.protocol_name is not None
        name = self.protocol_name
        return tuple(JoinGroupMember(m.member_id, m.instance_id, m.metadata(name))
                     for m in self.members())

    # -- introspection ---------------------------------------------------------------------

    def view(self, member: Member) -> MemberSnapshot:
        name = self.protocol_name
        metadata = None
        if name is not None and name in member.protocol_names:
            metadata = member.metadata(name)
        return MemberSnapshot(member.member_id, member.instance_id, member.protocols, metadata,
                          member.assignment, member.join_waiter is not None,
                          member.sync_waiter is not None)
