"""What a target's assignors promise, and the two judgements the reference model makes of
one leader run beyond I1, I2, I5 and I6: stickiness (I4a) and user-data hygiene (I12).

Theory of operation. A `RebalanceRecord` holds what the leader read (each member's claim:
topics, owned partitions, generation, the raw user data, and what that member's assignor
had been handed when it wrote the user data) and what it answered.

* I4a, for assignors that promise stickiness: the previous assignment is what the members
  claim — their owned partitions (COOPERATIVE) or the partitions in their sticky user data
  (EAGER ``sticky``, the leader's own source). When every member claims at the same
  generation and the claims form a complete, balanced, disjoint assignment of the current
  subscriptions (so membership is unchanged), the answer must move nothing. Kafka's own
  exception (rule K2, ``kafka_rules``) is labelled, not failed, unless strict.
* I12: each member's user data decodes to exactly what its assignor was given (partitions
  and generation, sticky; generation, cooperative), in the layout the member is configured
  to speak (an old client's v0 sticky data has no generation by design); and owned
  partitions claimed in the subscription travel with the generation they were given in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..properties import assignment as A
from ..properties.balance import STICKY_FAMILY, contract_of
from ..properties.group import Claim, MemberSpec, RebalanceRecord, TopicPartition
from ..properties.kafka_rules import inherited_i4a
from ..properties.user_data_rules import LAYOUTS, claim_hygiene, read_sticky, user_data_hygiene
from .stats import Stats

__all__ = ["Promises", "judge_i12", "judge_i4a"]


@dataclass(frozen=True)
class Promises:
    """The balance contract per assignor name (names not listed: Kafka's rule for Kafka's
    names, else the strictest, `properties.balance`), the names that promise stickiness, and
    ``strict``: Kafka's own behaviour (rules K1-K3) fails too."""

    balance: tuple[tuple[str, str], ...] = ()
    sticky: frozenset[str] = field(default_factory=lambda: STICKY_FAMILY)
    strict: bool = False

    def contract(self, assignor: str) -> str:
        return dict(self.balance).get(assignor) or contract_of(assignor, None)[0]


def _previous(record: RebalanceRecord) -> dict[str, tuple[list[TopicPartition], int]] | None:
    """Each member's claimed previous assignment and its generation, or None when the leader
    reads claims from a layout groupcheck cannot read."""
    out: dict[str, tuple[list[TopicPartition], int]] = {}
    for m, c in record.claims.items():
        if record.protocol == "COOPERATIVE":
            out[m] = (list(c.owned), c.generation)
        elif record.assignor == "sticky" and c.user_data:
            read = read_sticky(c.user_data)
            if read is None:
                return None
            parts, generation = read
            out[m] = (parts, c.generation if generation is None else generation)
        elif record.assignor == "sticky":
            out[m] = ([], -1)
        else:
            return None
    return out


def judge_i4a(record: RebalanceRecord, partitions: Mapping[str, int], promises: Promises,
              stats: Stats | None) -> tuple[list[str], list[str]]:
    """(violations, labelled as Kafka's own) of I4a for one leader run."""
    previous = _previous(record)
    if record.assignor not in promises.sticky or not previous:
        return [], []
    generations = {g for _, g in previous.values()}
    subs = {m: list(c.topics) for m, c in record.claims.items()}
    prev = {m: parts for m, (parts, _) in previous.items()}
    if (len(generations) != 1 or min(generations) < 0 or A.complete(prev, subs, partitions)
            or A.balanced(prev, subs, partitions)):
        return [], []
    if stats is not None:
        stats.judge("I4a")
    assignment = {m: list(ps) for m, ps in record.assignment.items()}
    found = [f"gen {record.generation}: {v}" for v in A.no_moves_when_balanced(prev, assignment)]
    if found and not promises.strict and inherited_i4a(record.assignor, subs, prev, assignment):
        return [], [f"{v} (Kafka's own, rule K2)" for v in found]
    return found, []


def _sends_generation(spec: MemberSpec, assignor: str) -> bool:
    return spec.subscription_version >= 2 or (
        assignor == "cooperative-sticky" and spec.cooperative_user_data)


def _claim_i12(name: str, claim: Claim, spec: MemberSpec, record: RebalanceRecord) -> list[str]:
    assert claim.given is not None
    given, generation = claim.given
    out: list[str] = []
    if record.assignor == "sticky":
        out += user_data_hygiene("sticky", claim.user_data, given, generation,
                                 with_generation=spec.user_data_version >= 1)
    elif record.assignor == "cooperative-sticky" and spec.cooperative_user_data:
        out += user_data_hygiene("cooperative-sticky", claim.user_data, given, generation)
    if record.protocol == "COOPERATIVE" and _sends_generation(spec, record.assignor):
        out += claim_hygiene(name, claim.owned, claim.generation, generation)
    return [f"gen {record.generation}: {name}: {v}" for v in out]


def judge_i12(record: RebalanceRecord, specs: Mapping[str, MemberSpec],
              stats: Stats | None) -> list[str]:
    """I12 for every claim of one leader run whose writer's assignment is known."""
    out: list[str] = []
    if record.assignor not in LAYOUTS and record.protocol != "COOPERATIVE":
        return out
    for name, claim in record.claims.items():
        spec = specs.get(name)
        if claim.given is None or spec is None:
            continue
        if stats is not None:
            stats.judge("I12")
        out += _claim_i12(name, claim, spec, record)
    return out
