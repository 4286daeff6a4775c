"""Invariants of group membership over time (I6, I7, I8, I9) as plain-data predicates.

Client profiles: ``kip`` follows the KIP texts (KIP-429, KIP-822); ``java``
follows Kafka 4.0 as shipped; ``librdkafka`` is what librdkafka 2.16 (confluent-kafka) was
seen doing on its mock cluster. Each profile is data (`ClientProfile`); each predicate
returns readable violations (empty = holds).
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass

__all__ = ["PROFILES", "PROFILE_TABLE", "ClientProfile", "TopicPartition", "fetched_record",
           "listener_call", "pause_marks", "pause_state", "subscription_change", "unsubscribe"]

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class ClientProfile:
    """What a client does where the KIP texts leave room or real clients depart from them.

    ``empty_callbacks``: a listener may be called with an empty set; ``cooperative_order``:
    the order of a cooperative round's callbacks; ``eager_pause`` / ``cooperative_pause``:
    which pause marks survive a completed rebalance — ``retained`` (those of partitions
    still assigned, KIP-822), ``none`` (all dropped) or ``all`` (every mark the application
    set, even on a partition revoked and later assigned back); ``keeps_member_id_after``:
    the coordinator errors after which the member rejoins with the member id it had (after
    the others it rejoins with none, `member_id_rules`)."""

    name: str
    empty_callbacks: bool
    cooperative_order: str
    eager_pause: str
    cooperative_pause: str
    keeps_member_id_after: frozenset[str] = frozenset(
        {"ILLEGAL_GENERATION", "REBALANCE_IN_PROGRESS"})


PROFILE_TABLE = {
    "kip": ClientProfile("kip", False, "assigned, then revoked (KIP-429's example)",
                         "retained", "retained"),
    "java": ClientProfile("java", True, "revoked, then assigned", "none", "retained"),
    "librdkafka": ClientProfile("librdkafka", True, "revoked, then assigned (on_assign "
                                "every round, mostly empty)", "all", "all"),
}
PROFILES = tuple(PROFILE_TABLE)


def _fmt(parts: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(parts)) + "]"


def listener_call(kind: str, partitions: Set[TopicPartition], owned_before: Set[TopicPartition],
                  generation: int, member_id: str, profile: str,
                  rebalancing: bool = False, told_fenced: bool = False) -> list[str]:
    """I7 and I6 for one callback: revoked and lost only name owned partitions; assigned
    names only new ones; lost only when the membership is invalid — or, as Kafka's
    onLeavePrepare does, when the member leaves during a rebalance, or after the coordinator
    told the member it is fenced (``told_fenced``: an ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID
    answer, whatever generation the client still shows its application) — and revoked only
    when it is valid (a fenced member reports lost, not revoked); ``kip`` never calls with
    an empty set (KIP-429)."""
    out: list[str] = []
    invalid = generation < 0 or member_id == ""
    if kind in ("revoked", "lost") and not partitions <= owned_before:
        out.append(f"I7: {kind} {_fmt(partitions - owned_before)} which it did not own")
    if kind == "assigned" and partitions & owned_before:
        out.append(f"I7: assigned {_fmt(partitions & owned_before)} which it already owned")
    if kind == "lost" and not invalid and not rebalancing and not told_fenced:
        out.append(f"I7: lost {_fmt(partitions)} while its generation {generation} was valid")
    if kind == "revoked" and invalid and partitions:
        out.append(f"I6: revoked {_fmt(partitions)} after it was fenced (generation "
                   f"{generation}); a fenced member reports them lost")
    if not PROFILE_TABLE[profile].empty_callbacks and not partitions:
        out.append(f"I7: {kind} called with an empty set ({profile} profile, KIP-429)")
    return out


def pause_marks(profile: str, protocol: str, marks_before: Set[TopicPartition],
                owned_after: Set[TopicPartition]) -> set[TopicPartition]:
    """I8: which pause marks a completed rebalance keeps (the profile's rule for the
    protocol): ``retained`` keeps marks of partitions still assigned (KIP-822), ``none``
    drops every mark, ``all`` keeps every mark (librdkafka: a mark outlives the
    assignment; it is shown again when the partition comes back)."""
    p = PROFILE_TABLE[profile]
    rule = p.eager_pause if protocol == "EAGER" else p.cooperative_pause
    if rule == "none":
        return set()
    if rule == "all":
        return set(marks_before)
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
