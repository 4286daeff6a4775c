"""Invariants of one assignment (I1, I2, I3, I4a, I5) as predicates over plain data.

Every function takes dicts, sets and tuples only — never impl objects — and returns the
list of violations as readable sentences (empty when the invariant holds), so that the
same predicate serves Hypothesis, the exhaustive prover and the audit pipeline.

Shapes: ``assignment`` maps member id → iterable of ``(topic, partition)``;
``subscriptions`` maps member id → iterable of topics; ``partitions`` maps topic → count
(the leader's metadata).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

__all__ = ["AssignmentMap", "TopicPartition", "balanced", "complete", "exclusive_ownership",
           "moves", "no_moves_when_balanced", "revoke_before_reassign", "size_histogram",
           "valid_targets"]

TopicPartition = tuple[str, int]
AssignmentMap = Mapping[str, Iterable[TopicPartition]]


def _tp(item: TopicPartition) -> TopicPartition:
    """A pair from JSON may be a list: make it a hashable tuple."""
    return (item[0], item[1])


def _owner_map(assignment: AssignmentMap) -> dict[TopicPartition, list[str]]:
    owners: dict[TopicPartition, list[str]] = {}
    for member, parts in assignment.items():
        for tp in parts:
            owners.setdefault(_tp(tp), []).append(member)
    return owners


def _fmt(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def exclusive_ownership(assignment: AssignmentMap) -> list[str]:
    """I1: no partition is given to two members, nor twice to one member."""
    return _shared(_owner_map(assignment))


def _shared(owners: Mapping[TopicPartition, list[str]]) -> list[str]:
    return [f"I1: {_fmt(tp)} assigned to {', '.join(ms)}"
            for tp, ms in owners.items() if len(ms) > 1]


def valid_targets(assignment: AssignmentMap, subscriptions: Mapping[str, Iterable[str]],
                  partitions: Mapping[str, int]) -> list[str]:
    """I2 (validity half): only partitions in the metadata, only to members subscribed to
    their topic."""
    out: list[str] = []
    subs = {m: set(ts) for m, ts in subscriptions.items()}
    for member, parts in assignment.items():
        for topic, p in parts:
            count = partitions.get(topic)
            if count is None or not 0 <= p < count:
                out.append(f"I2: {topic}-{p} is not in the metadata but was assigned to {member}")
            elif topic not in subs.get(member, set()):
                out.append(f"I2: {topic}-{p} assigned to {member}, which does not subscribe "
                           f"to {topic}")
    return out


def complete(assignment: AssignmentMap, subscriptions: Mapping[str, Iterable[str]],
             partitions: Mapping[str, int]) -> list[str]:
    """I2: every partition of every subscribed topic with metadata is owned by exactly one
    member subscribed to its topic, and nothing else is owned."""
    owned = _owner_map(assignment)
    out = valid_targets(assignment, subscriptions, partitions) + _shared(owned)
    wanted = {t for ts in subscriptions.values() for t in ts if t in partitions}
    for topic in sorted(wanted):
        missing = [p for p in range(partitions[topic]) if (topic, p) not in owned]
        if missing:
            shown = ", ".join(str(p) for p in missing[:8]) + (" …" if len(missing) > 8 else "")
            out.append(f"I2: {topic} partitions {shown} are owned by nobody")
    return out


def balanced(assignment: AssignmentMap, subscriptions: Mapping[str, Iterable[str]],
             partitions: Mapping[str, int]) -> list[str]:
    """I3, Kafka's ``isBalanced``: max − min ≤ 1, or no member holding less than it could
    take a partition of its topics from a holder with at least 2 more (KAFKA-15106)."""
    sizes = {m: len(list(ps)) for m, ps in assignment.items()}
    for m in subscriptions:
        sizes.setdefault(m, 0)
    if not sizes or max(sizes.values()) - min(sizes.values()) <= 1:
        return []
    owners = _owner_map(assignment)
    if not _could_take_any(sizes, owners, subscriptions, partitions):
        return []
    out: list[str] = []
    for member, topics in subscriptions.items():
        for topic in topics:
            for p in range(partitions.get(topic, 0)):
                for other in owners.get((topic, p), []):
                    if other != member and sizes[member] + 1 < sizes[other]:
                        out.append(f"I3: {member} holds {sizes[member]} and could take "
                                   f"{topic}-{p} from {other}, which holds {sizes[other]}")
                        break
                else:
                    continue
                break
    return out


def _could_take_any(sizes: Mapping[str, int], owners: Mapping[TopicPartition, list[str]],
                    subscriptions: Mapping[str, Iterable[str]],
                    partitions: Mapping[str, int]) -> bool:
    """Whether `balanced` finds anything, in one pass over the partitions: a member can take
    a partition of a topic only if the topic's largest holder has at least 2 more than it
    (which also makes that holder another member)."""
    largest: dict[str, int] = {}
    for (topic, p), holders in owners.items():
        if 0 <= p < partitions.get(topic, 0):
            largest[topic] = max(largest.get(topic, 0), *(sizes[h] for h in holders))
    return any(sizes[member] + 1 < largest.get(topic, 0)
               for member, topics in subscriptions.items() for topic in topics)


def revoke_before_reassign(owned_before: AssignmentMap, assignment: AssignmentMap) -> list[str]:
    """I5 (COOPERATIVE, KIP-429): a partition owned by A when the rebalance starts is never
    given to B ≠ A in the same rebalance."""
    previous: dict[TopicPartition, set[str]] = {}
    for member, parts in owned_before.items():
        for tp in parts:
            previous.setdefault(_tp(tp), set()).add(member)
    out: list[str] = []
    for member, parts in assignment.items():
        for tp in parts:
            holders = previous.get(_tp(tp), set()) - {member}
            if holders:
                out.append(f"I5: {_fmt(tp)} is still owned by {', '.join(sorted(holders))} "
                           f"but was given to {member} in the same rebalance")
    return out


def moves(owned_before: AssignmentMap, assignment: AssignmentMap) -> int:
    """How many previously owned partitions end up with a different member (or none)."""
    after = {_tp(tp): m for m, ps in assignment.items() for tp in ps}
    return sum(1 for m, ps in owned_before.items() for tp in ps if after.get(_tp(tp)) != m)


def no_moves_when_balanced(owned_before: AssignmentMap, assignment: AssignmentMap) -> list[str]:
    """I4a: a balanced, valid previous assignment with unchanged membership moves nothing."""
    count = moves(owned_before, assignment)
    return [f"I4a: {count} partition(s) moved although the previous assignment was "
            "balanced and valid"] if count else []


def size_histogram(assignment: AssignmentMap) -> Counter[int]:
    """How many members hold each number of partitions (for reports)."""
    return Counter(len(list(ps)) for ps in assignment.values())
