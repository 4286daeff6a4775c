"""The sticky and cooperative-sticky assignors against Kafka's recorded answers.

Every sticky/cooperative-sticky line of ``assign.jsonl`` is reproduced list for list (member
order, partition order, next user data), errors with Kafka's exception class; on lines
marked ``kafka_bug`` the answer must instead be an assignment keeping I1 and I2. Some chains
are also driven step by step, each step fed our own previous answer. The spec's named
scenarios (AbstractStickyAssignorTest) are checked as written there.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

from groupcheck.impl.assignors.sticky import CooperativeStickyAssignor, StickyAssignor
from groupcheck.impl.assignors.sticky_common import member_order
from groupcheck.impl.types import Cluster, Subscription, TopicPartition
from groupcheck.impl.user_data import encode_sticky_user_data

from helpers.sticky_vectors import STICKY_NAMES, run
from helpers.vectors import line_id, load

LINES = [(i, x) for i, x in enumerate(load("assign.jsonl"))
         if x["request"]["assignor"] in STICKY_NAMES]


def i1_i2_problems(request: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """I1 (each partition at most once) and I2 (in the metadata, to a subscriber)."""
    if "error" in got:
        return [f"answered with an error: {got['error']}"]
    seen: collections.Counter[tuple[str, int]] = collections.Counter()
    problems = []
    counts = request["partitions"]
    for member, partitions in got["assignment"].items():
        topics = set(request["members"].get(member, {}).get("topics") or [])
        for t, p in partitions:
            seen[(t, p)] += 1
            if not 0 <= p < counts.get(t, 0):
                problems.append(f"I2: {t}-{p} is not in the metadata")
            if t not in topics:
                problems.append(f"I2: {t}-{p} given to {member}, not a subscriber")
    problems += [f"I1: {t}-{p} assigned {n} times" for (t, p), n in seen.items() if n > 1]
    return problems


def check(line: dict[str, Any], got: dict[str, Any]) -> None:
    expected = line["response"]
    if "kafka_bug" in line:
        assert not i1_i2_problems(line["request"], got), (line["kafka_bug"], got)
    elif "error" in expected:
        assert "error" in got, got
        assert expected["errorClass"].endswith("." + got["errorClass"]), got["error"]
    else:
        assert "error" not in got, got["error"]
        assert list(got["assignment"]) == list(expected["assignment"]), "member order"
        assert got["assignment"] == expected["assignment"]
        assert got["userData"] == expected["userData"]


@pytest.mark.parametrize("index,line", LINES, ids=[line_id(i, x) for i, x in LINES])
def test_line_matches_kafka(index: int, line: dict[str, Any]) -> None:
    check(line, run(line["request"]))


def _chains() -> dict[str, list[dict[str, Any]]]:
    chains: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for _, line in LINES:
        if "chain" in line:
            chains[line["chain"]["id"]].append(line)
    return {cid: sorted(steps, key=lambda x: x["chain"]["step"])
            for cid, steps in chains.items() if len(steps) >= 4}


CHAINS = sorted(_chains().items())[::12]


@pytest.mark.parametrize("chain_id,steps", CHAINS, ids=[c for c, _ in CHAINS])
def test_chain_driven_step_by_step(chain_id: str, steps: list[dict[str, Any]]) -> None:
    """Each step's carried-over members own exactly what our previous step gave them."""
    previous: dict[str, Any] | None = None
    previous_generation = 0
    for line in steps:
        request = line["request"]
        if previous is not None and "assignment" in previous:
            for member, spec in request["members"].items():
                if spec.get("generation") == previous_generation and member in \
                        previous["assignment"] and line["case"] != "assign/chain:stale-owned":
                    assert spec.get("owned") == previous["assignment"][member], member
        got = run(request)
        check(line, got)
        previous = got
        previous_generation = line["response"].get("generation", previous_generation)


# -- the spec's named scenarios -----------------------------------------------------------

def _sticky_member(topics: list[str], owned: list[TopicPartition], generation: int
                   ) -> Subscription:
    return Subscription(topics, encode_sticky_user_data(owned, generation), [], generation)


def test_add_remove_two_consumers_two_topics() -> None:
    """testAddRemoveTwoConsumersTwoTopics (KAFKA-12464): exact lists and transfers.

    Kafka's ids ``consumer1..4`` sit in HashMap buckets 12, 11, 10, 9, so step 1 of the
    constrained builder visits them as consumer4, consumer3, consumer2, consumer1.
    """
    c1, c2, c3, c4 = (f"consumer{i}" for i in range(1, 5))
    assert member_order([c1, c2, c3, c4]) == [c4, c3, c2, c1]
    cluster = Cluster({"t1": 3, "t2": 4})
    topics = ["t1", "t2"]
    first = StickyAssignor().assign(cluster, {c1: Subscription(topics),
                                              c2: Subscription(topics)})
    assert first[c1].partitions == [("t1", 0), ("t1", 2), ("t2", 1), ("t2", 3)]
    assert first[c2].partitions == [("t1", 1), ("t2", 0), ("t2", 2)]

    assignor = StickyAssignor()
    second = assignor.assign(cluster, {
        c1: _sticky_member(topics, first[c1].partitions, 1),
        c2: _sticky_member(topics, first[c2].partitions, 1),
        c3: Subscription(topics), c4: Subscription(topics)})
    assert second[c1].partitions == [("t1", 0), ("t2", 1)]
    assert second[c2].partitions == [("t2", 0), ("t1", 1)]
    assert second[c3].partitions == [("t1", 2), ("t2", 3)]
    assert second[c4].partitions == [("t2", 2)]
    assert assignor.partitions_transferring_ownership == {
        ("t1", 2): c3, ("t2", 3): c3, ("t2", 2): c4}

    third = StickyAssignor().assign(cluster, {
        c3: _sticky_member(topics, second[c3].partitions, 2),
        c4: _sticky_member(topics, second[c4].partitions, 2)})
    assert third[c3].partitions == [("t1", 2), ("t2", 3), ("t1", 0), ("t2", 1)]
    assert third[c4].partitions == [("t2", 2), ("t1", 1), ("t2", 0)]


def test_poor_round_robin_assignment_scenario() -> None:
    """testPoorRoundRobinAssignmentScenario: the general builder on a fresh group."""
    cluster = Cluster({"t1": 2, "t2": 1, "t3": 2, "t4": 1, "t5": 2})
    everything = ["t1", "t2", "t3", "t4", "t5"]
    odd = ["t1", "t3", "t5"]
    for make in (StickyAssignor, CooperativeStickyAssignor):
        assignor = make()
        got = assignor.assign(cluster, {"c1": Subscription(everything), "c2": Subscription(odd),
                                        "c3": Subscription(odd),
                                        "c4": Subscription(everything)})
        assert got["c1"].partitions == [("t2", 0), ("t3", 0)]
        assert got["c2"].partitions == [("t1", 0), ("t3", 1)]
        assert got["c3"].partitions == [("t1", 1), ("t5", 0)]
        assert got["c4"].partitions == [("t4", 0), ("t5", 1)]
        assert assignor.partitions_transferring_ownership is None


def test_max_generation_outlives_a_rebalance() -> None:
    """KIP-341's ``maxGeneration`` is an instance field never reset between calls: a leader
    that saw generation 9 treats later generation-5 claims as old (previous owners only)."""
    cluster = Cluster({"t": 2})
    leader = StickyAssignor()
    leader.assign(cluster, {"a": _sticky_member(["t"], [("t", 0)], 9)})
    assert leader.max_generation == 9
    leader.assign(cluster, {"a": _sticky_member(["t"], [("t", 0)], 5),
                            "b": Subscription(["t"])})
    assert leader.max_generation == 9
