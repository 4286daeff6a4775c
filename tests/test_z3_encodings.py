"""Each invariant's two readings — the Python predicate and the Z3 encoding — agree, and the
optimal-stickiness solver finds the true minimum.

These tests need z3 (the ``z3`` extra); tox installs it for the default run.
"""

from __future__ import annotations

import itertools
from typing import Any

import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.properties import assignment as A
from groupcheck.properties import generations as G
from groupcheck.properties import z3_encodings as E
from groupcheck.properties.optimal import MovesOracle, forced_moves, min_moves, search_min_moves

MEMBERS = ["a", "b", "c"]
TOPICS = ["t", "u", "v"]
TP = tuple[str, int]
Case = dict[str, Any]


def _tp(n: int) -> TP:
    """0..17 → a partition of t, u or v numbered -1..4 (some are outside any metadata)."""
    return (TOPICS[n % 3], n // 3 - 1)


_tps = st.lists(st.integers(0, 17), max_size=3)
_claimed_tps = st.lists(st.integers(3, 8), max_size=3)  # partitions 0 and 1: claims collide
_generation = st.sampled_from([None, -1, 0, 1, 2])
# One flat draw per case (nested dictionaries made Hypothesis itself the slow part).
_raw = st.tuples(
    st.tuples(st.integers(-1, 3), st.integers(-1, 3), st.integers(-1, 3)),  # -1: no metadata
    st.integers(1, 7),  # which of a, b, c subscribe (a bit mask)
    st.tuples(*[st.lists(st.integers(0, 2), max_size=3)] * 3),  # their topics (repeats too)
    st.tuples(*[st.one_of(st.none(), _tps)] * 4),  # previous ownership of a, b, c, d
    st.tuples(*[st.one_of(st.none(), st.tuples(_claimed_tps, _generation))] * 4),  # claims
    st.integers(1, 7),  # which of a, b, c the result names
    st.lists(st.integers(0, 3), max_size=9),  # owner of each metadata partition (3: nobody)
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 17)), max_size=3),  # noise entries
)


def _decode(raw: tuple[Any, ...]) -> Case:
    counts, subscribed, topics, prevs, claimed, named, owners, noise = raw
    parts = {t: c for t, c in zip(TOPICS, counts, strict=True) if c >= 0}
    subs = {m: [TOPICS[k] for k in topics[i]] for i, m in enumerate(MEMBERS)
            if subscribed >> i & 1}
    names = MEMBERS + ["d"]
    prev = {names[i]: [_tp(n) for n in v] for i, v in enumerate(prevs) if v is not None}
    claims = {names[i]: ([_tp(n) for n in v[0]], v[1]) for i, v in enumerate(claimed)
              if v is not None}
    universe = [(t, p) for t, n in parts.items() for p in range(n)]
    keys = [m for i, m in enumerate(MEMBERS) if named >> i & 1]
    result: dict[str, list[TP]] = {m: [] for m in keys}
    for tp, k in zip(universe, owners + [3] * len(universe), strict=False):
        if k < len(keys):
            result[keys[k]].append(tp)  # mostly plausible: each partition to someone or none
    for k, n in noise:
        result[keys[k % len(keys)]].append(_tp(n))  # duplicates, strays, unsubscribed topics
    return {"parts": parts, "subs": subs, "universe": universe, "prev": prev,
            "claims": claims, "assignment": result}


# Metadata, subscriptions, previous ownership, claims with generations, and a concrete result.
cases = _raw.map(_decode)
contexts = cases


@settings(max_examples=400, deadline=None)
@given(cases)
def test_predicates_and_pinned_encodings_agree(case: Case) -> None:
    """Property: for I1, I2 (validity and completeness), I3, I4a, I5 and I6 (both protocols),
    the predicate reports no violation exactly when the encoding is satisfiable with the
    symbolic assignment pinned to the same concrete result; and ``moves_term`` equals
    ``moves``. (Formulas are read off one pinned model; a sample is also decided by a solver
    over the pinning constraints and by substitution, so the three ways agree.)"""
    result, subs, parts = case["assignment"], case["subs"], case["parts"]
    prev, claims = case["prev"], case["claims"]
    sym = E.SymbolicAssignment.over(result, subs, parts, prev, claims=claims)
    sat = E.Pinned(sym, result).holds

    assert sat(E.exclusive_holds(sym)) == (A.exclusive_ownership(result) == [])
    assert sat(E.valid_targets_holds(sym, subs, parts)) == (
        A.valid_targets(result, subs, parts) == [])
    assert sat(E.complete_holds(sym, subs, parts)) == (A.complete(result, subs, parts) == [])
    assert sat(E.balanced_holds(sym, subs, parts)) == (A.balanced(result, subs, parts) == [])
    assert sat(E.moves_term(sym, prev) == A.moves(prev, result))
    assert sat(E.no_moves_holds(sym, prev)) == (A.no_moves_when_balanced(prev, result) == [])
    assert sat(E.revoke_before_reassign_holds(sym, prev)) == (
        A.revoke_before_reassign(prev, result) == [])
    for protocol in ("EAGER", "COOPERATIVE"):
        assert sat(E.claim_hygiene_holds(sym, claims, protocol)) == (
            G.claim_hygiene(claims, result, protocol) == [])
    if len(result) == 1:  # about a third of the cases: the other two ways agree too
        formula = E.balanced_holds(sym, subs, parts)
        solver = z3.Solver()
        solver.add(*sym.domain(), *sym.pin(result), formula)
        assert (solver.check() == z3.sat) == sat(formula) == E.holds(formula, sym, result)


@settings(max_examples=80, deadline=None)
@given(contexts)
def test_models_of_an_encoding_pass_and_models_of_its_negation_fail(case: Case) -> None:
    """Property: left symbolic, any assignment Z3 finds for an encoding passes the predicate,
    and any it finds for the encoding's negation fails it (so the encodings also agree where
    Z3 chooses the assignment, not only where it is pinned)."""
    subs, parts, prev, claims = case["subs"], case["parts"], case["prev"], case["claims"]
    universe = case["universe"] + [("u", 7)]
    sym = E.SymbolicAssignment(list(subs), universe, copies=2, name="free")
    readings = [
        (E.exclusive_holds(sym), lambda r: A.exclusive_ownership(r)),
        (E.complete_holds(sym, subs, parts), lambda r: A.complete(r, subs, parts)),
        (E.balanced_holds(sym, subs, parts), lambda r: A.balanced(r, subs, parts)),
        (E.no_moves_holds(sym, prev), lambda r: A.no_moves_when_balanced(prev, r)),
        (E.revoke_before_reassign_holds(sym, prev),
         lambda r: A.revoke_before_reassign(prev, r)),
        (E.claim_hygiene_holds(sym, claims, "COOPERATIVE"),
         lambda r: G.claim_hygiene(claims, r, "COOPERATIVE")),
    ]
    for formula, predicate in readings:
        good = E.find(formula, sym)
        if good is not None:
            assert predicate(good) == [], good
        bad = E.find(z3.Not(formula), sym)
        if bad is not None:
            assert predicate(bad) != [], bad


def test_i6_reading_on_hand_made_claims() -> None:
    """A contested partition goes only to a claimant strictly above every other claim
    (COOPERATIVE); an equal top drops both; EAGER is not judged; the encoding says the same."""
    claims = {"a": ([("t", 0)], 2), "b": ([("t", 0)], 1), "c": ([("t", 1)], 1),
              "d": ([("t", 1)], 1)}
    good = {"a": [("t", 0)], "b": [], "c": [], "d": []}
    stale_wins = {"a": [], "b": [("t", 0)], "c": [], "d": []}
    tie_kept = {"a": [("t", 0)], "b": [], "c": [("t", 1)], "d": []}
    assert G.claim_hygiene(claims, good, "COOPERATIVE") == []
    assert G.claim_hygiene(claims, stale_wins, "COOPERATIVE")[0].startswith("I6: t-0")
    assert G.claim_hygiene(claims, tie_kept, "COOPERATIVE")[0].startswith("I6: t-1")
    assert G.claim_hygiene(claims, stale_wins, "EAGER") == []
    assert G.resolved(claims) == {"a": [("t", 0)], "b": [], "c": [], "d": []}
    for result, ok in ((good, True), (stale_wins, False), (tie_kept, False)):
        sym = E.SymbolicAssignment.over(result, {}, {"t": 2}, claims=claims)
        assert E.holds(E.claim_hygiene_holds(sym, claims, "COOPERATIVE"), sym, result) == ok


def _brute_force(subs: dict[str, list[str]], parts: dict[str, int],
                 prev: dict[str, list[TP]]) -> int:
    wanted = sorted({t for ts in subs.values() for t in ts if t in parts})
    tps = [(t, p) for t in wanted for p in range(parts[t])]
    choices = [[m for m in subs if tp[0] in subs[m]] for tp in tps]
    best: int | None = None
    for owners in itertools.product(*choices):
        result: dict[str, list[TP]] = {m: [] for m in subs}
        for tp, m in zip(tps, owners, strict=True):
            result[m].append(tp)
        if A.balanced(result, subs, parts) == []:
            n = A.moves(prev, result)
            best = n if best is None else min(best, n)
    assert best is not None
    return best


def test_optimum_on_a_hand_checkable_case() -> None:
    """a subscribes to t and u, b only to t, two partitions each, and a owned all four.
    a=4/b=0 and a=3/b=1 are unbalanced (b could take a t partition from a, who holds 2
    more), so b must end with both t partitions and a with both u partitions: 2 moves."""
    subs = {"a": ["t", "u"], "b": ["t"]}
    parts = {"t": 2, "u": 2}
    prev = {"a": [("t", 0), ("t", 1), ("u", 0), ("u", 1)]}
    best = min_moves(subs, parts, prev)
    assert best.moves == 2
    assert sorted(best.assignment["b"]) == [("t", 0), ("t", 1)]
    assert A.complete(best.assignment, subs, parts) == []
    assert A.balanced(best.assignment, subs, parts) == []
    assert A.moves(prev, best.assignment) == 2
    assert MovesOracle().min_moves(subs, parts, prev) == 2
    assert MovesOracle().min_moves(subs, parts, prev, achieved=2) == 2
    # a partition of a deleted topic, and one its owner no longer subscribes to, must move
    prev2 = {"a": [("gone", 0)], "b": [("u", 0)]}
    assert forced_moves(subs, parts, prev2) == 2
    assert min_moves(subs, parts, prev2).moves == 2


@settings(max_examples=60, deadline=None)
@given(contexts)
def test_optimum_equals_brute_force(case: Case) -> None:
    """Property: on small random inputs, Z3's minimum equals the minimum over every complete
    assignment that the I3 predicate calls balanced, and the incremental oracle (with or
    without an upper bound from a balanced answer) agrees; forced_moves never exceeds it."""
    subs, parts = case["subs"], case["parts"]
    prev = G.resolved(case["claims"])
    expected = _brute_force(subs, parts, prev)
    assert min_moves(subs, parts, prev).moves == expected
    oracle = MovesOracle()
    assert oracle.min_moves(subs, parts, prev) == expected
    assert oracle.min_moves(subs, parts, prev, achieved=expected + 1) == expected
    assert oracle.min_moves(subs, parts, prev, achieved=expected) == expected
    assert forced_moves(subs, parts, prev) <= expected


@settings(max_examples=300, deadline=None)
@given(contexts)
def test_bounded_search_finds_the_brute_force_optimum(case: Case) -> None:
    """Property: the scope prover's bounded search (``search_min_moves``) finds the minimum
    over every complete assignment the I3 predicate calls balanced, both from resolved
    ownership and from raw claims (several claimants of one partition, claims outside the
    metadata, members that left)."""
    subs, parts = case["subs"], case["parts"]
    raw = {m: list(owned) for m, (owned, _) in case["claims"].items()}
    for prev in (G.resolved(case["claims"]), raw, case["prev"]):
        assert search_min_moves(subs, parts, prev) == _brute_force(subs, parts, prev)
