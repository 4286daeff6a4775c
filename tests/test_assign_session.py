"""`AssignSession`: many assign requests answered exactly as `run_assign` answers each one,
with what repeats (member subscriptions, leader runs on equal inputs) computed once."""

from __future__ import annotations

from typing import Any

import pytest

from groupcheck.impl.assign_op import run_assign, run_assign_assignment_only
from groupcheck.impl.assign_session import AssignSession
from groupcheck.impl.assignors.sticky import StickyAssignor
from groupcheck.impl.errors import InvalidRequestError
from groupcheck.impl.types import Cluster, Subscription
from groupcheck.properties.scope import Scope, build_request, enumerate_scope

SCOPE = Scope.parse("members=3,topics=1,partitions=2,generations=2,symmetry=1")


def _without_timing(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ms"}


@pytest.mark.parametrize("assignor", [*(pytest.param(a, marks=pytest.mark.heavy)
                                        for a in ("range", "roundrobin")),
                                      "sticky", "cooperative-sticky"])
def test_a_session_answers_every_request_as_run_assign_does(assignor: str) -> None:
    """Over a whole scope (stale and conflicting claims, racks absent), one session's
    answers equal run_assign's field for field (user data included), in the same key order;
    range and roundrobin, whose leaders read no claims, need fewer leader runs than requests,
    and a session without user data answers the same assignment, generation and protocol."""
    full, lean = AssignSession(), AssignSession(user_data=False)
    requests = [build_request(assignor, c) for c in enumerate_scope(SCOPE)]
    for request in requests:
        expected = _without_timing(run_assign(request))
        got = _without_timing(full(request))
        assert got == expected and list(got) == list(expected), request
        slim = lean(request)
        assert "userData" not in slim
        assert {k: slim[k] for k in ("assignment", "generation", "protocol")} == {
            k: expected[k] for k in ("assignment", "generation", "protocol")}
    if assignor in ("range", "roundrobin"):
        assert full.leader_runs < len(requests) // 2
    else:
        assert full.leader_runs <= len(requests)


def test_a_session_rejects_bad_requests_like_run_assign() -> None:
    """Malformed members get the same typed error as from run_assign, and the session goes
    on answering afterwards."""
    session = AssignSession()
    bad = {"assignor": "sticky", "partitions": {"t": 1},
           "members": {"a": {"topics": ["t"], "owned": [5], "generation": 1}}}
    with pytest.raises(InvalidRequestError, match="not a \\[topic, partition\\] pair"):
        session(bad)
    with pytest.raises(InvalidRequestError):
        run_assign(bad)
    good = {"assignor": "sticky", "partitions": {"t": 1},
            "members": {"a": {"topics": ["t"], "owned": [], "generation": None}}}
    assert session(good)["assignment"] == {"a": [["t", 0]]}


@pytest.mark.parametrize("assignor", [pytest.param("sticky", marks=pytest.mark.heavy),
                                      "cooperative-sticky"])
@pytest.mark.parametrize("limit", [3, pytest.param(50, marks=pytest.mark.heavy)])
def test_keyed_answers_survive_the_caches_being_cleared(assignor: str, limit: int) -> None:
    """``assign_keyed`` (the prover's path) answers each configuration as run_assign does,
    also when its caches fill up and are cleared many times over: a number standing for a
    member's leader view never outlives the caches that hold it."""
    session = AssignSession(limit=limit)
    configs = list(enumerate_scope(SCOPE))
    for config in configs + configs[::-1]:
        request = build_request(assignor, config, shared=True)
        answer = session.assign_keyed(request, config.members, config.metadata)
        expected = _without_timing(run_assign(request))
        assert answer.assignment == {m: [tuple(tp) for tp in ps]
                                     for m, ps in expected["assignment"].items()}, request
        assert _without_timing(answer.response()) == expected
        # cleared before a request once full: at most one request's members past it
        assert len(session.view_ids) <= limit + len(config.members)


@pytest.mark.parametrize("scope_text", [
    pytest.param("generations=3", marks=pytest.mark.heavy),
    pytest.param("members=2,topics=2,partitions=2,generations=3", marks=pytest.mark.heavy),
    pytest.param("members=2,topics=1,partitions=2,racks=2", marks=pytest.mark.heavy),
    "members=3,topics=1,partitions=2,claims=3,generations=3",
])
def test_sticky_requests_resolved_alike_share_one_correct_answer(scope_text: str) -> None:
    """The session runs sticky's leader once per *resolved* input
    (`StickyAssignor.resolved_input`: claims after conflict resolution, the older
    generation's claimants of metadata partitions). Brute force over a whole scope — stale,
    conflicting and older claims, equal and differing subscriptions, racks — every answer
    so shared equals a fresh run's, and far fewer leader runs than requests were needed."""
    session = AssignSession()
    configs = list(enumerate_scope(Scope.parse(scope_text)))
    for config in configs:
        request = build_request("sticky", config, shared=True)
        answer = session.assign_keyed(request, config.members, config.metadata)
        expected = run_assign_assignment_only(request)
        assert answer.assignment == {m: [tuple(tp) for tp in ps]
                                     for m, ps in expected["assignment"].items()}, request
        assert list(answer.assignment) == list(expected["assignment"])
    assert session.leader_runs < len(configs) // 4


def test_a_subclass_of_sticky_is_never_resolved_for_it() -> None:
    """A subclass may read more of its input than sticky does (the bug zoo's mutants do),
    so it gets no resolved input and the session runs its leader on every distinct input."""

    class StickySubclass(StickyAssignor):
        pass

    cluster = Cluster({"t": 2})
    subscriptions = {"a": Subscription(["t"]), "b": Subscription(["t"])}
    assert StickyAssignor().resolved_input(cluster, subscriptions) is not None
    assert StickySubclass().resolved_input(cluster, subscriptions) is None
