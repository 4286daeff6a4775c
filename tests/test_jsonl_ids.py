"""Request ids in `groupcheck jsonl` (impl/jsonl.py): an ``"id"`` is echoed in its answer,
error answers included, a request without one is answered as before, and the served
``assign`` (through a session) answers as `run_assign` does."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest

from groupcheck.impl.assign_op import run_assign
from groupcheck.impl.jsonl import handle, handle_line, serve, session_ops
from groupcheck.properties.scope import Scope, build_request, enumerate_scope


@pytest.mark.parametrize("ident", [0, 17, -3, 2**40, "", "r-1", "ü"])
def test_an_id_is_echoed_in_the_answer(ident: object) -> None:
    answer = json.loads(handle_line(json.dumps({"op": "ping", "id": ident})))
    assert answer == {"pong": True, "id": ident}


def test_an_error_answer_carries_the_id_too() -> None:
    answer = json.loads(handle_line(json.dumps({"op": "nosuchop", "id": 9})))
    assert answer["id"] == 9 and answer["error"].startswith("InvalidRequestError")


def test_a_request_without_an_id_is_answered_without_one() -> None:
    assert json.loads(handle_line('{"op": "ping"}')) == {"pong": True}


@pytest.mark.parametrize("ident", [1.5, True, None, [1], {"a": 1}])
def test_an_id_that_is_not_a_string_or_integer_is_a_request_error(ident: object) -> None:
    answer = json.loads(handle_line(json.dumps({"op": "ping", "id": ident})))
    assert "'id' must be a string or an integer" in answer["error"] and "id" not in answer


def test_serve_answers_in_request_order_with_each_id() -> None:
    lines = [json.dumps({"op": "ping", "id": i}) for i in range(50)]
    out = StringIO()
    assert serve(StringIO("\n".join(lines) + "\n\n" + '{"op":"ping"}\n'), out) == 0
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a.get("id") for a in answers] == [*range(50), None]


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return {k: v for k, v in a.items() if k != "ms"} == {k: v for k, v in b.items() if k != "ms"}


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_the_served_assign_answers_as_run_assign(assignor: str) -> None:
    """`serve`'s ``assign`` (a session for small requests) equals `run_assign` on every
    request of a scope, raw mode and an error request included."""
    ops = session_ops()
    scope = Scope.parse("members=2,topics=2,partitions=1,generations=2")
    requests: list[dict[str, Any]] = [dict(build_request(assignor, c))
                                      for c in enumerate_scope(scope)]
    requests += [{**r, "mode": "raw"} for r in requests[:300]]
    requests.append({**requests[0], "members": {"a": {"topics": "t0"}}})
    for request in requests:
        assert _same(handle(request, ops), handle(request)), request
        if "error" not in handle(request):
            assert _same(handle(request, ops), dict(run_assign(request)))
