"""`AssignSession`: many assign requests answered exactly as `run_assign` answers each one,
with what repeats (member subscriptions, leader runs on equal inputs) computed once."""

from __future__ import annotations

from typing import Any

import pytest

from groupcheck.impl.assign_op import AssignSession, run_assign
from groupcheck.impl.errors import InvalidRequestError
from groupcheck.properties.scope import Scope, build_request, enumerate_scope

SCOPE = Scope.parse("members=3,topics=1,partitions=2,generations=2,symmetry=1")


def _without_timing(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ms"}


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
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
