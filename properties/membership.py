"""Invariants of group membership over time (I6, I7, I8, I9) as plain-data predicates.

Client profiles (DESIGN.md): ``kip`` follows the KIP texts (KIP-429, KIP-822); ``java``
follows Kafka 4.0 as shipped. Each predicate returns readable violations (empty = holds).
"""

from __future__ import annotations

from collections.abc import Iterable, Set

TopicPartition = tuple[str, int]

PROFILES = ("kip", "java")


def _fmt(parts: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(parts)) + "]"


def listener_call(kind: str, partitions: Set[TopicPartition], owned_before: Set[TopicPartition],
                  generation: int, member_id: str, profile: str,
                  rebalancing: bool = False) -> list[str]:
    """I7 and I6 for one callback: revoked and lost only name owned partitions; assigned
    names only new ones; lost only when the membership is invalid — or, as Kafka's
    onLeavePrepare does, when the member leaves during a rebalance — and revoked only when it
    is valid (a fenced member reports lost, not revoked); ``kip`` never calls with an empty
    set (KIP-429)."""
    out: list[str] = []
    invalid = generation < 0 or member_id == ""
    if kind in ("revoked", "lost") and not partitions <= owned_before:
        out.append(f"I7: {kind} {_fmt(partitions - owned_before)} which it did not own")
    if kind == "assigned" and partitions & owned_before:
        out.append(f"I7: assigned {_fmt(partitions & owned_before)} which it already owned")
    if kind == "lost" and not invalid and not rebalancing:
        out.append(f"I7: lost {_fmt(partitions)} while its generation {generation} was valid")
    if kind == "revoked" and invalid and partitions:
        out.append(f"I6: revoked {_fmt(partitions)} after it was fenced (generation "
                   f"{generation}); a fenced member reports them lost")
    if profile == "kip" and not partitions:
        out.append(f"I7: {kind} called with an empty set (kip profile, KIP-429)")
    return out


def pause_marks(profile: str, protocol: str, marks_before: Set[TopicPartition],
                owned_after: Set[TopicPartition]) -> set[TopicPartition]:
    """I8: which pause marks a completed rebalance keeps. ``kip`` (KIP-822): every mark of a
    partition still assigned; ``java``: eager loses all, cooperative keeps retained ones."""
    if profile == "java" and protocol == "EAGER":
        return set()
    return set(marks_before & owned_after)


def pause_state(paused: Set[TopicPartition], owned: Set[TopicPartition],
                expected: Set[TopicPartition]) -> list[str]:
    """I8 at any instant: marks only on owned partitions, and exactly the expected ones."""
    out: list[str] = []
    if not paused <= owned:
        out.append(f"I8: pause marks on {_fmt(paused - owned)} which it does not own")
    if paused & owned != expected & owned:
        lost, extra = (expected & owned) - paused, (paused & owned) - expected
        if lost:
            out.append(f"I8: pause marks of {_fmt(lost)} were dropped")
        if extra:
            out.append(f"I8: {_fmt(extra)} are paused although nobody paused them")
    return out


def fetched_record(partition: TopicPartition, owned: Set[TopicPartition],
                   paused: Set[TopicPartition]) -> list[str]:
    """I8/I1: poll returns no record of a paused partition, nor of one it does not own."""
    if partition in paused:
        return [f"I8: poll returned a record of paused {_fmt([partition])}"]
    if partition not in owned:
        return [f"I1: poll returned a record of {_fmt([partition])}, which it does not own"]
    return []


def subscription_change(owned_before: Set[TopicPartition],
                        owned_after: Set[TopicPartition]) -> list[str]:
    """I9 (KIP-70): ``subscribe`` leaves the assignment as it is until the next rebalance."""
    if owned_before != owned_after:
        return [f"I9: subscribe changed the assignment at once: {_fmt(owned_before)} → "
                f"{_fmt(owned_after)}"]
    return []


def unsubscribe(owned_before: Set[TopicPartition], owned_after: Set[TopicPartition],
                released: Set[TopicPartition], commits_before: int,
                commits_after: int, consumed: Set[TopicPartition]) -> list[str]:
    """I9 (KIP-70, KAFKA-8972): ``unsubscribe`` commits what was consumed (``consumed``: owned
    partitions it returned records of), then revokes (or loses) every owned partition through
    the listener, then clears the assignment."""
    out: list[str] = []
    if owned_after:
        out.append(f"I9: unsubscribe left {_fmt(owned_after)} assigned")
    if owned_before and released != owned_before:
        out.append(f"I9: unsubscribe released {_fmt(released)} through the listener, "
                   f"not all of {_fmt(owned_before)}")
    if consumed & owned_before and commits_after <= commits_before:
        out.append("I9: unsubscribe did not commit before releasing its partitions")
    return out
