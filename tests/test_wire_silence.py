"""What the wire layer reads from a broker's exchange log: the members that fell silent after
their SyncGroup answer (kafka-python's recorded hang)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from groupcheck.targets.wire.silence import silent_after_sync


def _exchange(who: str, api: str, at: int, generation: int = 0, error: int = 0) -> Any:
    request = SimpleNamespace(generation_id=generation)
    return SimpleNamespace(who=SimpleNamespace(client_id=who), api=api, request=request,
                           received_ms=at, answered_ms=at + 1, error_code=error)


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
