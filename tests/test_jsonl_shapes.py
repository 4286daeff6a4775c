"""The assign op's JSON shapes are written twice — for the service (impl, which imports
nothing of the harness) and for the harness (properties) — and must stay alike key for key;
the service's answers and the harness's requests have those shapes."""

from __future__ import annotations

import typing

import pytest

from groupcheck.impl import jsonl_shapes as served
from groupcheck.impl.assign_op import run_assign
from groupcheck.properties import jsonl_shapes as harness
from groupcheck.properties.scope import Scope, build_request, enumerate_scope

NAMES = {"RequestMember": "AssignOpMember", "AssignRequest": "AssignOpRequest",
         "AssignAnswer": "AssignOpAnswer"}


def _shown(hint: object) -> str:
    """A type hint as text, each shape under its harness name."""
    text = str(hint).replace("groupcheck.impl.", "groupcheck.properties.")
    for harness_name, served_name in NAMES.items():
        text = text.replace(served_name, harness_name)
    return text


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_service_and_the_harness_hold_one_shape_of_the_assign_op(name: str) -> None:
    ours, theirs = getattr(served, NAMES[name]), getattr(harness, name)
    assert typing.get_type_hints(ours).keys() == typing.get_type_hints(theirs).keys()
    assert ours.__required_keys__ == theirs.__required_keys__
    assert {k: _shown(v) for k, v in typing.get_type_hints(ours).items()} == \
        {k: _shown(v) for k, v in typing.get_type_hints(theirs).items()}


def test_a_prover_request_and_its_answer_carry_only_the_keys_of_their_shapes() -> None:
    config = next(iter(enumerate_scope(Scope.parse("members=2,topics=1,partitions=2"))))
    request = build_request("sticky", config)
    assert set(request) <= set(typing.get_type_hints(harness.AssignRequest))
    assert set(harness.AssignRequest.__required_keys__) <= set(request)
    for member in request["members"].values():
        assert set(harness.RequestMember.__required_keys__) <= set(member)
    answer = run_assign(request)
    assert set(answer) <= set(typing.get_type_hints(served.AssignOpAnswer))
    assert all(isinstance(t, str) and isinstance(p, int)
               for parts in answer["assignment"].values() for t, p in parts)
