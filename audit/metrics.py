"""The balance metrics the audit reports of each settled rebalance (``audit.chain``).

Imbalance is max − min partitions per member; per topic, the largest such spread among one
topic's subscribers; and whether Kafka's ``isBalanced`` holds (KAFKA-15106: no member could
take a partition of its topics from a member holding at least two more).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["balance_metrics"]


def balance_metrics(assignment: Mapping[str, list[tuple[str, int]]],
                    subs: Mapping[str, list[str]],
                    partitions: Mapping[str, int]) -> tuple[int, int, bool]:
    """(max − min partitions per member, the largest per-topic spread among a topic's
    subscribers, Kafka's ``isBalanced``) in linear time."""
    sizes = {m: len(assignment.get(m, [])) for m in subs}
    for m, ps in assignment.items():
        sizes[m] = len(ps)
    spread = max(sizes.values()) - min(sizes.values()) if sizes else 0
    per_topic: dict[str, dict[str, int]] = {}
    top_owner: dict[str, int] = {}
    for m, ps in assignment.items():
        for t, _ in ps:
            counts = per_topic.setdefault(t, {})
            counts[m] = counts.get(m, 0) + 1
            top_owner[t] = max(top_owner.get(t, 0), sizes[m])
    topic_spread = 0
    for t in {t for ts in subs.values() for t in ts if partitions.get(t)}:
        counts = per_topic.get(t, {})
        values = [counts.get(m, 0) for m, ts in subs.items() if t in ts]
        topic_spread = max(topic_spread, max(values) - min(values))
    ok = spread <= 1 or not any(
        top_owner.get(t, 0) >= sizes[m] + 2 for m, ts in subs.items() for t in ts)
    return spread, topic_spread, ok
