"""I17 on the wire catches a driver that breaks delivery, and only for the rule it breaks:
one that skips an offset (``skipped``), one that commits the partitions it gave up after
its revoke callback returned (``commit-unowned``), one that starts a partition past its
committed offset (``start-later``). Each plays a short story on groupcheck's broker — records
produced, two members, a rebalance — with a driver built on the librdkafka driver
(`helpers.wrong_member`); the same story with the fault off holds I17."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")
pytest.importorskip("confluent_kafka", reason="the drivers are built on librdkafka's")

from groupcheck.properties.delivery import DeliveryLog, judge_delivery  # noqa: E402
from groupcheck.properties.group import MemberSpec  # noqa: E402
from groupcheck.targets.wire.wire_group import WireGroup  # noqa: E402

from helpers import ROOT  # noqa: E402
from helpers.delivery_wire import settle  # noqa: E402

pytestmark = pytest.mark.wire
SPEC = MemberSpec(topics=("t0",), assignors=("range",))


def _group(fault: str, member: str) -> WireGroup:
    driver = ROOT / "tests" / "helpers" / "wrong_member.py"
    client = f"cmd={sys.executable} {driver} {fault} {member}"
    group = WireGroup(f"wire:{client}:range", (client,), "range")
    group.set_partitions("t0", 2)
    return group


def _produce(group: WireGroup, each: int) -> None:
    for _ in range(each):
        for partition in (0, 1):
            group.produce("t0", partition)


def _rules(delivery: DeliveryLog | None) -> set[str]:
    assert delivery is not None and delivery.caught_up
    return {v.rule for v in judge_delivery(delivery).violations}


def _skip_story(fault: str) -> DeliveryLog | None:
    """c1 alone reads three records of each partition; c2 joins, c1 leaves: c2 reads every
    partition from the start (nothing was committed); one more record each."""
    group = _group(fault, "c1")
    try:
        group.join("c1", SPEC)
        _produce(group, 3)
        settle(group)
        group.join("c2", SPEC)
        settle(group)
        group.leave("c1")
        settle(group)
        _produce(group, 1)
        return settle(group)[-1].delivery
    finally:
        group.close()


def _revoke_story(fault: str) -> DeliveryLog | None:
    """c1 alone reads three records of each partition and commits in its revoke callback;
    c2 joins: c1 gives a partition up."""
    group = _group(fault, "c1")
    try:
        group.join("c1", replace(SPEC, commit_style="revoke"))
        _produce(group, 3)
        settle(group)
        group.join("c2", SPEC)
        settle(group)
        _produce(group, 1)
        return settle(group)[-1].delivery
    finally:
        group.close()


def _seek_story(fault: str) -> DeliveryLog | None:
    """c1 alone reads three records of each partition, committing after each poll; c2 joins
    and takes a partition over; three more records each; c2 leaves and c1 reads on; one more
    record each."""
    group = _group(fault, "c2")
    try:
        group.join("c1", replace(SPEC, commit_style="sync"))
        _produce(group, 3)
        settle(group)
        group.join("c2", SPEC)
        settle(group)
        _produce(group, 3)
        settle(group)
        group.leave("c2")
        settle(group)
        _produce(group, 1)
        return settle(group)[-1].delivery
    finally:
        group.close()


def test_a_driver_that_skips_an_offset_breaks_skipped_alone() -> None:
    delivery = _skip_story("skip")
    assert _rules(delivery) == {"skipped"}
    assert _rules(_skip_story("correct")) == set()


def test_a_driver_that_commits_after_its_revoke_breaks_commit_unowned_alone() -> None:
    assert _rules(_revoke_story("late-commit")) == {"commit-unowned"}
    assert _rules(_revoke_story("correct")) == set()


def test_a_driver_that_starts_past_the_committed_offset_breaks_start_later_alone() -> None:
    assert _rules(_seek_story("seek-past")) == {"start-later"}
    assert _rules(_seek_story("correct")) == set()
