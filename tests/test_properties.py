"""The invariant predicates of `properties/` accept what they should and reject the rest."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from groupcheck.properties import assignment as A
from groupcheck.properties import membership as M

T = [("t", 0), ("t", 1), ("t", 2)]


def test_exclusive_ownership_names_the_partition_and_both_owners() -> None:
    assert A.exclusive_ownership({"a": T[:2], "b": T[2:]}) == []
    problems = A.exclusive_ownership({"a": T[:2], "b": [("t", 1)]})
    assert problems == ["I1: t-1 assigned to a, b"]


def test_complete_flags_missing_foreign_and_unsubscribed_partitions() -> None:
    subs = {"a": ["t"], "b": ["t"]}
    assert A.complete({"a": T[:2], "b": T[2:]}, subs, {"t": 3}) == []
    assert any("owned by nobody" in p for p in A.complete({"a": T[:1], "b": []}, subs, {"t": 3}))
    assert any("not in the metadata" in p
               for p in A.complete({"a": T + [("t", 3)], "b": []}, subs, {"t": 3}))
    assert any("does not subscribe" in p
               for p in A.complete({"a": T, "b": [("u", 0)]}, subs, {"t": 3, "u": 1}))


def test_balanced_follows_kafkas_is_balanced_rule() -> None:
    """Unequal counts are fine when the lighter member cannot take the heavier's topics."""
    subs = {"a": ["t"], "b": ["u"]}
    parts = {"t": 1, "u": 4}
    assert A.balanced({"a": [("t", 0)], "b": [("u", i) for i in range(4)]}, subs, parts) == []
    subs2 = {"a": ["t"], "b": ["t"]}
    assert A.balanced({"a": [], "b": T}, subs2, {"t": 3}) != []


@st.composite
def _groups(draw: st.DrawFn) -> tuple[dict[str, list[tuple[str, int]]], dict[str, list[str]],
                                      dict[str, int]]:
    """Members a..d with any topics of t, u, v (metadata may lack one), holding any
    partitions, some outside the metadata, some twice."""
    members = ["a", "b", "c", "d"][:draw(st.integers(1, 4))]
    partitions = draw(st.dictionaries(st.sampled_from("tuv"), st.integers(0, 4)))
    subs = {m: draw(st.lists(st.sampled_from("tuvw"), max_size=3)) for m in members}
    tps = st.tuples(st.sampled_from("tuv"), st.integers(-1, 5))
    held = {m: draw(st.lists(tps, max_size=8)) for m in members}
    return held, subs, partitions


def _brute_force_could_take(held: dict[str, list[tuple[str, int]]],
                            subs: dict[str, list[str]], partitions: dict[str, int]) -> bool:
    sizes = {m: len(ps) for m, ps in held.items()}
    return any(other != m and sizes[m] + 1 < sizes[other]
               for m, topics in subs.items() for t in topics
               for p in range(partitions.get(t, 0))
               for other, ps in held.items() if (t, p) in ps)


@given(_groups())
def test_balanced_finds_a_taker_exactly_when_one_exists(
        group: tuple[dict[str, list[tuple[str, int]]], dict[str, list[str]],
                     dict[str, int]]) -> None:
    """I3 has a violation exactly when some member could take a partition of one of its
    topics from another holding at least two more (the one-pass check agrees with the
    definition on every group)."""
    held, subs, partitions = group
    sizes = [len(ps) for ps in held.values()]
    expected = max(sizes) - min(sizes) > 1 and _brute_force_could_take(held, subs, partitions)
    assert bool(A.balanced(held, subs, partitions)) == expected


def test_revoke_before_reassign_catches_a_partition_moving_in_one_round() -> None:
    assert A.revoke_before_reassign({"a": T}, {"a": T[:2], "b": []}) == []
    assert A.revoke_before_reassign({"a": T}, {"a": T[:2], "b": T[2:]}) != []


@given(st.lists(st.sampled_from(["a", "b", "c"]), min_size=3, max_size=3))
def test_moves_counts_partitions_that_changed_owner(owners: list[str]) -> None:
    """moves(prev, next) equals the number of partitions whose owner differs."""
    prev = {"a": T, "b": [], "c": []}
    nxt: dict[str, list[tuple[str, int]]] = {"a": [], "b": [], "c": []}
    for tp, o in zip(T, owners, strict=True):
        nxt[o].append(tp)
    assert A.moves(prev, nxt) == sum(1 for o in owners if o != "a")


def test_listener_contract_per_profile() -> None:
    owned = {("t", 0)}
    assert M.listener_call("revoked", owned, owned, 3, "m", "kip") == []
    assert M.listener_call("revoked", {("t", 1)}, owned, 3, "m", "kip") != []
    assert any("empty" in p for p in M.listener_call("assigned", set(), owned, 3, "m", "kip"))
    assert M.listener_call("assigned", set(), owned, 3, "m", "java") == []
    assert any("I6" in p for p in M.listener_call("revoked", owned, owned, -1, "", "java"))
    assert any("valid" in p for p in M.listener_call("lost", owned, owned, 4, "m", "java"))


def test_pause_marks_follow_each_profile() -> None:
    marks, after = {("t", 0), ("t", 1)}, {("t", 0), ("t", 2)}
    assert M.pause_marks("kip", "EAGER", marks, after) == {("t", 0)}
    assert M.pause_marks("java", "EAGER", marks, after) == set()
    assert M.pause_marks("java", "COOPERATIVE", marks, after) == {("t", 0)}
    assert M.pause_state({("t", 0)}, after, {("t", 0)}) == []
    assert M.pause_state(set(), after, {("t", 0)}) != []


def test_records_of_paused_or_foreign_partitions_are_violations() -> None:
    assert M.fetched_record(("t", 0), {("t", 0)}, set()) == []
    assert M.fetched_record(("t", 0), {("t", 0)}, {("t", 0)}) != []
    assert M.fetched_record(("t", 1), {("t", 0)}, set()) != []


def test_kip70_subscription_and_unsubscribe_rules() -> None:
    assert M.subscription_change({("t", 0)}, {("t", 0)}) == []
    assert M.subscription_change({("t", 0)}, set()) != []
    consumed = {("t", 0)}
    assert M.unsubscribe({("t", 0)}, set(), {("t", 0)}, 0, 1, consumed) == []
    assert M.unsubscribe({("t", 0)}, set(), {("t", 0)}, 0, 0, consumed) != []
    assert M.unsubscribe({("t", 0)}, set(), {("t", 0)}, 0, 0, set()) == []
    assert M.unsubscribe({("t", 0)}, {("t", 0)}, set(), 0, 1, consumed) != []
