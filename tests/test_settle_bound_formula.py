"""`settle_bound` as a pure function of a group's timeouts, and where the timeouts come from
(the wire's clients, the model's tally of what happened since the last settle)."""

from __future__ import annotations

import pytest

from groupcheck.model import events as E
from groupcheck.model.event_types import Crash, Join
from groupcheck.model.group_events import CoordinatorError, Partitions, Settle
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.settle_bound import Disturbances, GroupTimeouts, settle_bound
from groupcheck.targets.adapters.builtin import BuiltinGroup
from groupcheck.targets.wire.timeouts import SETTLE_MARGIN_MS, group_timeouts

KAFKA_DEFAULTS = GroupTimeouts(session_timeout_ms=45_000, rebalance_timeout_ms=300_000,
                               heartbeat_interval_ms=3_000, join_request_timeout_ms=305_000,
                               sync_request_timeout_ms=30_000)


def test_an_eager_crash_costs_a_session_timeout_and_one_rebalance() -> None:
    bound = settle_bound(KAFKA_DEFAULTS, Disturbances(rebalances=1, abandoned=1))
    assert bound.ms == 45_000 + 3_000 + 300_000
    assert bound.derivation == ("1 abandoned member ids × session timeout 45000 + 1 rebalances "
                                "× (heartbeat interval 3000 + rebalance timeout 300000) ms")


def test_a_cooperative_change_costs_its_two_follow_up_rebalances_too() -> None:
    eager = settle_bound(KAFKA_DEFAULTS, Disturbances(rebalances=1)).ms
    cooperative = settle_bound(KAFKA_DEFAULTS, Disturbances(rebalances=3)).ms
    assert cooperative == 3 * eager == 3 * (3_000 + 300_000)


def test_each_abandoned_id_may_hold_the_group_a_session_timeout() -> None:
    one = settle_bound(KAFKA_DEFAULTS, Disturbances(rebalances=1, abandoned=1)).ms
    two = settle_bound(KAFKA_DEFAULTS, Disturbances(rebalances=1, abandoned=2)).ms
    assert two - one == KAFKA_DEFAULTS.session_timeout_ms


def test_a_delayed_answer_costs_at_most_the_request_timeout_of_its_api() -> None:
    base = settle_bound(KAFKA_DEFAULTS, Disturbances(rebalances=1)).ms
    past = settle_bound(KAFKA_DEFAULTS, Disturbances(1, delayed=(("SyncGroup", 90_000),)))
    short = settle_bound(KAFKA_DEFAULTS, Disturbances(1, delayed=(("JoinGroup", 2_000),)))
    assert past.ms - base == 30_000 and "SyncGroup request timeout 30000" in past.derivation
    assert short.ms - base == 2_000 and "JoinGroup answer 2000 late" in short.derivation


def test_a_delay_on_a_client_whose_timeouts_are_not_modelled_costs_the_delay() -> None:
    unmodelled = GroupTimeouts(10_000, 30_000, 3_000)
    base = settle_bound(unmodelled, Disturbances(rebalances=1)).ms
    assert settle_bound(unmodelled, Disturbances(1, delayed=(("JoinGroup", 90_000),))).ms \
        - base == 90_000


def test_the_margin_is_added_and_named() -> None:
    bound = settle_bound(GroupTimeouts(10_000, 30_000, 3_000, margin_ms=1_000),
                         Disturbances(rebalances=2))
    assert bound.ms == 2 * 33_000 + 1_000 and bound.derivation.endswith("+ margin 1000 ms")


def test_a_wire_group_takes_its_longest_client_request_timeouts() -> None:
    config = {"session_timeout_ms": 2000, "heartbeat_interval_ms": 300,
              "max_poll_interval_ms": 3000}
    mixed = group_timeouts({"kafka-python", "librdkafka"}, config)
    assert (mixed.session_timeout_ms, mixed.rebalance_timeout_ms,
            mixed.heartbeat_interval_ms) == (2000, 3000, 300)
    # kafka-python: 30 s request timeout; librdkafka: SyncGroup = session + 3 s grace
    assert mixed.join_request_timeout_ms == 30_000 and mixed.sync_request_timeout_ms == 30_000
    assert mixed.margin_ms == SETTLE_MARGIN_MS
    rdkafka = group_timeouts({"librdkafka"}, config)
    assert (rdkafka.join_request_timeout_ms, rdkafka.sync_request_timeout_ms) == (6000, 5000)


def test_a_wire_group_with_an_unmodelled_client_has_no_request_timeouts() -> None:
    """A release whose timeouts are not modelled (kafka-python 2.0.2), or that enforces none
    (KafkaJS 1.16.0), leaves the group's unmodelled: a late answer costs its whole delay."""
    for release in ("kafka-python@2.0.2", "kafkajs@1.16.0"):
        timeouts = group_timeouts({"kafka-python", release}, {})
        assert timeouts.join_request_timeout_ms is None
        assert timeouts.sync_request_timeout_ms is None
    assert group_timeouts({"kafkajs", "kafka-python"}, {}).sync_request_timeout_ms == 30_000


@pytest.mark.parametrize(("event", "abandoned"), [
    (Crash("c2"), 1),
    (CoordinatorError("c2", "heartbeat", "UNKNOWN_MEMBER_ID"), 1),
    (CoordinatorError("c2", "heartbeat", "REBALANCE_IN_PROGRESS"), 0),
])
def test_the_model_counts_the_member_ids_abandoned_since_the_last_settle(
        event: E.DomainEvent, abandoned: int) -> None:
    target, model = BuiltinGroup("builtin:range"), ReferenceModel()
    try:
        for step in (Partitions("t0", 2), Join("c1", ("t0",), ("range",)),
                     Join("c2", ("t0",), ("range",)), Settle(), event):
            assert E.apply_event(step, target, model) == []
        assert model.abandoned == abandoned
        assert E.apply_event(Settle(), target, model) == []
        assert model.abandoned == 0 and model.injected_errors == 0
    finally:
        target.close()
