"""The fault points of a scope (`engines.faults.points`): every error the coordinator's table
lets an API answer at a served version, once per step, protocol and API, the other kinds
once each, no point twice, the same order every time."""

from __future__ import annotations

import pytest

from groupcheck.broker.faults import FAULTS
from groupcheck.broker.protocol import API_KEYS, SUPPORTED
from groupcheck.engines.faults.points import (
    APIS,
    KINDS,
    PROTOCOLS,
    STEPS,
    FaultScope,
    fault_points,
    plausible,
)


def served_errors(api: str) -> set[str]:
    """The API's errors carried from a version at or below the broker's highest."""
    highest = SUPPORTED[API_KEYS[api]][2]
    return {f.error for f in FAULTS if f.api == api and f.since <= highest}


def test_the_full_scope_counts_every_plausible_served_error_and_each_other_kind(
        ) -> None:
    per_step = {step: sum(len([e for e in served_errors(api) if plausible(step, api, e)])
                          + len(KINDS) - 1 for api in APIS) for step in STEPS}
    assert len(fault_points()) == len(PROTOCOLS) * sum(per_step.values())


def test_no_point_asks_for_an_error_kafka_never_sends_as_a_fault() -> None:
    """No step's members are static (no FENCED_INSTANCE_ID); MEMBER_ID_REQUIRED is the
    coordinator's own answer to every first JoinGroup, never a fault."""
    points = fault_points(FaultScope(kinds=("error",)))
    assert not [p for p in points if p.error in ("FENCED_INSTANCE_ID", "MEMBER_ID_REQUIRED")]
    assert all(plausible(p.step, p.api, p.error) for p in points)


def test_no_point_is_enumerated_twice_and_the_order_is_fixed() -> None:
    points = fault_points()
    assert len({p.name for p in points}) == len(points)
    assert points == fault_points()
    assert [p.step for p in points] == sorted((p.step for p in points), key=STEPS.index)


def test_every_error_point_is_one_the_table_lets_its_api_answer() -> None:
    for point in fault_points(FaultScope(kinds=("error",))):
        assert point.error in served_errors(point.api)


def test_a_narrow_scope_holds_exactly_its_axes_values() -> None:
    scope = FaultScope(steps=("leave",), protocols=("eager",), apis=("Heartbeat",),
                  kinds=("delay", "close"))
    assert [p.name for p in fault_points(scope)] == [
        "leave/eager/Heartbeat/close", "leave/eager/Heartbeat/delay"]


def test_an_unknown_axis_value_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown API Produce"):
        FaultScope(apis=("Produce",))
