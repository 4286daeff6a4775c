"""Findings that are Kafka's own behaviour, reproduced on purpose: rules, not lists.

The builtin targets copy Kafka's Java client decision for decision (the golden vectors
decide), so where Kafka itself breaks an invariant as groupcheck states it, they break it
too. The audit still counts every such violation and shows it in ``summary.json`` and the
report; a rule here only *classifies* it as inherited from Kafka, which does not fail the
run unless ``--strict`` is given. A violation is classified only when every breach of that
invariant in the rebalance matches a rule; anything else stays a plain violation.

Rules (ids are stable; they appear in the summary and the report):

``K1`` (I6) — on the cooperative-sticky *general* path (the members do not all subscribe to
the same topics), one of the claimants that share the highest generation keeps a partition
they all claim. I6 wants an equal-generation tie to drop every claim (KIP-792), but Kafka's
``AbstractStickyAssignor`` drops such double claims only on its constrained path (equal
subscriptions); the general path keeps one claim. The golden vectors show Kafka answering
this way, so ``impl/`` does too.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..properties.generations import ClaimBreach

RULES: dict[str, str] = {
    "K1": "I6 on the cooperative-sticky general path (unequal subscriptions): one of the "
          "claimants tied at the highest generation keeps the partition, as Kafka's "
          "AbstractStickyAssignor does (it drops equal-generation double claims only when "
          "every member subscribes to the same topics, KIP-792)",
}


def general_path(subscriptions: Mapping[str, list[str]]) -> bool:
    """Kafka's sticky assignors take the general path unless every member subscribes to
    the same set of topics."""
    sets = {frozenset(topics) for topics in subscriptions.values()}
    return len(sets) > 1


def inherited_i6(assignor: str, subscriptions: Mapping[str, list[str]],
                 breaches: list[ClaimBreach]) -> str | None:
    """The rule id when every I6 breach of one rebalance is Kafka's own (`RULES`), else
    None (then the breaches are plain violations)."""
    if (breaches and assignor == "cooperative-sticky" and general_path(subscriptions)
            and all(b.tie_at_top for b in breaches)):
        return "K1"
    return None
