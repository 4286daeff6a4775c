"""Wire mode, the long runs (``tox -e wire``, a few minutes): the state machine drives real
librdkafka consumers on a fresh mock cluster per example; normal operation must hold every
invariant under the ``librdkafka`` profile, and the two adversarial behaviours librdkafka
documents — a member past ``max.poll.interval.ms`` and a revoke callback slower than the
rebalance — must be caught (an ownership overlap, I1), reported by librdkafka afterwards,
and reproduce from their replay files on a fresh mock cluster."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groupcheck.battery import machine_config
from groupcheck.model.events import apply_event
from groupcheck.model.fuzz import fuzz
from groupcheck.model.replay import load, replay_events, replay_file
from groupcheck.model.shrink import invariant_of
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.group import GroupTarget
from groupcheck.targets.registry import make_group_target, resolve

from wire_cases import slow_revoke, stall_past_max_poll, subscription_switch

pytest.importorskip("confluent_kafka")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not os.environ.get("GROUPCHECK_WIRE"),
    reason="minutes of real clients: set GROUPCHECK_WIRE=1 (tox -e wire)")]

FINDINGS = Path(__file__).resolve().parent.parent / "findings"
ASSIGNORS = ("range", "roundrobin", "cooperative-sticky")


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_normal_operation_holds_the_librdkafka_profile(assignor: str) -> None:
    """Joins, leaves, crashes, subscription changes, pauses, records and injected
    coordinator errors, on real clients: no invariant of the librdkafka profile breaks."""
    target = resolve(f"librdkafka:{assignor}")
    assert target.group is not None
    result = fuzz(target.group, machine_config(target), profile="wire", max_examples=6,
                  seed_value=1, shrink_seconds=120)
    assert not result.failed, (result.violations, result.events)
    assert result.steps >= 20


def _run_on(target: GroupTarget, events: list[dict[str, object]],
            model: ReferenceModel) -> list[str]:
    found: list[str] = []
    for event in events:
        found += apply_event(event, target, model)
    return found


def _ended(target: GroupTarget, member: str, kind: str) -> bool:
    """Wait (bounded) until ``member`` has finished a ``kind`` callback naming partitions."""
    log = target.log  # type: ignore[attr-defined]
    return bool(log.wait_for(lambda: any(
        e.member == member and e.kind == kind and e.phase == "end" and e.partitions
        for e in log.entries), 60))


@pytest.mark.parametrize("assignor", ("range", "cooperative-sticky"))
def test_member_past_max_poll_interval_overlaps_then_learns_through_on_lost(
        assignor: str) -> None:
    target = make_group_target(f"librdkafka:{assignor}:adversarial")
    model = ReferenceModel()
    try:
        found = _run_on(target, stall_past_max_poll(assignor), model)
        assert any(v.startswith("I1:") and "c2" in v for v in found), found
        apply_event({"op": "wake", "member": "c2"}, target, model)  # still overlapping
        assert _ended(target, "c2", "lost")
        entries = list(target.log.entries)  # type: ignore[attr-defined]
    finally:
        target.close()
    lost = next(e for e in entries if e.member == "c2" and e.kind == "lost" and e.phase == "end")
    assert lost.generation < 0 or not lost.member_id  # reported as fenced: I7 holds
    assert any(e.member == "c2" and e.kind == "error" and "maximum poll interval" in e.text
               and e.seq < lost.seq for e in entries)


def test_eager_revoke_callback_slower_than_the_rebalance_overlaps() -> None:
    """range: c1 revokes before it rejoins, so a slow callback keeps it out of the JoinGroup
    round; after the rebalance timeout the group goes on without it and c2 owns the
    partitions while c1's callback still runs."""
    target = make_group_target("librdkafka:range:adversarial")
    model = ReferenceModel()
    try:
        found = _run_on(target, slow_revoke("range"), model)
        assert _ended(target, "c1", "revoked")
        entries = list(target.log.entries)  # type: ignore[attr-defined]
    finally:
        target.close()
    assert any(v.startswith("I1:") and "c1" in v and "c2" in v for v in found), found
    revoke_end = next(e for e in entries if e.member == "c1" and e.kind == "revoked"
                      and e.phase == "end" and e.partitions)
    taken = next(e for e in entries if e.member == "c2" and e.kind == "assigned"
                 and e.phase == "end" and set(e.partitions) & set(revoke_end.partitions))
    assert taken.seq < revoke_end.seq  # c2 owned them before c1's callback returned


def test_librdkafka_cooperative_subscription_switch_reports_lost_and_never_rejoins() -> None:
    """A finding (findings/librdkafka-cooperative-sticky-subscription-switch-I7.json): under
    cooperative-sticky, switching c2 from t1 to t0 reports t1 lost while c2's membership is
    valid (I7), and no rebalance follows: nobody gets an assign callback for 30 s (I11).
    Under range the same events revoke and rebalance (the control)."""
    target = make_group_target("librdkafka:cooperative-sticky")
    model = ReferenceModel()
    try:
        found = _run_on(target, subscription_switch("cooperative-sticky")[:-1], model)
        assert _ended(target, "c2", "lost")
        log = target.log  # type: ignore[attr-defined]
        lost = next(e for e in log.entries if e.kind == "lost" and e.phase == "end")
        rebalanced = log.wait_for(lambda: any(
            e.kind == "assigned" and e.phase == "end" and e.seq > lost.seq
            for e in log.entries), 30)
    finally:
        target.close()
    assert lost.generation >= 0 and lost.member_id, found
    assert not rebalanced
    control = replay_events(make_group_target("librdkafka:range"), subscription_switch("range"))
    assert control.violations == [], control.story


def test_same_events_without_the_adversary_hold() -> None:
    """The control: the slow-revoke story with an ordinary callback breaks nothing."""
    events = [e for e in slow_revoke("range") if e["op"] != "slow_revoke"]
    outcome = replay_events(make_group_target("librdkafka:range"), events)
    assert outcome.violations == [], outcome.story


@pytest.mark.parametrize("path", sorted(FINDINGS.glob("librdkafka-*.json")),
                         ids=lambda p: p.name)
def test_finding_reproduces_on_a_fresh_mock_cluster(path: Path) -> None:
    data = load(path)
    _, outcome = replay_file(path, make_group_target)
    assert outcome.violations, outcome.story
    assert invariant_of(outcome.violations[0]) == data["invariant"]


def test_adversarial_machine_finds_the_overlap() -> None:
    """The state machine, allowed to stall members and slow revoke callbacks, finds an
    ownership overlap and shrinks it to a short story."""
    target = resolve("librdkafka:range:adversarial")
    assert target.group is not None
    result = fuzz(target.group, machine_config(target), profile="wire", max_examples=10,
                  seed_value=0, shrink_seconds=180)
    assert result.failed and result.violations[0].startswith("I1:"), result.violations
    assert any(e["op"] in ("stall", "slow_revoke") for e in result.events)
