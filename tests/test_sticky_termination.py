"""The general sticky builder always terminates (deviation D4).

Kafka's ``performReassignments`` repeats passes until one moves nothing; its swap rule can
make two moves undo each other forever. The requests in ``data/general_loop.jsonl`` are the
rebalances on which the audit (seed 0, scenarios 2255 and 38261) found that loop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from groupcheck.audit.chain import run_chain
from groupcheck.audit.scenarios import random_spec
from groupcheck.audit.targets import AuditTarget
from groupcheck.impl.assign_op import run_assign
from groupcheck.impl.assignors import sticky_general
from groupcheck.impl.assignors.sticky_movements import MAX_SWAP_PASSES, ReassignmentLimitError
from groupcheck.properties import assignment as A

from helpers.sticky_vectors import cluster_of, make, subscriptions_of

LOOPS = [json.loads(line) for line in
         (Path(__file__).parent / "data" / "general_loop.jsonl").read_text().splitlines()]
Request = dict[str, Any]


def _assign(request: Request) -> tuple[dict[str, list[tuple[str, int]]], Any]:
    leader = make(request["assignor"])
    result = leader.assign(cluster_of(request), subscriptions_of(request))
    return {m: list(a.partitions) for m, a in result.items()}, leader.reassignment_stats


def _subscribed(request: Request) -> dict[str, list[str]]:
    return {m: list(v["topics"]) for m, v in request["members"].items()}


def _judge(request: Request, result: dict[str, list[tuple[str, int]]]) -> list[str]:
    """I1 and I2 (valid targets) always; complete and balanced (I3) for eager sticky (the
    cooperative answer withholds what changes owner until the follow-up)."""
    subs, partitions = _subscribed(request), request["partitions"]
    problems = A.exclusive_ownership(result) + A.valid_targets(result, subs, partitions)
    if request["assignor"] == "sticky":
        problems += A.complete(result, subs, partitions) + A.balanced(result, subs, partitions)
    return problems


@pytest.mark.parametrize("loop", LOOPS, ids=[f"{x['request']['assignor']}:{x['case']}"
                                              for x in LOOPS])
def test_request_on_which_kafka_loops_ends_with_the_swap_rule_dropped(loop: Request) -> None:
    """These requests repeat a pass-start state under Kafka's rules; the build notices, drops
    the swap rule, and ends with a valid (sticky: complete, balanced) assignment."""
    result, stats = _assign(loop["request"])
    assert stats is not None and stats.swap_rule_dropped
    assert not _judge(loop["request"], result)


@pytest.mark.parametrize("scenario", [2255, 38261])
@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
def test_audit_scenarios_that_hung_now_settle(scenario: int, assignor: str) -> None:
    """The whole audit story of the scenario runs without TIMEOUT or any violation
    (cooperative: complete and balanced after the follow-up rebalances)."""
    result = run_chain(AuditTarget(f"builtin:{assignor}", assignor, run_assign),
                       random_spec(0, scenario))
    assert not result.violations


def test_pass_limit_raises_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The safety net: past its pass bound the loop raises ReassignmentLimitError."""
    monkeypatch.setattr(sticky_general, "MAX_SWAP_PASSES", 1)
    with pytest.raises(ReassignmentLimitError):
        _assign(LOOPS[0]["request"])


@st.composite
def changed_groups(draw: st.DrawFn) -> Request:
    """A client-mode request after a change: a group with unequal subscriptions got its
    assignment from the same assignor, then members left, joined, or changed topics."""
    assignor = draw(st.sampled_from(["sticky", "cooperative-sticky"]))
    topics = [f"t{i}" for i in range(draw(st.integers(2, 5)))]
    partitions = {t: draw(st.integers(1, 30)) for t in topics}
    n = draw(st.integers(3, 16))
    some_topics = st.lists(st.sampled_from(topics), min_size=1, unique=True)
    members = {f"c{i}": {"topics": draw(some_topics), "owned": [], "generation": None}
               for i in range(n)}
    first: Request = {"op": "assign", "assignor": assignor, "mode": "client",
                      "partitions": partitions, "members": members, "newGeneration": 1}
    given_out, _ = _assign(first)
    for m, v in members.items():
        v["owned"], v["generation"] = [list(tp) for tp in given_out[m]], 1
    for m in draw(st.lists(st.sampled_from(sorted(members)), max_size=2, unique=True)):
        del members[m]
    for m in draw(st.lists(st.sampled_from(sorted(members)), max_size=2, unique=True)):
        members[m]["topics"] = draw(some_topics)
    for k in range(draw(st.integers(0, 3))):
        members[f"n{k}"] = {"topics": draw(some_topics), "owned": [], "generation": None}
    return {**first, "members": members, "newGeneration": 2}


@settings(max_examples=120, deadline=None)
@given(changed_groups())
@example(LOOPS[0]["request"])
@example(LOOPS[1]["request"])
@example(LOOPS[2]["request"])
@example(LOOPS[3]["request"])
def test_general_path_terminates_within_its_bound(request: Request) -> None:
    """Every general build ends: each reassignment call makes at most MAX_SWAP_PASSES passes
    under Kafka's swap rule and, once the rule is dropped, one pass more per plain move
    (each lowers the sum of squared sizes); the result keeps I1 and I2 (eager: complete and
    balanced too)."""
    result, stats = _assign(request)
    if stats is None:  # the subscriptions came out equal: the constrained builder ran
        return
    assert stats.passes <= 2 * (MAX_SWAP_PASSES + 1) + stats.moves
    assert not _judge(request, result)
