"""`StickyAssignor.resolved_input` is the key `AssignSession` shares leader runs by: equal
keys must mean equal assignments, and what the key leaves out (older claimants'
generation numbers, older claimants of a partition on a topic fewer than two members
take) must not matter. Random three-member groups with differing subscriptions, where
the general builder reads the older claims (KIP-341, KAFKA-14639)."""

from __future__ import annotations

from collections.abc import Hashable

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.impl.assignors.sticky import StickyAssignor
from groupcheck.impl.errors import AssignorError
from groupcheck.impl.types import Cluster, Subscription, TopicPartition
from groupcheck.impl.user_data import encode_sticky_user_data

CLUSTER = Cluster({"t": 4, "u": 3, "v": 2})
PARTITIONS: list[TopicPartition] = ([("t", p) for p in range(4)] + [("u", p) for p in range(3)]
                                    + [("v", p) for p in range(2)])
TOPIC_CHOICES = [["t"], ["t", "u"], ["u"], ["u", "v"], ["t", "v"]]

Member = tuple[list[str], int | None, list[TopicPartition]]
Group = dict[str, Member]

member = st.tuples(st.sampled_from(TOPIC_CHOICES), st.one_of(st.none(), st.integers(0, 5)),
                   st.lists(st.sampled_from(PARTITIONS), max_size=5, unique=True))
groups = st.fixed_dictionaries({m: member for m in "abc"}).filter(
    lambda g: len({tuple(topics) for topics, _, _ in g.values()}) > 1
    and any(generation is not None for _, generation, _ in g.values()))


def _subscriptions(group: Group) -> dict[str, Subscription]:
    return {m: Subscription(list(topics), encode_sticky_user_data(list(claims), generation))
            for m, (topics, generation, claims) in group.items()}


def _key(group: Group) -> Hashable:
    return StickyAssignor().resolved_input(CLUSTER, _subscriptions(group))


def _assignment(group: Group) -> object:
    """The leader's assignment, or the error it raises (Kafka's own, emulated)."""
    try:
        return {m: a.partitions for m, a in StickyAssignor().assign(
            CLUSTER, _subscriptions(group)).items()}
    except AssignorError as error:
        return type(error).__name__, str(error)


def _newest(group: Group) -> int:
    return max(generation for _, generation, _ in group.values() if generation is not None)


def _older(group: Group) -> list[str]:
    newest = _newest(group)
    return [m for m, (_, generation, _) in group.items()
            if generation is None or generation < newest]


@settings(max_examples=300, deadline=None)
@given(groups, st.data())
def test_older_generations_renumbered_in_order_resolve_alike(group: Group,
                                                             data: st.DataObject) -> None:
    """Property: giving the older members other generations below the newest, in the same
    order (ties kept), changes neither the key nor the assignment."""
    newest = _newest(group)
    olds = sorted({g for _, g, _ in group.values() if g is not None and g < newest})
    below_newest = st.integers(0, max(newest - 1, 0))
    renumbered = sorted(data.draw(st.lists(below_newest, min_size=len(olds),
                                           max_size=len(olds), unique=True)))
    to_new = dict(zip(olds, renumbered, strict=True))
    variant = {m: (topics, to_new.get(g, g) if g is not None else None, claims)
               for m, (topics, g, claims) in group.items()}
    assert _key(variant) == _key(group)
    assert _assignment(variant) == _assignment(group)


@settings(max_examples=600, deadline=None)
@given(groups, st.data())
def test_equal_keys_after_an_older_generation_changes_mean_equal_assignments(
        group: Group, data: st.DataObject) -> None:
    """Property: when an older member's generation changes (to any other, or to none), its
    claims stay where they are but the older claimant of a partition may change; whenever
    the key is unchanged, so is the assignment (a key that left out an older claimant the
    builder reads fails here)."""
    older = _older(group)
    if not older:
        return
    who = data.draw(st.sampled_from(older))
    topics, _, claims = group[who]
    generation = data.draw(st.one_of(st.none(), st.integers(0, 5)))
    variant = {**group, who: (topics, generation, claims)}
    if _key(variant) == _key(group):
        assert _assignment(variant) == _assignment(group)


def test_an_older_claimant_is_keyed_with_whether_it_reported_a_generation() -> None:
    """b left topic t but claims t-0 from an older generation; t has two takers (a and c).
    Whether b reported its generation (0) or none changes the assignment here, so the two
    keys must differ (a key without the reported flag, or only on topics three members
    take, makes them equal)."""
    group: Group = {"a": (["t"], None, []), "b": (["u"], 0, [("t", 0)]),
                    "c": (["t"], 1, [("t", 0), ("t", 1), ("t", 2)])}
    unreported: Group = {**group, "b": (["u"], None, [("t", 0)])}
    assert _assignment(unreported) != _assignment(group)
    assert _key(unreported) != _key(group)
