"""The balance contracts (I3) and user-data hygiene (I12) as predicates over plain data."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from groupcheck.impl.assign_op import run_assign
from groupcheck.impl.user_data import encode_cooperative_user_data, encode_sticky_user_data
from groupcheck.properties.balance import (
    contract_of,
    imbalance,
    judge_balance,
    range_balanced,
    roundrobin_balanced,
)
from groupcheck.properties.user_data_rules import (
    claim_hygiene,
    read_sticky,
    user_data_hygiene,
)

TOPICS = ("t0", "t1", "t2")
partition_counts = st.dictionaries(st.sampled_from(TOPICS), st.integers(0, 6), min_size=1)


@st.composite
def groups(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, list[str]]]:
    partitions = draw(partition_counts)
    members = draw(st.integers(1, 6))
    subs = {f"m{i}": draw(st.lists(st.sampled_from(sorted(partitions)), unique=True))
            for i in range(members)}
    return partitions, subs


def _answer(assignor: str, partitions: dict[str, int],
            subs: dict[str, list[str]]) -> dict[str, list[tuple[str, int]]]:
    request = {"assignor": assignor, "partitions": partitions,
               "members": {m: {"topics": ts} for m, ts in subs.items()}}
    return {m: [(t, p) for t, p in ps] for m, ps in run_assign(request)["assignment"].items()}


def test_kafkas_names_carry_their_own_rule_and_an_undeclared_assignor_the_strictest() -> None:
    assert contract_of("range", None)[0] == "range"
    assert contract_of("roundrobin", None)[0] == "roundrobin"
    assert contract_of("cooperative-sticky", None)[0] == "sticky"
    contract, why = contract_of("my-assignor", None)
    assert contract == "sticky" and "not declared" in why
    assert contract_of("my-assignor", "none") == ("none", "declared (balance = 'none')")


@given(groups())
def test_kafkas_range_keeps_the_range_contract(group) -> None:
    """Property: Kafka's RangeAssignor splits each topic over its subscribers within one."""
    partitions, subs = group
    assert range_balanced(_answer("range", partitions, subs), subs, partitions) == []


@given(groups())
def test_kafkas_roundrobin_keeps_the_roundrobin_contract(group) -> None:
    """Property: with equal subscriptions RoundRobinAssignor's sizes differ by at most one
    (with unequal ones it promises nothing)."""
    partitions, subs = group
    answer = _answer("roundrobin", partitions, subs)
    assert roundrobin_balanced(answer, subs, partitions) == []


def test_a_whole_topic_to_one_member_breaks_range_and_isbalanced() -> None:
    subs = {"a": ["t0"], "b": ["t0"]}
    whole = {"a": [("t0", 0), ("t0", 1), ("t0", 2)], "b": []}
    assert range_balanced(whole, subs, {"t0": 3})[0].startswith("I3: t0's 3 partitions")
    assert judge_balance("sticky", whole, subs, {"t0": 3})
    assert judge_balance("none", whole, subs, {"t0": 3}) == []
    assert imbalance(whole, subs) == 3


def test_roundrobin_judges_only_equal_subscriptions() -> None:
    uneven = {"a": [("t0", 0), ("t0", 1), ("t1", 0)], "b": []}
    assert roundrobin_balanced(uneven, {"a": ["t0", "t1"], "b": ["t0", "t1"]},
                               {"t0": 2, "t1": 1})
    assert roundrobin_balanced(uneven, {"a": ["t0", "t1"], "b": ["t1"]},
                               {"t0": 2, "t1": 1}) == []


partitions_st = st.lists(st.tuples(st.sampled_from(("t0", "t1", "t\u00e9")), st.integers(0, 50)),
                         max_size=12)


@given(partitions_st, st.integers(0, 2**31 - 1))
def test_kafkas_sticky_layout_carries_exactly_what_was_given(parts, generation) -> None:
    """Property: the v1 layout written by groupcheck's StickyAssignor codec decodes, with
    the spec's own reader, to the same partitions and generation (I12 holds)."""
    data = encode_sticky_user_data(list(parts), generation)
    assert sorted(read_sticky(data)[0]) == sorted(parts)
    assert user_data_hygiene("sticky", data, parts, generation) == []


@given(st.integers(-1, 2**31 - 1))
def test_cooperative_layout_carries_the_generation(generation) -> None:
    data = encode_cooperative_user_data(generation)
    assert user_data_hygiene("cooperative-sticky", data, [], generation) == []
    assert user_data_hygiene("cooperative-sticky", data, [], generation + 1)


def test_user_data_without_the_generation_or_with_another_breaks_i12() -> None:
    given = [("t0", 0), ("t0", 1)]
    v0 = encode_sticky_user_data(given, None)
    assert "carries no generation" in user_data_hygiene("sticky", v0, given, 3)[0]
    assert user_data_hygiene("sticky", v0, given, 3, with_generation=False) == []
    stale = encode_sticky_user_data(given, -1)
    assert "says generation -1" in user_data_hygiene("sticky", stale, given, 3)[0]
    other = encode_sticky_user_data([("t0", 2)], 3)
    assert "claims t0-2, the member was given t0-0 t0-1" in \
        user_data_hygiene("sticky", other, given, 3)[0]
    assert "does not decode" in user_data_hygiene("sticky", struct.pack(">i", 5), given, 3)[0]
    assert user_data_hygiene("sticky", None, given, 3)[0].startswith("I12: sticky user data "
                                                                     "is empty")
    assert user_data_hygiene("my-assignor", b"anything", given, 3) == []


def test_claims_travel_with_a_generation_never_older_than_given() -> None:
    owned = [("t0", 0)]
    assert claim_hygiene("c1", owned, 4, 4) == []
    assert claim_hygiene("c1", owned, 5, 4) == []  # joined a newer generation, sync failed
    assert "with no generation" in claim_hygiene("c1", owned, -1, 4)[0]
    assert "with generation 3" in claim_hygiene("c1", owned, 3, 4)[0]
    assert claim_hygiene("c1", [], -1, 4) == []
