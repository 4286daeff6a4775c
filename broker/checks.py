"""Invariants judged on the broker's side, on the bytes as sent, before any member acts.

What lives here: `GroupChecks`, called by the server before the coordinator sees a
JoinGroup or SyncGroup, and `Verdict`, one judgement. The predicates are `properties/`'s;
the bytes are read with `impl/`'s ConsumerProtocol codec.

Theory of operation
-------------------
* I10 on every consumer JoinGroup: each protocol's subscription must be readable, and read
  with its header rewritten to every reader version 0..3 it must give what I10 allows for
  that (writer, reader) pair (`properties.codec.codec_violations`; a read past the writer's
  layout must fail). Bytes the writer put after its layout are carried into the expected
  remainder, so a newer writer is not blamed for fields an older reader skips.
* On the leader's SyncGroup (the member the coordinator elected, at the current generation,
  while completing the rebalance): the assignment bytes must be readable (I10), no
  partition may go to two members (I1), every assigned partition must exist and go to a
  subscriber of its topic, and every partition of a subscribed topic must be assigned (I2)
  — except, for the cooperative protocol, partitions some member claims in this round:
  KIP-429 withholds those while their owner revokes them. A leader assigns from the
  metadata it was told, so completeness is judged only for topics whose partition count the
  leader's client was last told is the current one, and a topic the assignment leaves out
  whole is excused once (Kafka's assignors skip a topic they have no metadata for, and an
  answer on another connection may not have reached the assignor yet; the leader rejoins
  when it applies it): the group's next assignment that leaves it out whole again is I2.
  A partition counts as existing when it exists now or the leader was told of it (a topic
  grown or deleted under the leader's feet is not its fault; it rejoins when it notices).
  I6 (a claim loses only to a strictly higher generation) is judged on the members' claims
  as they sent them (`properties.generations`).

The rebalance protocol is read from the selected assignor: ``cooperative-sticky`` is
COOPERATIVE, every other name EAGER (a broker sees no more than that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..impl.consumer_protocol import decode_assignment, decode_subscription
from ..impl.coordinator import GroupCoordinator
from ..impl.coordinator_state import GroupState
from ..impl.errors import CodecError
from ..impl.group_messages import JoinGroupRequest, SyncGroupRequest
from ..properties import assignment as A
from ..properties.codec import Message, SubscriptionInput, codec_violations
from ..properties.generations import claim_hygiene
from .messages import MetadataData
from .store import Topics

__all__ = ["GroupChecks", "Verdict", "is_leader_sync"]

_READER_VERSIONS = (0, 1, 2, 3)
_COOPERATIVE_NAMES = frozenset({"cooperative-sticky"})


@dataclass(frozen=True)
class Verdict:
    """One judgement: ``holds`` with no ``messages``, or the violations found."""

    group: str
    generation: int
    invariant: str
    subject: str
    at_ms: int
    messages: tuple[str, ...]

    @property
    def holds(self) -> bool:
        return not self.messages


def _message(data: Any, remaining_before: int = 0) -> Message:
    return {"topics": list(data.topics), "userData": data.user_data,
            "ownedPartitions": [(t, list(ps)) for t, ps in data.owned_partitions],
            "generationId": data.generation_id, "rackId": data.rack_id,
            "version": data.version, "remaining": data.remaining - remaining_before}


def _subscription_violations(metadata: bytes) -> list[str]:
    """I10 for one subscription as sent (empty when it holds)."""
    try:
        sent = decode_subscription(metadata)
    except CodecError as e:
        return [f"I10: the subscription cannot be read: {e}"]
    x: SubscriptionInput = {"topics": sent.topics, "userData": sent.user_data,
                            "owned": [(t, p) for t, ps in sent.owned_partitions for p in ps],
                            "generation": sent.generation_id, "rack": sent.rack_id}
    out: list[str] = []
    for reader in _READER_VERSIONS:
        rewritten = reader.to_bytes(2, "big") + metadata[2:]
        try:
            decoded: Message | None = _message(decode_subscription(rewritten), sent.remaining)
        except CodecError:
            decoded = None
        out += codec_violations(x, max(sent.version, 0), reader, decoded)
    return out


def is_leader_sync(coordinator: GroupCoordinator, request: SyncGroupRequest) -> bool:
    """The SyncGroup that carries the generation's assignment: from the elected leader, at
    the current generation, while the coordinator waits for it."""
    return (coordinator.state is GroupState.COMPLETING_REBALANCE
            and request.member_id == coordinator.leader_id
            and request.generation_id == coordinator.generation_id
            and coordinator.protocol_type == "consumer")


class GroupChecks:
    """Verdicts of every group, in the order they were reached."""

    def __init__(self, topics: Topics, limit: int = 100_000) -> None:
        self._topics = topics
        self._limit = limit
        self.verdicts: list[Verdict] = []
        self._seen: dict[str, dict[str, int]] = {}
        #: per group, the subscribed topics its last assignment left out whole
        self._left_out: dict[str, set[str]] = {}

    def _add(self, verdict: Verdict) -> None:
        if len(self.verdicts) < self._limit:
            self.verdicts.append(verdict)

    def before(self, group: str, coordinator: GroupCoordinator, request: Any,
               leader_client: str, now_ms: int) -> None:
        """Judge a JoinGroup's subscriptions, or the leader's SyncGroup (``leader_client``:
        the client id the leader's requests carry)."""
        if isinstance(request, JoinGroupRequest) and request.protocol_type == "consumer":
            who = request.member_id or request.client_id
            for name, metadata in request.protocols:
                self._add(Verdict(group, coordinator.generation_id, "I10",
                                  f"{who} {name} subscription", now_ms,
                                  tuple(_subscription_violations(metadata))))
        elif isinstance(request, SyncGroupRequest) and is_leader_sync(coordinator, request):
            self._judge_assignment(group, coordinator, request, leader_client, now_ms)

    def _judge_assignment(self, group: str, coordinator: GroupCoordinator,
                          request: SyncGroupRequest, leader_client: str, now_ms: int) -> None:
        generation = coordinator.generation_id
        subs: dict[str, list[str]] = {}
        claims: dict[str, tuple[list[tuple[str, int]], int | None]] = {}
        for member_id, view in coordinator.members.items():
            try:
                sub = decode_subscription(view.metadata or b"").to_api()
            except CodecError:
                continue  # reported by I10 at its JoinGroup
            subs[member_id] = list(sub.topics)
            claims[member_id] = (list(sub.owned_partitions), sub.generation_id)
        assignment: dict[str, list[tuple[str, int]]] = {}
        unreadable: list[str] = []
        for member_id, data in request.assignments:
            try:
                assignment[member_id] = list(decode_assignment(data).to_api().partitions)
            except CodecError as e:
                unreadable.append(f"I10: the assignment for {member_id} cannot be read: {e}")
        cooperative = coordinator.protocol_name in _COOPERATIVE_NAMES
        protocol = "COOPERATIVE" if cooperative else "EAGER"
        subject = f"assignment by {request.member_id}"
        self._add(Verdict(group, generation, "I10", subject, now_ms, tuple(unreadable)))
        self._add(Verdict(group, generation, "I1", subject, now_ms,
                          tuple(A.exclusive_ownership(assignment))))
        self._add(Verdict(group, generation, "I2", subject, now_ms,
                          tuple(self._i2(group, leader_client, assignment, subs, claims,
                                         cooperative))))
        self._add(Verdict(group, generation, "I6", subject, now_ms,
                          tuple(claim_hygiene(claims, assignment, protocol))))

    def saw_metadata(self, client_id: str, data: MetadataData) -> None:
        """Remember the partition counts a client was told (a leader assigns from these)."""
        seen = self._seen.setdefault(client_id, {})
        for topic in data["topics"]:
            if topic["error_code"] == 0:
                seen[topic["name"]] = len(topic["partitions"])

    def _i2(self, group: str, leader_client: str, assignment: dict[str, list[tuple[str, int]]],
            subs: dict[str, list[str]],
            claims: dict[str, tuple[list[tuple[str, int]], int | None]],
            cooperative: bool) -> list[str]:
        now = self._topics.partition_counts()
        told = self._seen.get(leader_client, {})
        known = {**told, **{t: max(n, told.get(t, 0)) for t, n in now.items()}}
        out = A.valid_targets(assignment, subs, known) + A.exclusive_ownership(assignment)
        given = {tp for parts in assignment.values() for tp in parts}
        withheld = {tp for owned, _ in claims.values() for tp in owned} if cooperative else set()
        steady = {t: n for t, n in now.items() if told.get(t) == n}
        subscribed = {t for ts in subs.values() for t in ts if t in steady}
        left_out = subscribed - {t for t, _ in given | withheld}
        excused = left_out - self._left_out.get(group, set())  # no metadata yet, once
        self._left_out[group] = left_out
        for topic in sorted(subscribed - excused):
            missing = [p for p in range(steady[topic])
                       if (topic, p) not in given and (topic, p) not in withheld]
            if missing:
                out.append(f"I2: {topic} partitions {missing} are assigned to nobody")
        return out
