"""The delivery invariant (I17): what users lose at a rebalance, judged over a cumulative
`DeliveryLog` by `judge_delivery` (records skipped or never handed, a new owner starting
away from the committed offset, records handed twice beyond the last commit, commits of
partitions not owned or going backwards, auto-commit that did not commit before a revoke).

The data types live in `delivery_log` and the rules, one function each, in
`delivery_rules`; both are re-exported here.
"""

from __future__ import annotations

from . import delivery_rules as R
from .delivery_log import (
    RULES,
    Commit,
    DeliveryLog,
    DeliveryVerdict,
    DeliveryViolation,
    DuplicateWindow,
    Handed,
    Tenure,
    TopicPartition,
)

__all__ = ["RULES", "Commit", "DeliveryLog", "DeliveryVerdict", "DeliveryViolation",
           "DuplicateWindow", "Handed", "Tenure", "TopicPartition", "judge_delivery"]


def judge_delivery(log: DeliveryLog) -> DeliveryVerdict:
    """Every rule of I17 over ``log``: the violations in `RULES` order, and every duplicate
    window, allowed or not."""
    index = R.index_log(log)
    windows = R.duplicates(log, index)
    starts = R.starts(log, index)
    found = (R.lost(log, index) + R.skipped(index) + starts
             + R.duplicate_violations(windows) + R.commit_unowned(log)
             + R.commit_backwards(index) + R.auto_commit_revoke(log, index))
    ordered = sorted(found, key=lambda v: RULES.index(v.rule))
    return DeliveryVerdict(tuple(ordered), tuple(windows))
