"""A wire step ends at once, naming the cause, when the coordinator refuses a member that no
wait can let in (INCONSISTENT_GROUP_PROTOCOL while the group keeps members sharing none of its
assignors), instead of waiting out STEP_WAIT; a refusal that may still pass is waited for."""

from __future__ import annotations

import collections
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("kio")

from groupcheck.engines.upgrades import shrink  # noqa: E402
from groupcheck.engines.upgrades.shrink import cause_of  # noqa: E402
from groupcheck.model.event_types import DomainEvent, Join, Leave, Stall, Wake  # noqa: E402
from groupcheck.model.group_events import Partitions, Settle  # noqa: E402
from groupcheck.model.replay import Outcome  # noqa: E402
from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend  # noqa: E402
from groupcheck.targets.wire.log import WireLog  # noqa: E402
from groupcheck.targets.wire.refusals import (  # noqa: E402
    INCONSISTENT_GROUP_PROTOCOL,
    LastJoin,
    cannot_join,
)
from groupcheck.targets.wire.shown import Shown  # noqa: E402
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
                           marks=set(), read={}, driver=driver, source=1)


def _group(backend: GroupcheckBackend, names: list[str]) -> WireGroup:
    """A wire group over ``backend`` whose members are ``names`` (drivers that never speak),
    every completed generation already shown."""
    group = WireGroup.__new__(WireGroup)
    group.backend, group.members = backend, {n: _member() for n in names}
    group.pool = SimpleNamespace(failure=lambda: None)  # type: ignore[assignment]
    group.log, group.applied = WireLog(lambda _horizon: True), 0
    group.shown_rounds = {r.generation for r in backend.rounds()}
    group._said, group.shown, group.produced = {}, Shown(), collections.Counter()
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
    [(who, why)] = group.shown.errors
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


# --- the shrink keeps the cause ------------------------------------------------------------


def test_a_failures_cause_leaves_numbers_out_and_keeps_the_protocol_sign() -> None:
    refused = ["  9. m1 joins", "     ! group: the coordinator refused m1's JoinGroup with "
               "INCONSISTENT_GROUP_PROTOCOL: it offers [cooperative-sticky]"]
    waited = ["  9. m1 joins", "     ! group: nothing happened for 60s; no generation"]
    idle = ["I11: the group is idle but not settled"]
    assert cause_of(idle, refused) == cause_of(idle, refused[:1] + [refused[1].replace(
        "m1", "m3")]) == "I11: the group is idle but not settled | INCONSISTENT_GROUP_PROTOCOL"
    assert cause_of(idle, waited) != cause_of(idle, refused)
    assert cause_of(["I11: m2 cannot rejoin: its client refused to start (librdkafka: x)"],
                    []) == "I11: m# cannot rejoin: its client refused to start"


def test_the_shrink_drops_each_member_and_fault_whose_story_still_fails_with_the_cause(
        monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[DomainEvent] = [
        Partitions("t0", 2, bounce=0), Join("m1", ("t0",), ("range",), bounce=0),
        Join("m2", ("t0",), ("range",), bounce=0), Join("m3", ("t0",), ("range",), bounce=0),
        Settle(bounce=0), Leave("m1", bounce=1), Stall("m3", bounce=1, fault=True),
        Wake("m3", bounce=1, fault=True), Settle(bounce=1, fault=True),
        Join("m1", ("t0",), ("cooperative-sticky",), bounce=1), Settle(bounce=1)]
    idle = ["I11: the group is idle but not settled"]
    sign = ["     ! group: the coordinator refused m1's JoinGroup with "
            "INCONSISTENT_GROUP_PROTOCOL"]
    replayed: list[list[DomainEvent]] = []

    def replay(_target: object, story: list[DomainEvent]) -> Outcome:
        """m1 is refused while another member stays on range; without one the group waits."""
        replayed.append(story)
        others = {e.member for e in story if isinstance(e, Join) and e.member != "m1"}
        if not any(e.who == "m1" for e in story):
            return Outcome([])
        return Outcome(idle, sign if others else ["     ! group: nothing happened for 60s"])

    monkeypatch.setattr(shrink, "replay_events", replay)
    kept, violations = shrink.shrink_upgrade(events, object, idle, cause_of(idle, sign), 60,
                                             keep="m1")
    assert violations == idle
    assert {e.who for e in kept if e.who} == {"m1", "m3"}  # m2 went; m3 is the last on range
    assert not any(e.fault for e in kept)
    assert len(replayed) == 3  # m2, m3, then the fault: each cut once, m1 kept
