"""I6 within one rebalance: a claim loses only to a strictly higher generation.

The leader reads, for every member, the partitions it claims and the generation in which it
got them. Two or more members may claim the same partition (a member that missed a
generation rejoins with its stale state, KAFKA-7026; equal-generation double claims,
KIP-792). This module judges one rebalance on (claims with generations, result).

Reading (used by the predicate here and by the Z3 encoding in ``z3_encodings``):

* It judges *contested* partitions only — those claimed by two or more distinct members. A
  partition with a single claimant is I5's business (revoke before reassign).
* COOPERATIVE: a contested partition may be given to member B only when B claims it and
  every other claimant's generation is strictly lower than B's. So a stale claim loses to
  the newer one, and with an equal-generation tie at the top nobody gets the partition in
  this rebalance (both claims are dropped; the follow-up rebalance assigns it).
* EAGER: every member gives up all its partitions before it joins, so claims do not
  constrain the result; the eager damage of a bad resolution (KAFKA-7026: one partition
  given to two members) is I1 on the result. The predicate returns no violation.

A missing generation (``None``) counts as -1, like Kafka's ``Optional.empty()`` in
comparisons.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["ClaimBreach", "Claims", "TopicPartition", "claim_breaches", "claim_hygiene",
           "claimants", "claims_match_given", "contested", "resolved", "uncontested", "winner"]

TopicPartition = tuple[str, int]
Claims = Mapping[str, tuple[Iterable[TopicPartition], int | None]]


def _fmt(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def _gen(generation: int | None) -> int:
    return -1 if generation is None or generation < 0 else generation


def claimants(claims: Claims) -> dict[TopicPartition, dict[str, int]]:
    """partition → {member: generation of its claim} (a member listed once per partition)."""
    out: dict[TopicPartition, dict[str, int]] = {}
    for member, (owned, generation) in claims.items():
        for item in owned:
            out.setdefault((item[0], item[1]), {})[member] = _gen(generation)
    return out


def contested(claims: Claims) -> dict[TopicPartition, dict[str, int]]:
    """The partitions claimed by two or more distinct members, with every claim."""
    return {tp: who for tp, who in claimants(claims).items() if len(who) > 1}


def winner(claims_on_tp: Mapping[str, int]) -> str | None:
    """The claimant whose generation is strictly higher than every other claim, if any."""
    if not claims_on_tp:
        return None
    top = max(claims_on_tp.values())
    at_top = [m for m, g in claims_on_tp.items() if g == top]
    return at_top[0] if len(at_top) == 1 else None


def uncontested(claims: Claims) -> dict[str, list[TopicPartition]]:
    """Each member's claims on partitions nobody else claims (the ``owned_before`` of I5)."""
    shared = contested(claims)
    return {m: [(tp[0], tp[1]) for tp in owned if (tp[0], tp[1]) not in shared]
            for m, (owned, _) in claims.items()}


def resolved(claims: Claims) -> dict[str, list[TopicPartition]]:
    """The previous ownership the leader should honour: each claimed partition goes to its
    claimant with the strictly highest generation; a tie at the top drops every claim."""
    out: dict[str, list[TopicPartition]] = {m: [] for m in claims}
    for tp, who in claimants(claims).items():
        best = winner(who)
        if best is not None:
            out[best].append(tp)
    return out


@dataclass(frozen=True)
class ClaimBreach:
    """One I6 breach: ``tp`` went to ``member`` (its claim's generation, None when it does
    not claim it) over the claims of ``beaten`` (member, generation), each not lower."""

    tp: TopicPartition
    member: str
    generation: int | None
    beaten: tuple[tuple[str, int], ...]

    def describe(self) -> str:
        others = ", ".join(f"{m} (generation {g})" for m, g in self.beaten)
        if self.generation is None:
            return (f"I6: {_fmt(self.tp)} was given to {self.member}, which does not claim "
                    f"it, over the claim of {others}")
        return (f"I6: {_fmt(self.tp)} was given to {self.member} (generation "
                f"{self.generation}) although {others} claims it with a generation that is "
                "not lower")


def claim_breaches(claims: Claims, assignment: Mapping[str, Iterable[TopicPartition]],
                   protocol: str) -> list[ClaimBreach]:
    """I6 for one rebalance, as data (see the module docstring for the reading)."""
    if protocol != "COOPERATIVE":
        return []
    shared = contested(claims)
    out: list[ClaimBreach] = []
    for member, parts in assignment.items():
        for item in parts:
            tp = (item[0], item[1])
            who = shared.get(tp)
            if who is None:
                continue
            mine = who.get(member)
            beaten = tuple(sorted((m, g) for m, g in who.items()
                                  if m != member and (mine is None or g >= mine)))
            if beaten:
                out.append(ClaimBreach(tp, member, mine, beaten))
    return out


def claim_hygiene(claims: Claims, assignment: Mapping[str, Iterable[TopicPartition]],
                  protocol: str) -> list[str]:
    """I6 for one rebalance: one message per breach (`claim_breaches`)."""
    return [b.describe() for b in claim_breaches(claims, assignment, protocol)]


def claims_match_given(claimed: Mapping[str, Iterable[TopicPartition]],
                       given: Mapping[str, Iterable[TopicPartition]]) -> list[str]:
    """I6 on the bytes a coordinator held: a member claims (in its subscription's owned
    partitions or its assignor's user data) only partitions it was assigned in its last
    completed generation (``given``; a member absent there has no previous assignment).
    A claim beyond that is a stale or foreign claim the leader may trust (KAFKA-7026)."""
    out: list[str] = []
    for member, parts in sorted(claimed.items()):
        extra = sorted(set(parts) - set(given.get(member, ())))
        if extra:
            out.append(f"I6: {member} claims {', '.join(_fmt(tp) for tp in extra)}, which "
                       "its last completed generation did not give it")
    return out
