"""Deviation D2: members with an empty subscription (``docs/explanation/model.md``).

Kafka's constrained builder counts such a member in its quotas and may hand it partitions.
groupcheck moves those to a subscriber (the valid previous owner first) before the
cooperative assignor withholds anything, and only where Kafka's own answer would keep a
partition on the non-subscriber.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.impl.assign_op import run_assign
from groupcheck.properties import assignment as A

Request = dict[str, Any]
Assignment = dict[str, list[tuple[str, int]]]
MAX_FOLLOW_UPS = 2


def _request(assignor: str, partitions: dict[str, int], members: dict[str, Any]) -> Request:
    return {"op": "assign", "assignor": assignor, "mode": "client",
            "partitions": partitions, "members": members}


def _assignment(response: dict[str, Any]) -> Assignment:
    return {m: [(t, p) for t, p in ps] for m, ps in response["assignment"].items()}


def _follow_ups(request: Request) -> tuple[Assignment, int]:
    """Cooperative rounds: each member now owns what it was given, at the new generation,
    until nothing is left unassigned or MAX_FOLLOW_UPS follow-ups ran."""
    subs = {m: v["topics"] for m, v in request["members"].items()}
    response = run_assign(request)
    result = _assignment(response)
    rounds = 0
    while A.complete(result, subs, request["partitions"]) and rounds < MAX_FOLLOW_UPS:
        rounds += 1
        generation = response["generation"]
        members = {m: {**v, "owned": [list(tp) for tp in result[m]], "generation": generation}
                   for m, v in request["members"].items()}
        request = {**request, "members": members, "newGeneration": generation + 1}
        response = run_assign(request)
        result = _assignment(response)
    return result, rounds


def test_sticky_keeps_a_balanced_assignment_beside_an_empty_subscription() -> None:
    """I4a on sticky: Kafka hands t-2 to the empty member Aa; D2 gives it back to its valid
    previous owner c (as loaded as BB), not to BB, the lowest id."""
    members = {"Aa": {"topics": [], "owned": [], "generation": 1},
               "c": {"topics": ["t"], "owned": [["t", 0], ["t", 2]], "generation": 1},
               "BB": {"topics": ["t"], "owned": [["t", 1]], "generation": 1}}
    result = _assignment(run_assign(_request("sticky", {"t": 3}, members)))
    assert {m: set(ps) for m, ps in result.items()} == {
        "Aa": set(), "c": {("t", 0), ("t", 2)}, "BB": {("t", 1)}}


def test_cooperative_settles_beside_an_empty_subscription() -> None:
    """I11: m1 owns three of four partitions; Kafka revokes t0-1 for the empty member m0
    and hands it t1-1 too. Before, D2 ran after the withholding and the group flipped
    between t0-1 and t1-1 forever; now one answer is complete and stays so."""
    members = {"m0": {"topics": [], "owned": [], "generation": 3},
               "m1": {"topics": ["t0", "t1"], "owned": [["t0", 0], ["t1", 0], ["t0", 1]],
                      "generation": 3}}
    result, rounds = _follow_ups(_request("cooperative-sticky", {"t0": 2, "t1": 2}, members))
    assert not A.complete(result, {"m0": [], "m1": ["t0", "t1"]}, {"t0": 2, "t1": 2})
    assert rounds == 0


def test_cooperative_withholding_stays_kafkas_when_it_hides_the_misplacement() -> None:
    """Where Kafka withholds every partition it gave the empty member (its answer keeps I1
    and I2), the answer stays Kafka's: the owner keeps its quota, the rest comes later."""
    members = {"BBAa": {"topics": [], "owned": [], "generation": 2},
               "BBBB": {"topics": [], "owned": [], "generation": 2},
               "AaBB": {"topics": ["orders"], "owned": [["orders", p] for p in range(4)],
                        "generation": 2}}
    result = _assignment(run_assign(_request("cooperative-sticky", {"orders": 4}, members)))
    assert result == {"BBAa": [], "BBBB": [], "AaBB": [("orders", 0), ("orders", 1)]}


@st.composite
def groups_with_empty_members(draw: st.DrawFn) -> Request:
    """A cooperative group where some members subscribe to nothing, owning a random valid
    previous assignment at one generation."""
    topics = [f"t{i}" for i in range(draw(st.integers(1, 3)))]
    partitions = {t: draw(st.integers(1, 6)) for t in topics}
    ids = draw(st.lists(st.sampled_from(["Aa", "BB", "c", "m0", "m1", "AaAa", "BBBB"]),
                        min_size=2, max_size=5, unique=True))
    empty = draw(st.sets(st.sampled_from(ids), min_size=1, max_size=len(ids) - 1))
    subs = {m: [] if m in empty else draw(st.lists(st.sampled_from(topics), min_size=1,
                                                   unique=True)) for m in ids}
    owned: dict[str, list[list[Any]]] = {m: [] for m in ids}
    for t, n in partitions.items():
        takers = [m for m in ids if t in subs[m]]
        for p in range(n):
            holder = draw(st.sampled_from([None, *takers]))
            if holder is not None:
                owned[holder].append([t, p])
    generation = draw(st.integers(1, 4))
    return _request("cooperative-sticky", partitions,
                    {m: {"topics": subs[m], "owned": owned[m], "generation": generation}
                     for m in ids})


@settings(max_examples=150, deadline=None)
@given(groups_with_empty_members())
def test_cooperative_with_empty_members_is_complete_within_the_follow_ups(
        request: Request) -> None:
    """I2 and I11 beside empty subscriptions: after at most MAX_FOLLOW_UPS follow-up
    rebalances every subscribed partition is assigned, once, to a subscriber."""
    subs = {m: v["topics"] for m, v in request["members"].items()}
    result, _ = _follow_ups(request)
    assert not A.exclusive_ownership(result)
    assert not A.valid_targets(result, subs, request["partitions"])
    assert not A.complete(result, subs, request["partitions"])


def test_d2_returns_every_partition_to_its_owner_whatever_the_order() -> None:
    """Audit seed 0, scenario 73574: a balanced sticky assignment (7, 7, 7, 6 of t0-0..26)
    beside an empty member c3. Kafka's builder gives c3 five partitions of three owners; D2
    must give every one back (I4a), not let the first returns push the owner of a later one
    over the least-loaded subscriber."""
    owned = {"c0": [0, 4, 6, 9, 11, 12, 25], "c1": [2, 3, 14, 24, 16, 17, 26],
             "c2": [1, 5, 7, 10, 15, 18, 23], "c3": [], "c4": [8, 13, 19, 22, 20, 21]}
    request = {"op": "assign", "assignor": "sticky", "mode": "client",
               "partitions": {"t0": 27},
               "members": {m: {"topics": ["t0"] if ps else [],
                               "owned": [["t0", p] for p in ps], "generation": 3}
                           for m, ps in owned.items()}}
    got = run_assign(request)["assignment"]
    assert {m: sorted(p for _, p in ps) for m, ps in got.items()} == \
        {m: sorted(ps) for m, ps in owned.items()}
