"""A wire group's views carry the cumulative delivery log (I17's data) collected on the wire:
every record each poll handed, each member's ownership tenures from its callbacks (ended at
a leave or a crash), the coordinator's commits with the member's style, the partitions' high
watermarks, and whether the group had caught up."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from groupcheck.properties.delivery import Commit, Handed, Tenure, judge_delivery
from groupcheck.properties.group import MemberSpec
from groupcheck.targets.wire.deliveries import Deliveries
from groupcheck.targets.wire.log import WireLog

from helpers.delivery_wire import librdkafka_group, settle

SPEC = MemberSpec(topics=("t0",), assignors=("range",))


def _event(log: WireLog, source: int, ts: int, event: str, **fields: Any) -> None:
    log.receive(source, {"event": event, "member": fields.pop("member", "c1"), "seq": ts,
                         "ts": ts, **fields})


def _answer(ts: int, member: str, offsets: tuple[tuple[str, int, int], ...],
            errors: tuple[str | None, ...]) -> Any:
    return SimpleNamespace(ts=ts, client_id=member, generation=2, offsets=offsets,
                           error_names=lambda: errors)


def _backend(commits: list[Any]) -> Any:
    return SimpleNamespace(commits=lambda: commits,
                           log_ends=lambda _topics=None: {("t0", 0): (0, 3)})


def test_records_tenures_and_commits_are_read_from_the_log_and_the_coordinator() -> None:
    log, deliveries = WireLog(lambda _horizon: True), Deliveries()
    deliveries.styles.update({"c1": "revoke", "c2": "none"})
    assigned = {"kind": "assigned", "partitions": [["t0", 0]], "generation": 1,
                "memberId": "m-1"}
    _event(log, 1, 10, "callback_end", **assigned)
    _event(log, 1, 20, "records", records=[["t0", 0, 0], ["t0", 0, 1]], generation=1)
    _event(log, 1, 30, "commit", style="revoke", offsets=[["t0", 0, 2]], outcome="ok",
           generation=1)
    _event(log, 1, 40, "callback_end", **{**assigned, "kind": "revoked"})
    _event(log, 2, 50, "callback_end", **{**assigned, "generation": 2}, member="c2")
    log.release()
    deliveries.take(log.entries)
    deliveries.end(2, 60, revoked=False)  # c2 crashed
    delivery = deliveries.log(_backend([
        _answer(25, "c1", (("t0", 0, 2),), (None,)),
        _answer(55, "c2", (("t0", 0, 2), ("t0", 1, 0)), ("ILLEGAL_GENERATION", None))]), {},
        caught_up=True)
    assert delivery.handed == (Handed(20, "c1", "t0", 0, 0, 1), Handed(20, "c1", "t0", 0, 1, 1))
    assert delivery.tenures == (Tenure("c1", "t0", 0, 10, 40, 1, last_generation=1),
                                Tenure("c2", "t0", 0, 50, 60, 2, revoked=False))
    assert delivery.commits == (
        Commit(25, "c1", 2, (("t0", 0, 2),), None, "revoke"),
        Commit(55, "c2", 2, (("t0", 0, 2),), "ILLEGAL_GENERATION", None),
        Commit(55, "c2", 2, (("t0", 1, 0),), None, None))
    # nobody owns t0-0 now: its records wait for the next owner, none is lost yet
    assert (delivery.high_watermarks, delivery.log_start) == ({}, {("t0", 0): 0})
    assert delivery.styles == {"c1": "revoke", "c2": "none"} and delivery.caught_up


def test_nothing_an_incarnation_logs_after_it_crashed_is_the_applications() -> None:
    log, deliveries = WireLog(lambda _horizon: True), Deliveries()
    deliveries.end(1, 15, revoked=False)
    _event(log, 1, 10, "records", records=[["t0", 0, 0]], generation=None)
    _event(log, 1, 20, "records", records=[["t0", 0, 1]], generation=None)
    log.release()
    deliveries.take(log.entries)
    _event(log, 2, 30, "callback_end", kind="assigned", partitions=[["t0", 0]],
           generation=None, memberId=None, member="c2")
    log.release()
    deliveries.take(log.entries)
    delivery = deliveries.log(_backend([]), {}, caught_up=False)
    assert [h.offset for h in delivery.handed] == [0]
    assert delivery.high_watermarks == {("t0", 0): 3}  # c2 owns it now
    assert delivery.handed[0].generation is None



def _assignments(deliveries: Deliveries) -> tuple[Tenure, ...]:
    """c1 is assigned t0-0 and t0-1, then t0-1 alone, with no revoke between."""
    log = WireLog(lambda _horizon: True)
    for ts, partitions in ((10, [["t0", 0], ["t0", 1]]), (30, [["t0", 1]])):
        _event(log, 1, ts, "callback_end", kind="assigned", partitions=partitions,
               generation=ts // 10, memberId="m-1")
    log.release()
    deliveries.take(log.entries)
    return deliveries.log(_backend([]), {}, caught_up=True).tenures


def test_an_assignment_of_a_client_without_revoke_callback_ends_the_partitions_it_leaves_out(
        ) -> None:
    deliveries = Deliveries()
    deliveries.revokes("c1", logged=False)
    assert _assignments(deliveries) == (Tenure("c1", "t0", 0, 10, 30, 1),
                                        Tenure("c1", "t0", 1, 10, None, 1))


def test_an_assignment_of_a_client_with_revoke_callback_ends_no_tenure() -> None:
    deliveries = Deliveries()
    deliveries.revokes("c1", logged=True)
    assert _assignments(deliveries) == (Tenure("c1", "t0", 0, 10, None, 1),
                                        Tenure("c1", "t0", 1, 10, None, 1))


@pytest.mark.wire
def test_a_story_on_the_wire_yields_every_record_tenure_and_watermark_and_holds_i17() -> None:
    group = librdkafka_group()
    try:
        group.set_partitions("t0", 2)
        group.join("c1", SPEC)
        for partition in (0, 0, 1):
            group.produce("t0", partition)
        settle(group)
        group.join("c2", SPEC)  # a rebalance: c1 gives a partition up
        group.produce("t0", 1)
        delivery = settle(group)[-1].delivery
    finally:
        group.close()
    assert delivery is not None and delivery.caught_up
    assert delivery.high_watermarks == {("t0", 0): 2, ("t0", 1): 2}
    assert delivery.styles == {"c1": "none", "c2": "none"} and delivery.commits == ()
    handed = {(h.topic, h.partition, h.offset) for h in delivery.handed}
    assert handed == {("t0", 0, 0), ("t0", 0, 1), ("t0", 1, 0), ("t0", 1, 1)}
    first = [t for t in delivery.tenures if t.member == "c1" and t.start == min(
        u.start for u in delivery.tenures)]
    assert {t.tp for t in first} == {("t0", 0), ("t0", 1)}  # c1 alone owned both
    assert all(t.end is not None and t.revoked for t in first)  # until the rebalance
    now = {t.tp: t.member for t in delivery.tenures if t.end is None}
    assert sorted(now.values()) == ["c1", "c2"]  # then one each
    assert judge_delivery(delivery).violations == ()
