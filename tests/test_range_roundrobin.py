"""The range and roundrobin assignors against Kafka's Java client.

* every range/roundrobin line of ``assign.jsonl`` reproduced exactly (member order and lists);
* the spec's named examples;
* Hypothesis properties: I1 (no partition twice), I2 (every partition of a subscribed topic
  with metadata assigned exactly once, only to a subscriber) and each assignor's balance.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.impl.assignors.common import member_info_key
from groupcheck.impl.assignors.range import RangeAssignor
from groupcheck.impl.assignors.roundrobin import RoundRobinAssignor
from groupcheck.impl.errors import AssignorError
from groupcheck.impl.javahash import java_string_key
from groupcheck.impl.types import Assignment, Cluster, Subscription, TopicPartition

from helpers.vectors import line_id, load

ASSIGNORS = {"range": RangeAssignor, "roundrobin": RoundRobinAssignor}
LINES = [(i, x) for i, x in enumerate(load("assign.jsonl"))
         if x["request"]["assignor"] in ASSIGNORS]


def client_subscriptions(request: dict[str, Any]) -> dict[str, Subscription]:
    """Each member's subscription as an eager client sends it and the leader decodes it.

    Topics are written sorted in Java ``String`` order; eager members send no owned
    partitions and these assignors no user data; versions below 3 carry no rack.
    """
    version = request.get("subscriptionVersion", 3)
    subscriptions = {}
    for member_id, member in request["members"].items():
        generation = member.get("generation")
        subscriptions[member_id] = Subscription(
            topics=sorted(member["topics"], key=java_string_key),
            user_data=None,
            owned_partitions=[],
            generation_id=generation if version >= 2 and generation is not None
            and generation >= 0 else None,
            rack_id=(member.get("rack") or None) if version >= 3 else None,
            group_instance_id=member.get("groupInstanceId"),
        )
    return subscriptions


def as_json(result: dict[str, Assignment]) -> dict[str, list[list[Any]]]:
    return {m: [[t, p] for t, p in a.partitions] for m, a in result.items()}


def _first_difference(expected: dict[str, Any], got: dict[str, Any]) -> str:
    if list(expected) != list(got):
        return f"member order: expected {list(expected)}, got {list(got)}"
    for member in expected:
        if expected[member] != got[member]:
            return f"member {member!r}: expected {expected[member]}, got {got[member]}"
    return "none"


@pytest.mark.parametrize("index,line", LINES, ids=[line_id(i, x) for i, x in LINES])
def test_vector_line_reproduced(index: int, line: dict[str, Any]) -> None:
    request = line["request"]
    assert "kafka_bug" not in line, "no range/roundrobin line is expected to carry kafka_bug"
    assert request["mode"] == "client"
    cluster = Cluster(partitions=request["partitions"], racks=request.get("racks", {}))
    got = as_json(ASSIGNORS[request["assignor"]]().assign(cluster, client_subscriptions(request)))
    expected = line["response"]["assignment"]
    assert list(got) == list(expected) and got == expected, (
        f"case {line['case']}\nrequest  {json.dumps(request)}\n"
        f"expected {json.dumps(expected)}\ngot      {json.dumps(got)}\n"
        f"first difference: {_first_difference(expected, got)}")


def _two_members_two_topics() -> tuple[Cluster, dict[str, Subscription]]:
    cluster = Cluster(partitions={"t0": 3, "t1": 3})
    subs = {c: Subscription(topics=["t0", "t1"]) for c in ("C0", "C1")}
    return cluster, subs


def test_spec_example_range() -> None:
    cluster, subs = _two_members_two_topics()
    got = {m: a.partitions for m, a in RangeAssignor().assign(cluster, subs).items()}
    assert got == {"C0": [("t0", 0), ("t0", 1), ("t1", 0), ("t1", 1)],
                   "C1": [("t0", 2), ("t1", 2)]}


def test_spec_example_roundrobin() -> None:
    cluster, subs = _two_members_two_topics()
    got = {m: a.partitions for m, a in RoundRobinAssignor().assign(cluster, subs).items()}
    assert got == {"C0": [("t0", 0), ("t0", 2), ("t1", 1)],
                   "C1": [("t0", 1), ("t1", 0), ("t1", 2)]}


def test_member_info_key_uses_utf16_order() -> None:
    """U+1F600 is a surrogate pair (0xD83D...), so Java sorts it before U+FF5A."""
    assert java_string_key("\U0001f600") < java_string_key("\uff5a")
    assert "\U0001f600" > "\uff5a"
    assert member_info_key("z", "g") < member_info_key("a", None)


class _EqualToAnything:
    """Not a topic name, though it compares equal to one."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class _TopicName(str):
    """A str subclass: still a topic name."""


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
def test_topic_names_of_a_str_subclass_are_topic_names(name: str) -> None:
    cluster = Cluster(partitions={"t": 3, "u": 2})
    plain = {"a": Subscription(topics=["t", "u"]), "b": Subscription(topics=["t"])}
    subclassed = {"a": Subscription(topics=[_TopicName("t"), "u"]),
                  "b": Subscription(topics=[_TopicName("t")])}
    expected = {m: a.partitions for m, a in ASSIGNORS[name]().assign(cluster, plain).items()}
    answer = ASSIGNORS[name]().assign(cluster, subclassed)
    assert {m: a.partitions for m, a in answer.items()} == expected


@pytest.mark.parametrize("name", sorted(ASSIGNORS))
@pytest.mark.parametrize("cluster,subs", [
    (Cluster(partitions={"t": -1}), {"a": Subscription(topics=["t"])}),
    (Cluster(partitions={"t": 2**31}), {"a": Subscription(topics=["t"])}),
    (Cluster(partitions={"t": "3"}), {"a": Subscription(topics=["t"])}),  # type: ignore[dict-item]
    (Cluster(partitions={"t": 2}), {"a": Subscription(topics="t")}),  # type: ignore[arg-type]
    (Cluster(partitions={"t": 2}, racks={"t": [["r", 3]]}),  # type: ignore[list-item]
     {"a": Subscription(topics=["t"], rack_id="r")}),
    (Cluster(partitions={"t": 2}), {"a": "not a subscription"}),
    # equal to the previous member's list, but not strings: checked all the same
    (Cluster(partitions={"t": 2}), {"a": Subscription(topics=["t"]),
                                    "b": Subscription(topics=[_EqualToAnything()])}),
])
def test_bad_input_raises_assignor_error(name: str, cluster: Cluster, subs: Any) -> None:
    with pytest.raises(AssignorError):
        ASSIGNORS[name]().assign(cluster, subs)


# ---- properties --------------------------------------------------------------------------

TOPICS = ["a", "b", "c", "\U0001f600", "\uff5a", "Aa", "BB"]
RACKS = ["r1", "r2", "r3"]


@st.composite
def groups(draw: st.DrawFn, equal: bool = False) -> tuple[Cluster, dict[str, Subscription]]:
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=5, unique=True))
    # Some subscribed topics may lack metadata; some partition counts are 0.
    counts = {t: draw(st.integers(0, 12)) for t in topics
              if draw(st.booleans()) or t == topics[0]}
    racks: dict[str, list[list[str]]] = {}
    if draw(st.booleans()):
        racks = {t: [draw(st.lists(st.sampled_from(RACKS), max_size=2, unique=True))
                     for _ in range(n)] for t, n in counts.items()}
    member_ids = draw(st.lists(st.text("abAB\U0001f600\uff5a", min_size=1, max_size=4),
                               min_size=1, max_size=8, unique=True))
    subs: dict[str, Subscription] = {}
    shared = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
    for member in member_ids:
        mine = shared if equal else draw(st.lists(st.sampled_from(topics), unique=True))
        subs[member] = Subscription(
            topics=list(mine),
            rack_id=draw(st.none() | st.sampled_from(RACKS)),
            group_instance_id=draw(st.none() | st.sampled_from(["g1", "g2", "g3"])))
    return Cluster(partitions=counts, racks=racks), subs


def check_i1_i2(cluster: Cluster, subs: dict[str, Subscription],
                result: dict[str, Assignment]) -> None:
    assert list(result) and set(result) == set(subs)
    seen = Counter(tp for a in result.values() for tp in a.partitions)
    assert all(n == 1 for n in seen.values()), "I1: a partition assigned twice"
    expected: set[TopicPartition] = {
        (t, p) for s in subs.values() for t in s.topics
        for p in range(cluster.partitions.get(t, 0))}
    assert set(seen) == expected, "I2: missing partitions or partitions outside the metadata"
    for member, a in result.items():
        assert all(t in subs[member].topics for t, _ in a.partitions), "I2: not a subscriber"


@settings(max_examples=150, deadline=None)
@given(groups())
def test_range_valid_and_balanced_per_topic(group: tuple[Cluster, dict[str, Subscription]]
                                            ) -> None:
    """I1 and I2 hold, and per topic the subscribers' counts differ by at most 1."""
    cluster, subs = group
    result = RangeAssignor().assign(cluster, subs)
    check_i1_i2(cluster, subs, result)
    for topic in cluster.partitions:
        holders = [m for m, s in subs.items() if topic in s.topics]
        counts = [sum(1 for t, _ in result[m].partitions if t == topic) for m in holders]
        assert not counts or max(counts) - min(counts) <= 1


@settings(max_examples=150, deadline=None)
@given(groups())
def test_roundrobin_valid(group: tuple[Cluster, dict[str, Subscription]]) -> None:
    """I1 and I2 hold for any subscriptions; each list is in (topic, partition) Java order."""
    cluster, subs = group
    result = RoundRobinAssignor().assign(cluster, subs)
    check_i1_i2(cluster, subs, result)
    for a in result.values():
        keys = [(java_string_key(t), p) for t, p in a.partitions]
        assert keys == sorted(keys)


@settings(max_examples=150, deadline=None)
@given(groups(equal=True))
def test_roundrobin_balanced_with_equal_subscriptions(
        group: tuple[Cluster, dict[str, Subscription]]) -> None:
    """With equal subscriptions, I1 and I2 hold and member counts differ by at most 1."""
    cluster, subs = group
    result = RoundRobinAssignor().assign(cluster, subs)
    check_i1_i2(cluster, subs, result)
    sizes = [len(a.partitions) for a in result.values()]
    assert max(sizes) - min(sizes) <= 1
