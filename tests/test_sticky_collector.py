"""The sticky assignors' large-group shortcuts: the collector held in step with the builder,
and owned partitions ordered by two stable sorts instead of one sort on key tuples."""

from __future__ import annotations

import gc

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from groupcheck.impl.assignors.sticky_common import CollectorPause, partition_key
from groupcheck.impl.assignors.sticky_constrained import owned_sorter as _owned_sorter
from groupcheck.impl.assignors.sticky_constrained import sorted_owned as _sorted_owned
from groupcheck.impl.types import Cluster, Subscription
from groupcheck.impl.user_data import encode_sticky_user_data

TOPICS = ["a", "b", "t10", "t9", "topic-1", "topic-10", "Z", "\u00e9t\u00e9"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TOPICS), st.integers(0, 40)), max_size=60))
def test_two_stable_sorts_order_owned_partitions_as_partition_then_topic(
        claims: list[tuple[str, int]]) -> None:
    """KAFKA-16277's (partition, topic) order, duplicates in their claimed order."""
    key = _owned_sorter(TOPICS)
    assert _sorted_owned(claims, key) == sorted(claims, key=partition_key)


def _group(members: int, topics: int, partitions: int) -> tuple[Cluster, dict[str, Subscription]]:
    names = [f"topic-{t}" for t in range(topics)]
    cluster = Cluster(dict.fromkeys(names, partitions))
    return cluster, {f"c{i:03d}": Subscription(list(names)) for i in range(members)}


def test_assign_leaves_the_collector_as_the_caller_had_it() -> None:
    cluster, subscriptions = _group(40, 30, 200)  # 6,000 partitions: several passes
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            for assignor in (StickyAssignor(), CooperativeStickyAssignor()):
                assignor.assign(cluster, subscriptions)
                assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_answers_do_not_depend_on_the_collector() -> None:
    """A first assignment and a sticky reassignment (decoded user data), collector on and
    off, with a batch small enough for many passes."""
    cluster, subscriptions = _group(50, 40, 300)
    answers = []
    every = CollectorPause.EVERY
    was = gc.isenabled()
    try:
        CollectorPause.EVERY = 64
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            first = StickyAssignor().assign(cluster, subscriptions)
            again = {m: Subscription(s.topics, encode_sticky_user_data(first[m].partitions, 1))
                     for m, s in subscriptions.items() if m != "c000"}
            second = StickyAssignor().assign(cluster, again)
            answers.append(({m: a.partitions for m, a in first.items()},
                            {m: a.partitions for m, a in second.items()}))
    finally:
        CollectorPause.EVERY = every
        (gc.enable if was else gc.disable)()
    assert answers[0] == answers[1]
    first_answer, second_answer = answers[0]
    assert sum(map(len, first_answer.values())) == 40 * 300
    kept = sum(len(set(second_answer[m]) & set(first_answer[m])) for m in second_answer)
    assert kept == 40 * 300 - len(first_answer["c000"])  # every survivor keeps its share


def _young(obj: object) -> bool:
    return any(o is obj for g in (0, 1) for o in gc.get_objects(generation=g))


def test_settle_moves_what_exists_out_of_the_passes_reach() -> None:
    """A list settled while empty is old: the passes of `made` no longer visit it."""
    was = gc.isenabled()
    try:
        gc.enable()
        with CollectorPause() as pause:
            waiting: list[object] = []
            assert _young(waiting)
            pause.settle()
            assert not _young(waiting)
    finally:
        (gc.enable if was else gc.disable)()


def test_settle_collects_nothing_when_the_caller_had_the_collector_off() -> None:
    was = gc.isenabled()
    try:
        gc.disable()
        with CollectorPause() as pause:
            waiting: list[object] = []
            pause.settle()
            assert _young(waiting)
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
