"""Finding: kafka-python 3.0.12 drops a join that finished while its application was not in
``poll``, and rejoins; two such members rebalance for ever.

kafka-python runs JoinGroup and SyncGroup as one task on its network thread and awaits it
inside ``poll``. A poll that times out leaves the task running, and the next poll awaits it
again, but if the task has *finished* by then, the next poll starts a new one: the member
sends a fresh JoinGroup for the generation it was just given, without applying it
(`BaseCoordinator.join_group_async`, ``is_done`` taken as "start again"). A consumer's join
finishes outside ``poll`` whenever the rebalance is completed by another member's request —
an application that works between polls, or polls two consumers in turn, as here. Each
dropped join starts the next rebalance, which the other member completes again: the group
rebalances again and again, for as long as the joins keep finishing outside the first
member's ``poll`` (for ever, when nothing else moves the timing; a busy machine may break
the cycle).

The story is made exact with groupcheck's broker: a's SyncGroup answer is held until the
application has left a's ``poll`` (it polls only b for a while), then released. What the
finding claims is read from the broker's log: a's next request to its coordinator after a
successful SyncGroup is a JoinGroup, again and again (`silence.rejoined_after_sync`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("kio")
kafka = pytest.importorskip("kafka")

from groupcheck.broker import Broker, BrokerConfig  # noqa: E402
from groupcheck.targets.wire.silence import rejoined_after_sync  # noqa: E402

TOPIC, GROUP = "orders", "storm"
POLL_MS = 50  # one application poll; a and b are polled in turn from this thread
HEARTBEAT_MS, SESSION_MS = 500, 6000
#: how long the application keeps polling both after the release: enough for several
#: rebalances (each waits for b's next heartbeat to hear of it, one heartbeat interval)
STORM_SECONDS = 8 * HEARTBEAT_MS / 1000


def _consumer(bootstrap: str, name: str) -> Any:
    return kafka.KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=GROUP,
                               client_id=name, session_timeout_ms=SESSION_MS,
                               heartbeat_interval_ms=HEARTBEAT_MS, enable_auto_commit=False)


def _poll_until(consumers: list[Any], done: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        for c in consumers:
            c.poll(timeout_ms=POLL_MS)


def test_finding_a_join_finished_between_polls_is_dropped_and_the_group_never_settles() -> None:
    with Broker(BrokerConfig(topics={TOPIC: 4})) as broker:
        a = _consumer(broker.bootstrap, "kp-a")
        _poll_until([a], lambda: bool(a.assignment()), SESSION_MS / 1000)
        assert a.assignment(), "a alone never got its partitions"
        broker.hold("kp-a", "SyncGroup")
        b = _consumer(broker.bootstrap, "kp-b")
        try:
            # both polled in turn until a, told to rejoin, has its SyncGroup answer held
            _poll_until([a, b], lambda: bool(broker.held()), SESSION_MS / 1000)
            assert broker.held(), "a's SyncGroup of the second generation never came"
            before = len(broker.exchanges())
            broker.release(*broker.held())
            _poll_until([b], lambda: False, 4 * POLL_MS / 1000)  # a's join ends meanwhile
            _poll_until([a, b], lambda: False, STORM_SECONDS)
            after = broker.exchanges()[before:]
        finally:
            for c in (b, a):  # b first: its LeaveGroup completes the join a has parked
                c.close(autocommit=False)
    # the generation a was given is thrown away: its next request is a new JoinGroup, and so
    # after every generation that follows (b completes each one, outside a's poll; b drops
    # one now and then too, when a's request completes it outside b's poll)
    dropped = rejoined_after_sync(after)
    assert dropped.get("kp-a", 0) >= 3, dropped
