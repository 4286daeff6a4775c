"""A wire step ends at once, naming the cause, when the coordinator refuses a member that no
wait can let in (INCONSISTENT_GROUP_PROTOCOL while the group keeps members sharing none of its
assignors), instead of waiting out STEP_WAIT; a refusal that may still pass is waited for."""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("kio")

from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend  # noqa: E402
from groupcheck.targets.wire.log import WireLog  # noqa: E402
from groupcheck.targets.wire.refusals import (  # noqa: E402
    INCONSISTENT_GROUP_PROTOCOL,
    LastJoin,
    cannot_join,
)
from groupcheck.targets.wire.wire_group import GROUP, STEP_WAIT, WireGroup  # noqa: E402

from helpers.broker_wire import RawClient  # noqa: E402

MEMBER_ID_REQUIRED = 79


@pytest.fixture
def backend() -> Iterator[GroupcheckBackend]:
    made = GroupcheckBackend(frozenset(), session_timeout_ms=10_000)
    made.create_topic("t0", 4)
    yield made
    made.close()


def _join(bootstrap: str, name: str, protocol: str) -> tuple[RawClient, Any]:
    """``name`` joins the harness's group offering one assignor; the coordinator's last
    answer (after the member id it may first require)."""
    client = RawClient(bootstrap, name)
    client.send_join(GROUP, "", ["t0"], protocol=protocol)
    answer = client.receive()
    if answer.error_code == MEMBER_ID_REQUIRED:
        client.send_join(GROUP, answer.member_id, ["t0"], protocol=protocol)
        answer = client.receive()
    return client, answer


def _member() -> Any:
    driver = SimpleNamespace(alive=True, drained=lambda: True)
    return SimpleNamespace(polling=True, subscription=frozenset({"t0"}), owned=set(),
                           driver=driver, source=1)


def _group(backend: GroupcheckBackend, names: list[str]) -> WireGroup:
    """A wire group over ``backend`` whose members are ``names`` (drivers that never speak),
    every completed generation already shown."""
    group = WireGroup.__new__(WireGroup)
    group.backend, group.members = backend, {n: _member() for n in names}
    group.pool = SimpleNamespace(failure=lambda: None)  # type: ignore[assignment]
    group.log, group.applied = WireLog(lambda: True), 0
    group.shown_rounds = {r.generation for r in backend.rounds()}
    group._said, group._pending = {}, {"errors": []}
    return group


def test_a_join_refused_inconsistent_group_protocol_ends_the_step_at_once_naming_it(
        backend: GroupcheckBackend) -> None:
    m1, joined = _join(backend.bootstrap, "m1", "range")
    assert joined.error_code == 0
    m1.send_sync(GROUP, joined.member_id, joined.generation_id,
                 {joined.member_id: [("t0", p) for p in range(4)]}, protocol="range")
    assert m1.receive().error_code == 0
    _, refused = _join(backend.bootstrap, "m2", "cooperative-sticky")
    assert refused.error_code == INCONSISTENT_GROUP_PROTOCOL
    group = _group(backend, ["m1", "m2"])
    began = time.monotonic()
    assert group.step() is False
    assert time.monotonic() - began < STEP_WAIT / 10
    [(who, why)] = group._pending["errors"]
    assert who == "group"
    assert "m2's JoinGroup with INCONSISTENT_GROUP_PROTOCOL" in why
    assert "[cooperative-sticky]" in why and "[range]" in why


def _refused(*protocols: str, steered: bool = False) -> LastJoin:
    return LastJoin(protocols, INCONSISTENT_GROUP_PROTOCOL, steered)


def test_a_member_refused_by_a_group_sharing_none_of_its_assignors_cannot_join() -> None:
    joins = {"m1": LastJoin(("range",), 0), "m2": LastJoin(("range", "roundrobin"), 0),
             "m3": _refused("cooperative-sticky")}
    why = cannot_join(joins, ["m1", "m2", "m3"])
    assert "m3's JoinGroup" in why and "(m1, m2) have [range] in common" in why


@pytest.mark.parametrize("joins, live", [
    # the harness injected the refusal: the member retries and gets in
    ({"m1": LastJoin(("range",), 0), "m2": _refused("cooperative-sticky", steered=True)},
     ["m1", "m2"]),
    # the member it conflicts with has crashed: its session ends and the member gets in
    ({"m1": LastJoin(("range",), 0), "m2": _refused("cooperative-sticky")}, ["m2"]),
    # another live member's JoinGroup is in flight: the group may still change
    ({"m1": LastJoin(("range",), 0), "m2": _refused("cooperative-sticky"),
      "m3": LastJoin(("cooperative-sticky",), None)}, ["m1", "m2", "m3"]),
    # the live members share one of its assignors: the refusal was an older group's
    ({"m1": LastJoin(("cooperative-sticky", "range"), 0), "m2": _refused("cooperative-sticky")},
     ["m1", "m2"]),
    # its latest JoinGroup was admitted
    ({"m1": LastJoin(("range",), 0), "m2": LastJoin(("cooperative-sticky",), 0)},
     ["m1", "m2"]),
])
def test_a_refusal_that_may_still_pass_is_waited_for(joins: dict[str, LastJoin],
                                                     live: list[str]) -> None:
    assert cannot_join(joins, live) == ""
