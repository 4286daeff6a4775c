"""Broken assignors that only larger groups show (``python:story_assignors:<name>``, with
this folder on ``sys.path``: pytest puts it there, a shell needs ``PYTHONPATH=tests/targets``):
the scenario engine must catch them where the scope prover (three members at most) cannot."""

from __future__ import annotations

import time

from groupcheck.impl.assignors.range import RangeAssignor
from groupcheck.impl.assignors.sticky import StickyAssignor
from groupcheck.impl.types import Assignment, Cluster, Subscription


class RotatingSticky(StickyAssignor):
    """Sticky, except that with four members or more, all subscribed to the same topics,
    each member's answer goes to the next member: still balanced and complete, but every
    partition of a balanced previous assignment moves (I4a)."""

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        answer = super().assign(cluster, subscriptions)
        topics = {frozenset(s.topics) for s in subscriptions.values()}
        if len(subscriptions) < 4 or len(topics) != 1:
            return answer
        members = list(answer)
        return {m: answer[members[i - 1]] for i, m in enumerate(members)}


class DropsInCrowds(RangeAssignor):
    """Range, except that with more than 20 members the last partition handed to the last
    member is dropped (I2: owned by nobody)."""

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        answer = super().assign(cluster, subscriptions)
        if len(subscriptions) > 20:
            for member in reversed(list(answer)):
                if answer[member].partitions:
                    answer[member] = Assignment(list(answer[member].partitions[:-1]))
                    break
        return answer


class HangsAtFive(RangeAssignor):
    """Range, except that it never answers a group of five members or more."""

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        if len(subscriptions) >= 5:
            time.sleep(3600)
        return super().assign(cluster, subscriptions)
