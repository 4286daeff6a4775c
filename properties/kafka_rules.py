"""Findings that are Kafka's own behaviour, reproduced on purpose: rules, not lists.

The builtin targets copy Kafka's Java client decision for decision (the golden vectors
decide), so where Kafka itself breaks an invariant as groupcheck states it, they break it
too. The engines (the audit, the scope prover, ``check``) still count every such violation
and show it; a rule here only *classifies* it as inherited from Kafka, which does not fail
the run unless ``--strict`` is given. A violation is classified only when every breach of
that invariant in the rebalance matches a rule; anything else stays a plain violation.

Rules (ids are stable; they appear in the summary and the report):

``K1`` (I6) — on the cooperative-sticky *general* path (the members do not all subscribe to
the same topics), a partition that several members claim goes to one of its claimants in
the same rebalance, whatever their generations: one of two claimants tied at the highest
generation, or even a stale claimant while a newer one still owns it. I6 wants a claim to
lose only to a strictly higher generation and an equal-generation tie to drop every claim
(KIP-341, KIP-792); Kafka's ``AbstractStickyAssignor`` applies that only on its constrained
path (equal subscriptions), and its general path does not withhold contested partitions.
The golden vectors show Kafka answering both ways on unmarked lines (the KAFKA-15106
scenarios with generations 1, 2, 3 give the shared partition to the oldest claimant), so
``impl/`` does too. A contested partition given to a member that does not claim it is never
covered.

``K2`` (I4a) — cooperative-sticky, a member subscribes to no topic: Kafka's constrained builder
hands that member partitions of a balanced assignment (deviation D2, docs/explanation/model.md)
and the cooperative step then withholds them because their owner still holds them, so the owner
is told to revoke partitions that nobody gets in this rebalance; the follow-up gives them back.
The answer keeps I1 and I2 and the golden vectors show it (an unmarked line), so ``impl/``
reproduces it. Only revocations that leave the partition unassigned are covered: a move to
another member is never inherited.

``K3`` (I11) — cooperative-sticky needs more follow-up rebalances than groupcheck's own
bound but does settle: within the four that Kafka's own cooperative tests allow (I11's
bound for Kafka), or, with racks (KIP-881's rack-aware general path), within ``CYCLE_HORIZON``. When
members join a rack-aware group at once, every follow-up moves a few partitions that the
next one withholds; the default audit sees groups settle at the fifth follow-up, one more
than Kafka's tests allow, and one (seed 0, scenario 20579) only at the 36th. Every answer
in such a chain is Kafka's decision: played on Kafka's own client (``java:``) those chains
get groupcheck's answer at every call, all 54 calls of scenario 20579 included. So this is
labelled as Kafka's, and reported: it is a finding about Kafka's rack-aware balancing. A
group still changing at the horizon is covered only by K4.

``K4`` (I11) — cooperative-sticky with racks (KIP-881's rack-aware general path) never
settles because, with no membership change, its follow-up rebalances cycle: an answer
repeats an earlier answer of the same rebalance, so the same requests come back and the
group flaps between the same assignments for ever (each answer withholds partitions that the
next one hands back). Played on Kafka's own client (``java:``), the audit's example (seed 0,
scenario 96646, ``tests/data/rack_aware_flap_spec.json``) gets from Kafka's
``CooperativeStickyAssignor`` exactly groupcheck's answer at every one of its nine calls
(``tests/test_java_target.py``), so the flap is Kafka's own: a finding about Kafka's
rack-aware balancing, labelled so that an audit without Java labels it too. A group without
racks, or one still changing at the horizon without a repeated answer, is never covered.
"""

from __future__ import annotations

from collections.abc import Mapping

from .generations import ClaimBreach

__all__ = ["CYCLE_HORIZON", "KAFKA_FOLLOW_UPS", "RULES", "SETTLE_HORIZON", "TopicPartition",
           "inherited_i11", "inherited_i4a", "inherited_i6"]

#: follow-up rebalances Kafka's own tests allow a cooperative group to settle in (I11)
KAFKA_FOLLOW_UPS = 4
#: how many follow-ups an engine runs to learn whether a group settles at all (rule K3)
SETTLE_HORIZON = 8
#: a rack-aware group still changing at SETTLE_HORIZON without a repeated answer gets up to
#: this many, to learn whether it settles late (K3) or cycles (K4)
CYCLE_HORIZON = 64

TopicPartition = tuple[str, int]

RULES: dict[str, str] = {
    "K1": "I6 on the cooperative-sticky general path (unequal subscriptions): a partition "
          "several members claim goes to one of its claimants, tied or stale, in the same "
          "rebalance, as Kafka's AbstractStickyAssignor does (it resolves claims by "
          "generation only when every member subscribes to the same topics, KIP-792)",
    "K2": "I4a on cooperative-sticky with a member that subscribes to no topic: partitions of "
          "a balanced assignment are revoked and withheld from everyone for one follow-up "
          "rebalance, as Kafka's constrained builder hands them to that member (deviation D2) "
          "and its cooperative step withholds them",
    "K3": "I11 on cooperative-sticky: the group settles after more follow-up rebalances than "
          "groupcheck's bound, within the 4 that Kafka's own cooperative tests allow or, on "
          "the rack-aware path (KIP-881), within 64 (the default audit sees 5 there, and once "
          "36; Kafka's client answers those chains identically)",
    "K4": "I11 on rack-aware cooperative-sticky (KIP-881): with no membership change the "
          "follow-up rebalances cycle (an answer repeats an earlier one), so the group flaps "
          "for ever; Kafka's CooperativeStickyAssignor gives the same answer at every call "
          "(audit seed 0, scenario 96646, played on java:)",
}


def _general_path(subscriptions: Mapping[str, list[str]]) -> bool:
    """Kafka's sticky assignors take the general path unless every member subscribes to
    the same set of topics."""
    sets = {frozenset(topics) for topics in subscriptions.values()}
    return len(sets) > 1


def inherited_i6(assignor: str, subscriptions: Mapping[str, list[str]],
                 breaches: list[ClaimBreach]) -> str | None:
    """The rule id when every I6 breach of one rebalance is Kafka's own (`RULES`), else
    None (then the breaches are plain violations)."""
    if (breaches and assignor == "cooperative-sticky" and _general_path(subscriptions)
            and all(b.generation is not None for b in breaches)):
        return "K1"
    return None


def inherited_i4a(assignor: str, subscriptions: Mapping[str, list[str]],
                  previous: Mapping[str, list[TopicPartition]],
                  assignment: Mapping[str, list[TopicPartition]]) -> str | None:
    """``"K2"`` when every partition the answer takes from its previous owner is withheld
    (assigned to nobody) in a cooperative-sticky group with an empty subscription."""
    if assignor != "cooperative-sticky" or all(subscriptions.values()):
        return None
    owner = {(tp[0], tp[1]): m for m, parts in assignment.items() for tp in parts}
    moved = [(tp[0], tp[1]) for m, parts in previous.items() for tp in parts
             if owner.get((tp[0], tp[1])) != m]
    if moved and all(tp not in owner for tp in moved):
        return "K2"
    return None


def inherited_i11(assignor: str, follow_ups: int, settled: bool,
                  rack_aware: bool = False, cycled: bool = False) -> str | None:
    """``"K3"`` when a cooperative-sticky group that went past groupcheck's bound settled
    within ``KAFKA_FOLLOW_UPS`` follow-up rebalances, or within ``CYCLE_HORIZON`` with
    racks; ``"K4"`` when a rack-aware one did not settle because its answers ``cycled``."""
    if assignor != "cooperative-sticky":
        return None
    if not settled:
        return "K4" if rack_aware and cycled else None
    limit = CYCLE_HORIZON if rack_aware else KAFKA_FOLLOW_UPS
    return "K3" if follow_ups <= limit else None
