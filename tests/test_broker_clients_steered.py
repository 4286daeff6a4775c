"""Steering aimed at one real member (librdkafka consumers): the others never see it, and
a group settles whichever SyncGroup answer (the leader's or the follower's) arrives first."""

from __future__ import annotations

import pytest

pytest.importorskip("kio")
confluent_kafka = pytest.importorskip("confluent_kafka")

from groupcheck.broker import Broker  # noqa: E402

from helpers.polled_group import PolledGroup  # noqa: E402

TOPIC, GROUP = "t", "g"
ALL = [f"{TOPIC}-{p}" for p in range(4)]
REBALANCE_IN_PROGRESS = 27
pytestmark = pytest.mark.broker_config(topics={TOPIC: 4}, initial_rebalance_delay_ms=500)


class Members(PolledGroup):
    """Two librdkafka consumers polled from the test's thread."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(ALL)
        self.consumers = {n: confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": GROUP, "client.id": n,
            "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
            "partition.assignment.strategy": "range"}) for n in ("a", "b")}
        for c in self.consumers.values():
            c.subscribe([TOPIC])


def test_an_error_aimed_at_one_consumer_leaves_the_other_untouched(broker: Broker) -> None:
    """Aimed at the follower: a follower that rejoins with the same subscription gets its
    assignment back without a rebalance, whereas the leader's rejoin rebalances the group
    (as Kafka's coordinator does), which would ask the other to rejoin too."""
    members = Members(broker.bootstrap)
    try:
        members.poll_until(members.settled)
        before = members.owned()
        description = broker.describe_group(GROUP)
        assert description is not None
        leader = next(m.client_id for m in description.members
                      if m.member_id == description.leader)
        aimed, other = ("b", "a") if leader == "a" else ("a", "b")
        mark = len(broker.exchanges())
        broker.fail_next(aimed, "Heartbeat", REBALANCE_IN_PROGRESS)

        def rejoined() -> bool:
            later = broker.exchanges()[mark:]
            failed = any(e.steering and e.who.client_id == aimed for e in later)
            return failed and any(e.api == "SyncGroup" and e.who.client_id == aimed
                                  and e.error_code == 0 for e in later) and members.settled()

        members.poll_until(rejoined)
        later = broker.exchanges()[mark:]
        assert [e.api for e in later if e.who.client_id == other and e.error_code] == []
        assert not any(e.api == "JoinGroup" for e in later if e.who.client_id == other)
        assert members.owned() == before
        assert broker.violations() == []
    finally:
        members.close()


@pytest.mark.parametrize("first", ["leader", "follower"])
def test_the_group_settles_whichever_sync_answer_is_released_first(broker: Broker,
                                                                     first: str) -> None:
    broker.hold("a", "SyncGroup")
    broker.hold("b", "SyncGroup")
    members = Members(broker.bootstrap)
    try:
        members.poll_until(lambda: len(broker.held()) == 2)
        description = broker.describe_group(GROUP)
        assert description is not None and description.leader is not None
        held = sorted(broker.held(), key=lambda h: h.exchange.who.member_id != description.leader)
        broker.release(*(held if first == "leader" else held[::-1]))
        members.poll_until(members.settled)
        assert broker.violations() == []
    finally:
        members.close()
