"""What the wire layer reads from a broker's exchange log: the members that fell silent after
their SyncGroup answer (kafka-python's recorded hang), and those that rejoined unprompted
after it (kafka-python's dropped joins); the mock's proxy names the silent ones too."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from groupcheck.targets.wire.backends.mock_proxy import GroupLedger
from groupcheck.targets.wire.silence import rejoined_after_sync, silent_after_sync


def _exchange(who: str, api: str, at: int, generation: int = 0, error: int = 0) -> Any:
    request = SimpleNamespace(generation_id=generation)
    return SimpleNamespace(who=SimpleNamespace(client_id=who), api=api, request=request,
                           received_ms=at, answered_ms=at + 1, error_code=error,
                           received_ns=at * 1_000_000)


def test_a_member_silent_after_its_syncgroup_answer_is_named_with_its_generation() -> None:
    """kafka-python's hang (findings/wire-kafka-python-range-subscription-change-I11.json)
    as the broker sees it: b's SyncGroup of generation 2 is answered and b sends its
    coordinator nothing for longer than its session timeout (only a LeaveGroup when it
    closes), while a heartbeats on; a SyncGroup answered with an error, or a quick
    heartbeat after it, is no silence."""
    log = [_exchange("a", "SyncGroup", 100, 2), _exchange("b", "SyncGroup", 100, 2),
           _exchange("c", "SyncGroup", 100, 2, error=27),
           *(_exchange("a", "Heartbeat", t) for t in range(600, 9000, 500)),
           _exchange("b", "OffsetCommit", 5100), _exchange("b", "LeaveGroup", 9000)]
    assert silent_after_sync(log, 6000) == {"b": 2}
    assert silent_after_sync(log, 9000) == {}
    assert silent_after_sync(log[:3], 6000) == {}  # nobody's clock has moved on yet


def test_a_lone_member_silent_since_its_syncgroup_answer_is_named_when_asked_now() -> None:
    """A lone member (nobody else's traffic moves the log's clock) whose last request was
    its SyncGroup, answered, and a Metadata request: silent by now (``at_ns``, 9 s on),
    not by the log's last request."""
    log = [_exchange("a", "JoinGroup", 50, 2), _exchange("a", "SyncGroup", 100, 2),
           _exchange("a", "Metadata", 150)]
    assert silent_after_sync(log, 6000) == {}
    assert silent_after_sync(log, 6000, at_ns=9_000 * 1_000_000) == {"a": 2}
    assert silent_after_sync(log, 6000, at_ns=3_000 * 1_000_000) == {}


def test_a_join_group_right_after_a_successful_syncgroup_is_counted_per_member() -> None:
    """a drops each generation it is given (a JoinGroup is its next request to the
    coordinator after the SyncGroup answer; an OffsetCommit between does not count); b
    rejoins only after a heartbeat told it to (REBALANCE_IN_PROGRESS), and c's SyncGroup
    failed: neither is counted."""
    log = [_exchange("a", "SyncGroup", 100, 2), _exchange("b", "SyncGroup", 100, 2),
           _exchange("c", "SyncGroup", 100, 2, error=27), _exchange("c", "JoinGroup", 110),
           _exchange("a", "OffsetCommit", 140), _exchange("a", "JoinGroup", 150),
           _exchange("b", "Heartbeat", 600, error=27), _exchange("b", "JoinGroup", 610),
           _exchange("a", "SyncGroup", 620, 3), _exchange("b", "SyncGroup", 620, 3),
           _exchange("a", "JoinGroup", 660), _exchange("b", "Heartbeat", 1100)]
    assert rejoined_after_sync(log) == {"a": 2}


def test_the_mocks_proxy_names_a_member_silent_since_its_syncgroup_answer() -> None:
    """The same hang behind librdkafka's mock (no exchange log; the proxy sees each request):
    b's SyncGroup of generation 3 was answered 3 s ago and b has sent no group request since;
    a heartbeated after its answer; c's answer is too recent to tell."""
    ledger, now = GroupLedger(), time.monotonic_ns()
    ledger.synced_at = {"a": (3, now - 3_000_000_000), "b": (3, now - 3_000_000_000),
                        "c": (3, now - 500_000_000)}
    ledger.asked_at = {"a": now - 2_500_000_000, "b": now - 3_100_000_000,
                       "c": now - 600_000_000}
    assert ledger.silent(2000) == {"b": 3}
