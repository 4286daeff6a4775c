"""The wire layer on both cluster backends: groupcheck's own broker (the default) and
librdkafka's mock.

The same stories give the same verdicts on both — the same invariants broken, or none —
where the mock is not at fault (its defects are handled inside its backend), and on
groupcheck's broker an error the state machine aims at one member reaches that member only.
The default run compares two stories; ``tox -e wire`` compares every shipped client
(librdkafka, kafka-python, aiokafka, Kafka's Java consumer, KafkaJS) and a mixed group of
three.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from groupcheck.model.event_types import Subscribe
from groupcheck.model.events import apply_event
from groupcheck.model.group_events import CoordinatorError, Settle
from groupcheck.model.spec import ReferenceModel
from groupcheck.targets.registry import wire_clients

from helpers.environment import missing, on_broker, resolve
from helpers.wire_cases import join, smoke, topics, without_pauses
from test_wire import run as run_story

pytest.importorskip("kio")
pytestmark = [pytest.mark.wire, pytest.mark.skipif(bool(missing("librdkafka")),
                                                  reason="the mock cluster needs confluent-kafka")]


def run(target: str, broker: str, events: list[dict[str, object]],
        monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], object]:
    """`test_wire.run` with the backend chosen as ``--broker`` does."""
    return run_story(target, events, on_broker(broker))


STORIES = {
    "librdkafka-cooperative-sticky": ("librdkafka:cooperative-sticky",
                                      smoke("cooperative-sticky")),
    "mixed-librdkafka-kafka-python-range": (
        "wire:mixed:librdkafka+kafka-python:range",
        [e for e in without_pauses(smoke("range")) if not isinstance(e, Subscribe)]),
}


def _plain(assignor: str) -> list[dict[str, object]]:
    """The smoke without pauses and subscription changes (kafka-python's and aiokafka's
    findings cover those)."""
    return [e for e in without_pauses(smoke(assignor)) if not isinstance(e, Subscribe)]


#: the long run (tox -e wire, ``pytest -m wire``) compares every shipped client's smoke too
LONG_STORIES = {
    "kafka-python-range": ("wire:kafka-python:range", _plain("range")),
    "aiokafka-roundrobin": ("wire:aiokafka:roundrobin", _plain("roundrobin")),
    "librdkafka-range": ("librdkafka:range", smoke("range")),
    "java-range": ("wire:java:range", smoke("range")),
    "java-cooperative-sticky": ("wire:java:cooperative-sticky",
                                smoke("cooperative-sticky")),
    "kafkajs-roundrobin": ("wire:kafkajs:roundrobin", _plain("roundrobin")),
    "mixed-java-librdkafka-kafka-python-range": (
        "wire:mixed:java+librdkafka+kafka-python:range",
        [*_plain("range")[:-2], join("c3", "range"), Settle(),
         *_plain("range")[-2:]]),
}


def verdict(violations: list[str]) -> list[str]:
    """The invariants a run broke (its names and numbers aside: real clients do not always
    interleave the same way)."""
    return sorted({v.split(":", 1)[0] for v in violations})


@pytest.mark.parametrize("story", sorted(STORIES) + [
    pytest.param(s, marks=pytest.mark.slow) for s in sorted(LONG_STORIES)])
def test_the_same_story_gives_the_same_verdicts_on_the_mock_and_on_the_broker(
        story: str, monkeypatch: pytest.MonkeyPatch) -> None:
    target, events = (STORIES | LONG_STORIES)[story]
    clients = wire_clients(target.split(":", 1)[1])[0] if target.startswith("wire:") \
        else ("librdkafka",)
    for client in clients:
        if missing(client):
            pytest.skip(missing(client))
    on_mock, _ = run(target, "mock", events, monkeypatch)
    on_broker, group = run(target, "groupcheck", events, monkeypatch)
    assert verdict(on_broker) == verdict(on_mock), (on_broker, on_mock)
    assert group.backend.name == "groupcheck"  # type: ignore[attr-defined]
    assert len(group.shown_rounds) >= 3  # type: ignore[attr-defined]


def test_an_error_aimed_at_one_member_is_seen_by_that_member_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The state machine's coordinator_answers_with_error, aimed at the follower's next
    Heartbeat: the follower alone gets REBALANCE_IN_PROGRESS and rejoins with unchanged
    metadata, which a stable group answers without a rebalance; the leader is never asked to
    rejoin and keeps what it owns. (Which of c1 and c2 leads depends on whose JoinGroup reached
    the coordinator first; a leader's rejoin would rightly rebalance everyone.)"""
    resolved = resolve("librdkafka:range", settings=on_broker("groupcheck"))
    assert resolved.group is not None
    group = resolved.group()
    model = ReferenceModel()
    broker = group.backend.broker  # type: ignore[attr-defined]
    found: list[str] = []
    try:
        for event in [*topics(), join("c1", "range"), join("c2", "range"), Settle()]:
            found += apply_event(event, group, model)
        (group_id,) = broker.group_ids()
        stable = broker.rounds(group_id)[-1]
        leader = stable.client_ids[stable.leader]
        follower = ({"c1", "c2"} - {leader}).pop()
        found += apply_event(CoordinatorError(follower, "heartbeat", "REBALANCE_IN_PROGRESS"),
                             group, model)
        failed = _wait_for(lambda: [e for e in broker.exchanges() if e.steering])
        rejoined = _wait_for(lambda: [e for e in broker.exchanges() if e.seq > failed[0].seq
                                      and e.api == "SyncGroup" and e.who.client_id == follower
                                      and e.answered_ms is not None])
        found += apply_event(Settle(), group, model)
        after = [e for e in broker.exchanges() if e.seq > failed[0].seq]
        last = broker.rounds(group_id)[-1]
    finally:
        group.close()
    assert found == []
    assert [(e.who.client_id, e.api, e.error_code) for e in failed] == [
        (follower, "Heartbeat", 27)]
    assert rejoined and any(e.api == "JoinGroup" and e.who.client_id == follower for e in after)
    story = [(e.who.client_id, e.api, e.error_code, e.received_ms) for e in after]
    assert not any(e.api == "JoinGroup" and e.who.client_id == leader for e in after), story
    assert not any(e.error_code for e in after if e.who.client_id == leader), story
    assert last.generation == stable.generation, story


def _wait_for(found: Callable[[], list[Any]], timeout: float = 15.0) -> list[Any]:
    deadline = time.monotonic() + timeout
    while not (items := found()):
        assert time.monotonic() < deadline, "the broker never saw it"
        time.sleep(0.05)
    return items
