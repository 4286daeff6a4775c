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
finding claims is read from the broker's log: a's next request to its coordinator after the
successful SyncGroup is a new JoinGroup (`silence.rejoined_after_sync`). Should a, alone,
never finish its first join, that is kafka-python's other recorded finding (a hang after the
SyncGroup answer), and the test expects it by that signature.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("kio")
kafka = pytest.importorskip("kafka")

from groupcheck.broker import Broker, BrokerConfig  # noqa: E402
from groupcheck.targets.wire.silence import (  # noqa: E402
    COORDINATOR_APIS,
    rejoined_after_sync,
)

from helpers.wire_findings import expect_kafka_python_hang, heartbeated, silent_story  # noqa: E402

TOPIC, GROUP = "orders", "storm"
POLL_MS = 50  # one application poll; a and b are polled in turn from this thread
HEARTBEAT_MS, SESSION_MS = 500, 6000
#: a lone member's join, or a rejoin heard of through a heartbeat, within two sessions (a
#: busy machine delays the client's own network thread too); a member silent for a session
#: after its SyncGroup answer by then is kafka-python's recorded hang
JOIN_WAIT = 2 * SESSION_MS / 1000
#: how long the application stays out of a's poll once a's SyncGroup answer is sent: a's
#: network thread only has to read it, but on a loaded machine it waits for a core
AWAY_SECONDS = 2 * HEARTBEAT_MS / 1000
#: how long the application then polls both: several rebalances (each waits for the other
#: member's next heartbeat to hear of it, one heartbeat interval)
STORM_SECONDS = 8 * HEARTBEAT_MS / 1000


def _consumer(bootstrap: str, name: str) -> Any:
    """A consumer that knows the topic's partitions before it joins (a leader without them
    assigns nothing and rejoins once they come, a rebalance this story does not need)."""
    consumer = kafka.KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=GROUP,
                                   client_id=name, session_timeout_ms=SESSION_MS,
                                   heartbeat_interval_ms=HEARTBEAT_MS, enable_auto_commit=False)
    assert consumer.partitions_for_topic(TOPIC) == set(range(4))
    return consumer


def _heartbeated(broker: Broker) -> bool:
    """Has a had a Heartbeat answered without error (it completed a generation on its side)?"""
    return "kp-a" in heartbeated(broker.exchanges())


def _poll_until(consumers: list[Any], done: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        for c in consumers:
            c.poll(timeout_ms=POLL_MS)


def test_finding_a_join_finished_between_polls_is_dropped_for_a_new_join() -> None:
    with Broker(BrokerConfig(topics={TOPIC: 4})) as broker:
        a = _consumer(broker.bootstrap, "kp-a")
        b: Any = None
        try:
            _poll_until([a], lambda: _heartbeated(broker), JOIN_WAIT)  # a alone, the leader
            if not _heartbeated(broker):  # its LeaveGroup ends the silence the story needs
                a.close(autocommit=False)
                expect_kafka_python_hang(silent_story(broker.exchanges(), SESSION_MS),
                                         {"kafka-python"})
            assert _heartbeated(broker), "\n".join(e.line() for e in broker.exchanges())
            broker.hold("kp-a", "SyncGroup")
            b = _consumer(broker.bootstrap, "kp-b")
            # both polled in turn until a, told to rejoin, has its SyncGroup answer held
            _poll_until([a, b], lambda: bool(broker.held()), JOIN_WAIT)
            assert broker.held(), "a's SyncGroup of the second generation never came"
            [held] = broker.held()
            broker.release(held)
            _poll_until([b], lambda: False, AWAY_SECONDS)  # a's join ends meanwhile
            _poll_until([a, b], lambda: False, STORM_SECONDS)
            after = [e for e in broker.exchanges() if e.seq >= held.exchange.seq]
        finally:
            for c in (b, a):  # b first: its LeaveGroup completes the join a has parked
                if c is not None:
                    c.close(autocommit=False)
    # the generation a was given is thrown away: its next request is a new JoinGroup. What
    # follows depends on timing: every generation b completes outside a's poll is dropped
    # again (b drops one now and then too); on a quiet machine a drops one at every
    # rebalance, so the storm shows as well
    dropped = rejoined_after_sync(after)
    assert dropped.get("kp-a", 0) >= 1, [e.line() for e in after if e.api in COORDINATOR_APIS]
    first = next(e for e in after if e.who.client_id == "kp-a" and e.api in COORDINATOR_APIS
                 and e.api != "SyncGroup")
    assert first.api == "JoinGroup", first.line()  # no Heartbeat of the generation it got
