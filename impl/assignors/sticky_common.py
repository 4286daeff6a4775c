"""Pieces shared by both sticky builders (Kafka's ``AbstractStickyAssignor``).

Vocabulary follows Kafka: ``member_data`` (a member's claimed partitions and generation),
``max_generation`` (KIP-341, kept on the assignor instance for its whole life),
``partitions_with_multiple_previous_owners`` (KAFKA-12984), ``partitions_transferring_ownership``
(KIP-429). Iteration orders of Java's ``HashMap`` are emulated with `javahash` wherever an
output depends on them.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar

from ..errors import AssignorError
from ..javahash import HashMapOrder, capacity_for, java_string_key, string_hash
from ..types import Cluster, Subscription, TopicPartition
from ..user_data import DEFAULT_GENERATION, MemberData
from .partition_pool import topic_partitions

__all__ = ["DEFAULT_GENERATION", "CollectorPause", "IllegalStateError", "Misplaced",
           "NullPointerError", "OwnedClaims", "RackInfo", "keep_to_subscribers", "member_key",
           "member_map", "member_order", "misplaced_partitions", "null_pointer", "partition_key",
           "resolve_owned_partitions", "subscribed_topics"]


class IllegalStateError(AssignorError):
    """The sticky builders' ``IllegalStateException``."""

    kafka_class: ClassVar[str] = "IllegalStateException"


class NullPointerError(AssignorError):
    """Where Kafka's sticky assignor dereferences a missing map entry."""

    kafka_class: ClassVar[str] = "NullPointerException"


def null_pointer() -> NullPointerError:
    return NullPointerError('Cannot invoke "java.util.List.size()" because the return value '
                            'of "java.util.Map.get(Object)" is null')


class CollectorPause:
    """The cyclic collector held for one ``assign`` call, its passes run in step.

    A large assignment makes a million or more acyclic tuples. Left to itself the collector
    would visit them in passes of 700 allocations and visit the member lists again in every
    middle-generation pass; switched off, it would make one pass over all of them after the
    call, with none of them in the processor's cache any more. Here it is off during the
    call, and the code that makes partitions in bulk tells `made` how many (new tuples, or
    the slots of new lists the collector will visit, when the tuples come from the shared
    `partition_pool`): after every `EVERY` of them the young and middle generations are
    collected while the batch is still cached, so what the call costs the collector is paid
    inside the call, in the call's time. When the caller had the collector off, nothing is
    collected and the collector stays off.
    """

    #: new partition tuples (or list slots) between two passes
    EVERY = 4096

    __slots__ = ("enabled", "pending")

    def __init__(self) -> None:
        self.enabled = False
        self.pending = 0

    def __enter__(self) -> CollectorPause:
        self.enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            gc.enable()

    def made(self, count: int) -> None:
        """``count`` new tuples: collect the young and middle generations once a batch is
        full (only if the caller collects)."""
        self.pending += count
        if self.pending >= self.EVERY and self.enabled:
            gc.collect(1)
            self.pending = 0

    def settle(self) -> None:
        """Collect the young and middle generations now (only if the caller collects): what
        exists moves to the old generation, which the passes of `made` do not visit. Called
        on an empty list about to take a million partitions, it keeps the passes off it."""
        if self.enabled:
            gc.collect(1)
        self.pending = 0


@lru_cache(maxsize=65536)
def member_key(member: str) -> str:
    """Java ``String.compareTo`` order for member ids and topics."""
    return java_string_key(member)


@lru_cache(maxsize=65536)
def _cached_string_hash(s: str) -> int:
    return string_hash(s)


@lru_cache(maxsize=65536)
def _spread_hash(member: str) -> int:
    """``HashMap.hash`` of a member id: its bucket is this masked by the table length."""
    h = string_hash(member) & 0xFFFFFFFF
    return h ^ (h >> 16)


def partition_key(tp: TopicPartition) -> tuple[int, str]:
    """KAFKA-16277: owned partitions are kept in (partition, topic) order."""
    return tp[1], member_key(tp[0])


def member_map(capacity: int = 16) -> HashMapOrder:
    """A live ``HashMap<String, ...>`` keyed by member id."""
    return HashMapOrder(capacity, _cached_string_hash)


def member_order(members: Iterable[str], capacity: int = 16) -> list[str]:
    """Iteration order of a ``HashMap<String, _>`` created with table length ``capacity``
    (the default map: 16) and filled with ``members`` in this order.

    All at once rather than put by put: the table only grows, a resize never reorders a
    bucket, so the order is bucket by bucket under the final table length, each bucket in
    insertion order (a stable sort).
    """
    keys = list(dict.fromkeys(members))
    mask = capacity_for(len(keys), capacity) - 1
    spread = _spread_hash
    buckets = [spread(k) & mask for k in keys]
    return [keys[i] for i in sorted(range(len(keys)), key=buckets.__getitem__)]


@dataclass
class OwnedClaims:
    """Outcome of ``allSubscriptionsEqual``: the claims each member keeps after conflicts."""

    all_equal: bool
    owned: dict[str, list[TopicPartition]]
    partitions_with_multiple_previous_owners: set[TopicPartition] = field(default_factory=set)


def subscribed_topics(subscriptions: Iterable[Subscription]) -> set[str]:
    """Every topic some member subscribes to (equal lists in a row are read once)."""
    topics: set[str] = set()
    previous: list[str] | None = None
    for subscription in subscriptions:
        mine = subscription.topics
        if mine is not previous and mine != previous:
            topics.update(mine)
            previous = mine
    return topics


def _same_topics(reference: set[str], topics: list[str]) -> bool:
    return len(topics) == len(reference) and reference.issuperset(topics)


def resolve_owned_partitions(
        partitions_per_topic: dict[str, int], members: list[str],
        subscriptions: dict[str, Subscription], member_data: dict[str, MemberData],
        max_generation: int) -> tuple[OwnedClaims, int]:
    """``allSubscriptionsEqual``: subscription equality, ``max_generation`` and conflicts.

    Claims on topics without metadata are dropped (KAFKA-7962). Conflicts (KAFKA-12984,
    KAFKA-14639) compare the claimant's member_data generation with the *subscription*
    generation of the member recorded so far: equal invalidates the partition for both,
    higher takes it, lower leaves it.

    As in Kafka, members with an empty subscription seen before the first non-empty one are
    not compared. Deviation D1 (``docs/explanation/model.md``): claims on
    partition numbers the metadata lacks are dropped, like claims on topics without metadata.
    """
    all_equal = True
    reference: set[str] = set()
    same: list[str] | None = None  # the last topic list found equal to the reference
    owned: dict[str, list[TopicPartition]] = {}
    multiple: set[TopicPartition] = set()
    # per topic, the member recorded as each partition's claimant (arrays, not a tuple map),
    # made on the topic's first claim
    owner_of: dict[str, list[str | None]] = {}
    for member in members:
        subscription = subscriptions[member]
        topics = subscription.topics
        if not reference:
            reference.update(topics)
        elif all_equal and topics is not same and topics != same:
            if _same_topics(reference, topics):
                same = topics
            else:
                all_equal = False
        data = member_data[member]
        generation = DEFAULT_GENERATION if data.generation is None else data.generation
        max_generation = max(max_generation, generation)
        mine: list[TopicPartition] = []
        owned[member] = mine
        for tp in data.partitions:
            slots = owner_of.get(tp[0])
            if slots is None:
                count = partitions_per_topic.get(tp[0])
                if count is None:
                    continue
                slots = owner_of[tp[0]] = [None] * count
            p = tp[1]
            if not 0 <= p < len(slots):
                continue
            other = slots[p]
            if other is None:
                mine.append(tp)
                slots[p] = member
                continue
            other_generation = subscriptions[other].generation_id
            if other_generation is None:
                other_generation = DEFAULT_GENERATION
            if generation == other_generation:
                multiple.add(tp)
                _remove_first(owned[other], tp)
                slots[p] = member
            elif generation > other_generation:
                mine.append(tp)
                _remove_first(owned[other], tp)
                slots[p] = member
    return OwnedClaims(all_equal, owned, multiple), max_generation


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    """Java ``List.remove(Object)``: the first occurrence, if any."""
    try:
        items.remove(tp)
    except ValueError:
        pass


class RackInfo:
    """Consumer and replica racks (KIP-881); rack-aware only when they can matter.

    ``consumer_racks``/``partition_racks`` are empty unless rack-aware assignment is used;
    ``num_consumers_by_partition`` is filled whenever some consumer has a rack (as in Kafka,
    it then orders the constrained builder's unassigned partitions even if not rack-aware).
    """

    def __init__(self, cluster: Cluster, partitions_per_topic: dict[str, int],
                 members: list[str], subscriptions: dict[str, Subscription]) -> None:
        consumers_by_rack: dict[str, list[str]] = {}
        for member in members:
            rack = subscriptions[member].rack_id
            if rack:
                consumers_by_rack.setdefault(rack, []).append(member)
        racks_of: dict[TopicPartition, set[str]] = {}
        all_racks: set[str] = set()
        if consumers_by_rack:
            for topic, count in partitions_per_topic.items():
                for tp in topic_partitions(topic, count):
                    racks = {r for r in cluster.replica_racks(*tp) if r is not None}
                    racks_of[tp] = racks
                    all_racks |= racks
        self.consumer_racks: dict[str, str] = {}
        self.partition_racks: dict[TopicPartition, set[str]] = {}
        if self._use_rack_aware(set(consumers_by_rack), all_racks, racks_of):
            self.consumer_racks = {m: r for r, ms in consumers_by_rack.items() for m in ms}
            self.partition_racks = racks_of
        self.num_consumers_by_partition = {
            tp: sum(len(consumers_by_rack.get(r, ())) for r in racks)
            for tp, racks in racks_of.items()}

    @staticmethod
    def _use_rack_aware(consumer_racks: set[str], partition_racks: set[str],
                        racks_of: dict[TopicPartition, set[str]]) -> bool:
        """KIP-881: some racks match, and not every partition is on every rack."""
        if not consumer_racks or consumer_racks.isdisjoint(partition_racks):
            return False
        return not all(racks == partition_racks for racks in racks_of.values())

    def racks_mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(consumer)
        if rack is None:
            return False
        racks = self.partition_racks.get(tp)
        return racks is None or rack not in racks

    def sort_by_rack_consumers(self, partitions: Sequence[TopicPartition]
                               ) -> Sequence[TopicPartition]:
        """Stable sort by how many consumers share a rack with the partition's replicas."""
        if not self.num_consumers_by_partition:
            return partitions
        counts = self.num_consumers_by_partition
        return sorted(partitions, key=lambda tp: counts.get(tp, 0))

    def next_rack_consumer(self, tp: TopicPartition, consumers: list[str], first: int) -> int:
        """Index of the first consumer from ``first`` (cyclically) on one of tp's racks."""
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        n = len(consumers)
        for i in range(n):
            index = (first + i) % n
            rack = self.consumer_racks.get(consumers[index])
            if rack is not None and rack in racks:
                return index
        return -1


Misplaced = list[tuple[TopicPartition, str]]


def misplaced_partitions(assignment: dict[str, list[TopicPartition]],
                         subscriptions: dict[str, Subscription],
                         all_topics: Iterable[str]) -> Misplaced:
    """Partitions handed to a member not subscribed to their topic, with that member.

    Kafka's constrained builder does this to members with an empty subscription that come
    before the first non-empty one in the member map (they are never compared).
    """
    full = set(all_topics)
    out: Misplaced = []
    previous: list[str] | None = None
    subscribed: set[str] | None = None  # None: every topic is subscribed
    for member, partitions in assignment.items():
        topics = subscriptions[member].topics
        if topics is not previous and topics != previous:  # members mostly share one list
            previous = topics
            subscribed = None if full.issubset(topics) else set(topics)
        if subscribed is not None and partitions:
            out.extend((tp, member) for tp in partitions if tp[0] not in subscribed)
    return out


def keep_to_subscribers(assignment: dict[str, list[TopicPartition]],
                        subscriptions: dict[str, Subscription], misplaced: Misplaced,
                        owners: dict[str, list[TopicPartition]],
                        transferring: dict[TopicPartition, str] | None,
                        withheld: dict[TopicPartition, str]) -> None:
    """Deviation D2: each misplaced partition goes to a subscriber instead. First every
    partition whose valid previous owner can take it back within the balanced quota goes
    back (so a balanced previous assignment stays put, I4a, whatever the order of the
    misplaced partitions); the rest go to the least-loaded subscriber (ties: lowest member
    id). A member's load is what it keeps: partitions about to be ``withheld`` from it
    (cooperative) do not count.

    It runs before the cooperative assignor withholds moves, and ``transferring`` (the
    constrained builder's map; None for the general one, whose map is computed from the
    result) follows each partition: one back with its previous owner is not withheld, so
    the group settles (I11).
    """
    topics_of = {m: set(s.topics) for m, s in subscriptions.items() if m in assignment}
    gone = set(misplaced)
    for member in {m for _, m in misplaced}:
        assignment[member][:] = [tp for tp in assignment[member] if (tp, member) not in gone]
    previous = {tp: m for m, claims in owners.items() for tp in claims
                if tp[0] in topics_of.get(m, ())}
    load = {m: len(ps) for m, ps in assignment.items()}
    for tp, member in withheld.items():
        if member in load and (tp, member) not in gone:
            load[member] -= 1
    placeable = [tp for tp, _ in misplaced if any(tp[0] in ts for ts in topics_of.values())]
    takers = {m for tp in placeable for m, ts in topics_of.items() if tp[0] in ts}
    total = sum(load[m] for m in takers) + len(placeable)
    floor, extra = divmod(total, len(takers)) if takers else (0, 0)
    at_ceiling = sum(1 for m in takers if load[m] > floor)

    def place(tp: TopicPartition, taker: str, owner: str | None) -> None:
        assignment[taker].append(tp)
        load[taker] += 1
        if transferring is not None:
            if owner is None or owner == taker:
                transferring.pop(tp, None)
            else:
                transferring[tp] = taker

    rest: list[TopicPartition] = []
    for tp in placeable:
        owner = previous.get(tp)
        if owner is not None and load[owner] < floor:
            place(tp, owner, owner)
        elif owner is not None and load[owner] == floor and at_ceiling < extra:
            at_ceiling += 1
            place(tp, owner, owner)
        else:
            rest.append(tp)
    for tp in rest:
        taker = min((m for m in assignment if tp[0] in topics_of[m]),
                    key=lambda m: (load[m], member_key(m)))
        place(tp, taker, previous.get(tp))
