"""The shared pool of partition tuples (`impl/assignors/partition_pool.py`): bounded, least
recently used topics dropped first, shared between equal (topic, count) keys, new tuples for a
changed count, safe on several threads, and invisible in the assignors' answers."""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.impl.assignors import make_assignor
from groupcheck.impl.assignors.partition_pool import (
    POOLED_FROM,
    RUN_POOLED_FROM,
    PartitionPool,
    add_free,
    partition_run,
    shared_pool,
    topic_partitions,
)
from groupcheck.impl.types import Cluster, Subscription, TopicPartition

from test_sticky_properties import Group, groups, subscriptions


def expected(topic: str, count: int) -> tuple[TopicPartition, ...]:
    return tuple((topic, p) for p in range(count))


@pytest.fixture
def pool_capacity() -> Iterator[None]:
    """Restores the shared pool's capacity and empties it after the test."""
    capacity = shared_pool.capacity
    yield
    shared_pool.capacity = capacity
    shared_pool.clear()


def test_the_pool_never_holds_more_than_its_capacity_and_drops_the_least_recent() -> None:
    pool = PartitionPool(capacity=100)
    for i in range(6):  # 6 x 30 partitions asked for: only three topics fit
        pool.partitions(f"t{i}", 30)
    assert pool.keys() == [("t3", 30), ("t4", 30), ("t5", 30)]
    assert pool.held == 90
    pool.partitions("t3", 30)  # used again: now the most recent
    pool.partitions("t6", 25)  # 115 > 100: the least recent (t4) goes
    assert pool.keys() == [("t5", 30), ("t3", 30), ("t6", 25)]
    assert pool.held == 85


def test_a_topic_larger_than_the_pool_is_made_but_never_held() -> None:
    pool = PartitionPool(capacity=10)
    pool.partitions("small", 4)
    big = pool.partitions("big", 11)
    assert big == expected("big", 11)
    assert pool.keys() == [("small", 4)]
    assert pool.held == 4
    assert PartitionPool(capacity=0).partitions("t", 3) == expected("t", 3)


def test_equal_names_and_counts_share_one_tuple_of_partitions() -> None:
    pool = PartitionPool()
    name = "orders"
    other = "".join(["ord", "ers"])  # an equal topic name, another str object
    assert other is not name
    first = pool.partitions(name, 5)
    second = pool.partitions(other, 5)
    assert first is second
    assert first == expected("orders", 5)


def test_a_topic_whose_count_changes_gets_new_tuples() -> None:
    pool = PartitionPool()
    before = pool.partitions("orders", 5)
    after = pool.partitions("orders", 7)
    assert after == expected("orders", 7)
    assert before == expected("orders", 5)
    assert not any(a is b for a, b in zip(before, after, strict=False))
    assert pool.keys() == [("orders", 5), ("orders", 7)]


def test_the_made_callback_hears_misses_only() -> None:
    pool = PartitionPool()
    heard: list[int] = []
    pool.partitions("t", 12, heard.append)
    pool.partitions("t", 12, heard.append)
    pool.partitions("u", 3, heard.append)
    assert heard == [12, 3]


@settings(max_examples=200, deadline=None)
@given(capacity=st.integers(0, 40),
       lookups=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "e"]),
                                  st.integers(0, 15)), max_size=40))
def test_the_pool_holds_what_a_bounded_lru_of_its_lookups_holds(
        capacity: int, lookups: list[tuple[str, int]]) -> None:
    """After any lookups: every answer is the topic's partitions; the pool holds exactly the
    most recently used (topic, count) entries that fit, oldest first, never more than its
    capacity; an entry larger than the capacity is never held."""
    pool = PartitionPool(capacity)
    model: OrderedDict[tuple[str, int], int] = OrderedDict()
    for topic, count in lookups:
        assert pool.partitions(topic, count) == expected(topic, count)
        if (topic, count) in model:
            model.move_to_end((topic, count))
        elif count <= capacity:
            model[(topic, count)] = count
            while sum(model.values()) > capacity:
                model.popitem(last=False)
    assert pool.keys() == list(model)
    assert pool.held == sum(model.values()) <= capacity


def test_threads_sharing_a_small_pool_get_right_answers_and_keep_it_bounded() -> None:
    pool = PartitionPool(capacity=60)
    wrong: list[tuple[str, int]] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(2000):
            topic, count = f"t{rng.randrange(8)}", rng.randrange(1, 25)
            if pool.partitions(topic, count) != expected(topic, count):
                wrong.append((topic, count))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
    assert pool.held == sum(count for _, count in pool.keys()) <= 60


@settings(max_examples=300, deadline=None)
@given(marks=st.integers(0, 20).flatmap(  # the share of marked partitions, in twentieths
    lambda share: st.lists(st.integers(0, 19).map(lambda x: int(x < share)), max_size=60)),
       warm=st.booleans())
@pytest.mark.usefixtures("pool_capacity")
def test_add_free_appends_exactly_the_unmarked_partitions_in_order(
        marks: list[int], warm: bool) -> None:
    """Whatever the share of free partitions (all, many, few, none) and whether the pool
    holds the topic, `add_free` appends the partitions whose mark is 0, in partition order,
    after what ``out`` held."""
    shared_pool.clear()
    if warm:
        shared_pool.partitions("t", len(marks))
    out: list[TopicPartition] = [("before", 0)]
    add_free(out, "t", bytearray(marks))
    assert out == [("before", 0)] + [tp for tp, m in zip(expected("t", len(marks)), marks,
                                                         strict=True) if not m]


def test_add_free_makes_and_holds_a_topic_only_when_most_of_it_is_free(
        pool_capacity: None) -> None:
    """A reassignment's few free partitions on an empty pool are made one by one (the pool
    stays empty); a first assignment's topic is made once and held."""
    shared_pool.clear()
    heard: list[int] = []
    few = bytearray([1] * 100)
    few[7] = few[42] = 0
    out: list[TopicPartition] = []
    add_free(out, "kept", few, heard.append)
    assert out == [("kept", 7), ("kept", 42)]
    assert shared_pool.keys() == [] and heard == []
    add_free(out, "new", bytearray(100), heard.append)
    assert out[2:] == list(expected("new", 100))
    assert shared_pool.keys() == [("new", 100)] and heard == [100]


def _answers(name: str, group: Group) -> dict[str, list[TopicPartition]]:
    subs = (subscriptions(group, name == "cooperative-sticky") if "sticky" in name else
            {m: Subscription(list(ts), group_instance_id=group.instance_ids[m],
                             rack_id=group.racks[m]) for m, ts in group.topics.items()})
    answer = make_assignor(name).assign(group.cluster, subs)
    return {m: a.partitions for m, a in answer.items()}


@settings(max_examples=150, deadline=None)
@given(group=groups(), name=st.sampled_from(
    ["sticky", "cooperative-sticky", "range", "roundrobin"]))
@pytest.mark.usefixtures("pool_capacity")
def test_answers_are_equal_with_a_cold_a_warm_and_a_thrashing_pool(
        group: Group, name: str) -> None:
    """The pool only saves work: the same answer from an empty pool, from the pool that
    answer filled, after other metadata with the same topic names filled it, and from a pool
    too small to hold any topic."""
    shared_pool.clear()
    cold = _answers(name, group)
    assert _answers(name, group) == cold  # warm
    shared_pool.clear()
    for topic, count in group.cluster.partitions.items():
        shared_pool.partitions(topic, count + 1)  # stale counts of the same names
    assert _answers(name, group) == cold
    shared_pool.clear()
    shared_pool.capacity = 0
    assert _answers(name, group) == cold


def test_a_warm_first_assignment_hands_out_the_pools_tuples(pool_capacity: None) -> None:
    """Two metadata snapshots with equal topics: the second answer of every builtin reuses
    the first's tuples (no new tuple per partition), and every partition is handed out
    once."""
    names = [f"topic-{t}" for t in range(6)]
    members = {f"c{i}": Subscription(list(names)) for i in range(4)}
    count = POOLED_FROM + 4
    shared_pool.clear()
    for name in ("sticky", "cooperative-sticky", "range", "roundrobin"):
        first = make_assignor(name).assign(Cluster(dict.fromkeys(names, count)), members)
        second = make_assignor(name).assign(Cluster(dict.fromkeys(names, count)), members)
        for member, assignment in first.items():
            again = second[member].partitions
            assert again == assignment.partitions
            assert all(a is b for a, b in zip(again, assignment.partitions, strict=True))
        handed = sorted(tp for a in second.values() for tp in a.partitions)
        assert handed == sorted(tp for t in names for tp in expected(t, count))


def test_small_topics_are_made_afresh_and_not_held(pool_capacity: None) -> None:
    shared_pool.clear()
    small = topic_partitions("small", POOLED_FROM - 1)
    assert small == expected("small", POOLED_FROM - 1)
    assert topic_partitions("small", POOLED_FROM - 1) is not small
    assert topic_partitions("large", POOLED_FROM) is topic_partitions("large", POOLED_FROM)
    assert shared_pool.keys() == [("large", POOLED_FROM)]


RUN = (("b", 20), ("a", 30), ("c", 17))


def test_a_run_is_every_partition_of_its_topics_in_their_order() -> None:
    pool = PartitionPool()
    run = pool.run(RUN)
    assert run == expected("b", 20) + expected("a", 30) + expected("c", 17)
    assert all(a is b for a, b in zip(run[20:50], pool.partitions("a", 30), strict=True))


def test_the_same_topics_and_counts_again_get_the_held_run_and_make_nothing() -> None:
    pool = PartitionPool()
    heard: list[int] = []
    run = pool.run(RUN, heard.append)
    assert pool.run(tuple(RUN), heard.append) is run
    assert heard == [20, 30, 17]
    assert pool.run((("b", 20), ("a", 31), ("c", 17))) is not run  # a count changed
    assert pool.run((("a", 30), ("b", 20), ("c", 17))) is not run  # another order


def test_a_held_run_keeps_its_topics_recently_used() -> None:
    pool = PartitionPool(capacity=100)
    pool.run(RUN)  # 67 partitions held
    pool.partitions("d", 20)
    pool.run(RUN)  # a hit: b, a and c are again the most recent
    pool.partitions("e", 20)  # 107 > 100: d goes, not b
    assert pool.keys() == [("b", 20), ("a", 30), ("c", 17), ("e", 20)]


def test_a_run_is_dropped_with_the_first_entry_dropped() -> None:
    pool = PartitionPool(capacity=100)
    run = pool.run(RUN)
    pool.partitions("d", 40)  # 107 > 100: b goes, and the run with it
    again = pool.run(RUN)
    assert again == run and again is not run


def test_a_run_over_the_capacity_or_after_clear_is_made_again() -> None:
    pool = PartitionPool(capacity=50)
    run = pool.run(RUN)  # 67 > 50: not every topic stays held
    assert pool.run(RUN) is not run
    small = PartitionPool()
    run = small.run(RUN)
    small.clear()
    assert small.run(RUN) is not run


def test_partition_run_makes_small_runs_afresh_and_holds_large_ones(
        pool_capacity: None) -> None:
    shared_pool.clear()
    small = (("s", RUN_POOLED_FROM - 1),)
    assert partition_run(small) == expected("s", RUN_POOLED_FROM - 1)
    assert partition_run(small) is not partition_run(small)
    assert shared_pool.keys() == [("s", RUN_POOLED_FROM - 1)]  # a pooled topic, no run
    large = (("s", RUN_POOLED_FROM - 1), ("t", 1))
    assert partition_run(large) is partition_run(large)
