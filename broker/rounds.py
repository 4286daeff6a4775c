"""Each group's generations as the coordinator ran them: what a harness's wire layer reads.

What lives here: `Round` (one generation: leader, protocol, every member's subscription bytes
and client id, the assignment bytes the leader sent, who got a SyncGroup answer) and
`RoundLedger`, which the server feeds from the coordinator's answers.

Theory of operation: a generation's round opens with the first successful JoinGroup answer
of that generation (the coordinator's member list then holds every member's subscription
for the selected protocol); the leader's SyncGroup adds the assignment and the monotonic
time it reached the coordinator; each successful SyncGroup answer marks its member synced
(and withheld, when steering closed the connection instead of sending it; with how long its
member waited for it, when steering held it back).
A round is complete when every member of the generation got its answer. A static member
that rejoins within its generation (KIP-345: a restart, or a second consumer with its instance
id) takes the old member id's place in the round: its subscription, assignment and client id,
and the leadership. This is the shape of the wire layer's cluster backend: a backend built on
the broker reads it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..impl.coordinator import GroupCoordinator
from ..impl.group_messages import SyncGroupRequest

__all__ = ["Round", "RoundLedger"]


@dataclass
class Round:
    generation: int
    protocol: str
    leader: str
    subscriptions: dict[str, bytes]
    client_ids: dict[str, str]
    assignments: dict[str, bytes] = field(default_factory=dict)
    leader_sync_ns: int = 0
    synced: set[str] = field(default_factory=set)
    instances: dict[str, str] = field(default_factory=dict)  # static members' instance ids
    #: synced members whose answer steering kept from them (the connection closed instead,
    #: or an answer held back: until it went out, and for good if the client had hung up)
    withheld: set[str] = field(default_factory=set)
    #: synced members whose answer steering held back: how long each waited for it (ms)
    waited_ms: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return set(self.subscriptions) <= self.synced


class RoundLedger:
    """Rounds per group, bounded to the last ``limit`` generations of each."""

    def __init__(self, limit: int = 1000) -> None:
        self._rounds: dict[str, dict[int, Round]] = {}
        self._limit = limit
        self.joins_in_flight: dict[str, int] = {}

    def joined(self, group: str, coordinator: GroupCoordinator,
               client_ids: dict[tuple[str, str], str]) -> None:
        """A successful JoinGroup answer of the coordinator's current generation."""
        rounds = self._rounds.setdefault(group, {})
        generation = coordinator.generation_id
        members = coordinator.members
        if generation in rounds:
            _replace_static(rounds[generation], coordinator, client_ids, group)
            return
        rounds[generation] = Round(
            generation, coordinator.protocol_name or "", coordinator.leader_id or "",
            {m: v.metadata or b"" for m, v in members.items()},
            {m: client_ids.get((group, m), "") for m in members},
            instances={m: v.instance_id for m, v in members.items() if v.instance_id})
        while len(rounds) > self._limit:
            del rounds[min(rounds)]

    def leader_synced(self, group: str, request: SyncGroupRequest) -> None:
        round_ = self._rounds.get(group, {}).get(request.generation_id)
        if round_ is not None and request.member_id == round_.leader:
            round_.assignments = dict(request.assignments)
            round_.leader_sync_ns = time.monotonic_ns()

    def synced(self, group: str, generation: int, member_id: str) -> None:
        round_ = self._rounds.get(group, {}).get(generation)
        if round_ is not None:
            round_.synced.add(member_id)

    def withheld(self, group: str, generation: int, member_id: str) -> None:
        """The member's SyncGroup answer of ``generation`` never reached it."""
        round_ = self._rounds.get(group, {}).get(generation)
        if round_ is not None:
            round_.withheld.add(member_id)

    def held(self, group: str, generation: int, member_id: str, waited_ms: int,
             read: bool) -> None:
        """The member's SyncGroup answer of ``generation``, withheld while steering held it
        back, went out ``waited_ms`` after its request came in: a client whose request timed
        out first never read it; one that had closed its connection (``read`` False) never
        got it."""
        round_ = self._rounds.get(group, {}).get(generation)
        if round_ is not None:
            round_.waited_ms[member_id] = waited_ms
            if read:
                round_.withheld.discard(member_id)

    def rounds(self, group: str) -> list[Round]:
        return [self._copy(r) for _, r in sorted(self._rounds.get(group, {}).items())]

    @staticmethod
    def _copy(r: Round) -> Round:
        return Round(r.generation, r.protocol, r.leader, dict(r.subscriptions),
                     dict(r.client_ids), dict(r.assignments), r.leader_sync_ns, set(r.synced),
                     dict(r.instances), set(r.withheld), dict(r.waited_ms))


def _replace_static(round_: Round, coordinator: GroupCoordinator,
                    client_ids: dict[tuple[str, str], str], group: str) -> None:
    """A static member that rejoined within the generation under a new member id takes
    its old id's place in the round (KIP-345); the new id syncs anew."""
    members = coordinator.members
    for old, instance in list(round_.instances.items()):
        new = next((m for m, v in members.items() if v.instance_id == instance), None)
        if new is None or new == old or old in members:
            continue
        del round_.instances[old]
        round_.instances[new] = instance
        round_.subscriptions.pop(old, None)
        round_.subscriptions[new] = members[new].metadata or b""
        round_.client_ids.pop(old, None)
        round_.client_ids[new] = client_ids.get((group, new), "")
        if old in round_.assignments:
            round_.assignments[new] = round_.assignments.pop(old)
        round_.synced.discard(old)
        if round_.leader == old:
            round_.leader = new
