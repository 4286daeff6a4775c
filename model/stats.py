"""What the reference model counts while it judges, beyond pass or fail: how often each
invariant was judged (a verdict "holds" needs at least one judgement), violations labelled
as Kafka's own behaviour, and figures — imbalance and moves at every settled generation,
the sizes of the groups that settled, and small inputs for the I4b gap to Z3's optimum;
and, for targets that keep a delivery log, each story's delivery verdict (I17) and the
commit styles its members took.

One `Stats` collects over every example of a run (the state machine hands the same object
to each example's model); replays made to shrink a failure do not count.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from ..properties.delivery import DeliveryLog, DeliveryVerdict, judge_delivery

__all__ = ["Stats"]

TopicPartition = tuple[str, int]
#: (subscriptions, metadata, previous ownership) of a settled generation, as sorted tuples
GapInput = tuple[tuple[tuple[str, tuple[str, ...]], ...], tuple[tuple[str, int], ...],
                 tuple[tuple[str, tuple[TopicPartition, ...]], ...]]

#: groups small enough for Z3's optimum within a fuzz budget
GAP_MAX_MEMBERS = 5
GAP_MAX_PARTITIONS = 12
GAP_MAX_INPUTS = 200


@dataclass
class Stats:
    judged: Counter[str] = field(default_factory=Counter)
    #: invariant → the first violation a kafka_rules rule labelled as Kafka's own
    inherited: dict[str, str] = field(default_factory=dict)
    imbalance: Counter[int] = field(default_factory=Counter)
    moves: Counter[int] = field(default_factory=Counter)
    #: members of each settled generation whose members all subscribe to the same topics
    equal_groups: Counter[int] = field(default_factory=Counter)
    gap_inputs: dict[GapInput, int] = field(default_factory=dict)
    #: time.perf_counter() when a violation was first seen (before any shrinking)
    first_violation_at: float | None = None
    #: the delivery verdict of each story's last delivery log, in the order they ended
    delivery: list[DeliveryVerdict] = field(default_factory=list)
    #: the commit styles the members of those stories took, in the order first seen
    commit_styles: dict[str, None] = field(default_factory=dict)

    def violation_seen(self) -> None:
        if self.first_violation_at is None:
            self.first_violation_at = time.perf_counter()

    def delivered(self, log: DeliveryLog | None) -> None:
        """A story ended with ``log`` as its delivery log (None: the target keeps none)."""
        if log is not None:
            self.delivery.append(judge_delivery(log))
            self.commit_styles.update(dict.fromkeys(log.styles.values()))

    def judge(self, invariant: str, times: int = 1) -> None:
        self.judged[invariant] += times

    def label(self, violation: str) -> None:
        invariant = violation.split(":")[0].split()[-1]
        self.inherited.setdefault(invariant, violation)

    def gap_input(self, subscriptions: dict[str, frozenset[str]], partitions: dict[str, int],
                  previous: dict[str, frozenset[TopicPartition]], moves: int) -> None:
        """Keep a small settled generation's input for the I4b gap (bounded in number)."""
        wanted = {t for ts in subscriptions.values() for t in ts if t in partitions}
        if (len(subscriptions) > GAP_MAX_MEMBERS or len(self.gap_inputs) >= GAP_MAX_INPUTS
                or sum(partitions[t] for t in wanted) > GAP_MAX_PARTITIONS):
            return
        key: GapInput = (tuple(sorted((m, tuple(sorted(ts))) for m, ts in subscriptions.items())),
                         tuple(sorted(partitions.items())),
                         tuple(sorted((m, tuple(sorted(ps))) for m, ps in previous.items())))
        self.gap_inputs.setdefault(key, moves)
