"""A few groups of consumers against the real coordinator: eager and cooperative groups
share the partitions, never own one twice, and an upgrade from eager to cooperative
needs two bounces."""

from __future__ import annotations

from typing import Any

import pytest

from groupcheck.impl.assignors.range import RangeAssignor
from groupcheck.impl.consumer import Consumer
from groupcheck.impl.consumer_listener import ConsumerError
from groupcheck.impl.consumer_state import MemberState
from groupcheck.impl.types import Assignment, Cluster, Subscription, TopicPartition

from helpers.consumer import COOPERATIVE, EAGER


class CoopAssignor:
    """A small COOPERATIVE assignor: members keep owned partitions up to their quota; a
    partition someone else still owns is withheld for a round (KIP-429's two rounds)."""

    name = "coop-test"
    supported_protocols = (COOPERATIVE, EAGER)

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        members = sorted(subscriptions)
        topics = sorted({t for s in subscriptions.values() for t in s.topics})
        every = [(t, p) for t in topics for p in range(cluster.partitions.get(t, 0))]
        n = len(members)
        quota = {m: len(every) // n + (i < len(every) % n) for i, m in enumerate(members)}
        result: dict[str, list[TopicPartition]] = {m: [] for m in members}
        owned_by_anyone = {tp for s in subscriptions.values() for tp in s.owned_partitions}
        for m in members:
            for tp in sorted(subscriptions[m].owned_partitions):
                if tp in every and len(result[m]) < quota[m]:
                    result[m].append(tp)
        for tp in every:
            if tp not in owned_by_anyone:
                taker = next((m for m in members if len(result[m]) < quota[m]), None)
                if taker is not None:
                    result[taker].append(tp)
        return {m: Assignment(ps) for m, ps in result.items()}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        return None

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return None


# -- against the real coordinator ------------------------------------------------------------


def run_group(coordinator: Any, consumers: list[Consumer], rounds: int, start: int = 0,
              raised: list[ConsumerError] | None = None) -> int:
    """Poll everyone, send their requests, deliver the responses; 100 ms per round.
    A member that failed fatally keeps raising from poll; that is left to the test, as is
    what poll raised to the application when ``raised`` collects it."""
    by_name = {c.client_id: c for c in consumers}
    now = start
    for _ in range(rounds):
        now += 100
        responses = coordinator.advance(now)
        for c in consumers:
            try:
                if c.state is not MemberState.CLOSED:
                    c.poll(now)
            except ConsumerError as exc:
                if raised is not None:
                    raised.append(exc)
                elif c.state is not MemberState.FATAL:
                    raise
            for env in c.outbox():
                responses += coordinator.receive(env, now)
        for env in responses:
            if by_name[env.client].state is not MemberState.CLOSED:
                by_name[env.client].receive(env, now)
    return now


def settled(consumers: list[Consumer]) -> bool:
    return all(c.state is MemberState.STABLE and not c.in_flight and not c.outbox()
               for c in consumers)


@pytest.fixture
def coordinator() -> Any:
    from groupcheck.impl.coordinator import GroupCoordinator

    return GroupCoordinator("g", initial_rebalance_delay_ms=0)


def test_three_eager_consumers_share_the_partitions_and_one_leaves(coordinator: Any) -> None:
    cluster = Cluster({"t": 6})
    group = [Consumer(f"c{i}", [RangeAssignor()], cluster=cluster) for i in range(3)]
    for c in group:
        c.subscribe(["t"])
    now = run_group(coordinator, group, 20)
    assert settled(group)
    owned = [c.owned_partitions for c in group]
    assert sorted(len(o) for o in owned) == [2, 2, 2]
    assert frozenset().union(*owned) == {("t", p) for p in range(6)}
    group[0].close()
    run_group(coordinator, group, 20, now)
    rest = group[1:]
    assert settled(rest) and sorted(len(c.owned_partitions) for c in rest) == [3, 3]
    assert {c.generation for c in rest} == {group[1].generation}


def test_cooperative_consumers_never_own_a_partition_twice(coordinator: Any) -> None:
    cluster = Cluster({"t": 4})
    group = [Consumer("a", [CoopAssignor()], cluster=cluster, heartbeat_interval_ms=300)]
    group[0].subscribe(["t"])
    now = run_group(coordinator, group, 10)
    assert group[0].owned_partitions == {("t", p) for p in range(4)}
    group.append(Consumer("b", [CoopAssignor()], cluster=cluster, heartbeat_interval_ms=300))
    group[1].subscribe(["t"])
    for _ in range(40):
        now = run_group(coordinator, group, 1, now)
        a, b = (c.owned_partitions for c in group)
        assert not a & b                                  # I1 at every step
    assert settled(group)
    assert sorted(len(c.owned_partitions) for c in group) == [2, 2]
    revoked = [x for x in group[0].callback_log if x.name == "on_partitions_revoked"]
    assert len(revoked) == 1 and len(revoked[0].partitions) == 2
    assert not any(x.name == "on_partitions_lost" for c in group for x in c.callback_log)


def test_cooperative_sticky_group_grows_without_double_ownership(coordinator: Any) -> None:
    from groupcheck.impl import assignors
    cluster = Cluster({"t": 6, "u": 3})
    group: list[Consumer] = []
    now = 0
    for name in ("a", "b", "c"):
        member = Consumer(name, [assignors.make_assignor("cooperative-sticky")],
                          cluster=cluster, heartbeat_interval_ms=300)
        member.subscribe(["t", "u"])
        group.append(member)
        for _ in range(40):
            now = run_group(coordinator, group, 1, now)
            owned = [c.owned_partitions for c in group]
            assert sum(len(o) for o in owned) == len(frozenset().union(*owned))   # I1
        assert settled(group), name
        sizes = sorted(len(c.owned_partitions) for c in group)
        assert sizes[-1] - sizes[0] <= 1 and sum(sizes) == 9
    assert all(x.name != "on_partitions_lost" for c in group for x in c.callback_log)


def test_kip429_upgrade_needs_two_bounces(coordinator: Any) -> None:
    """[range, cooperative-sticky] runs EAGER with range; bouncing one member to
    [cooperative-sticky] is safe; a member with only [range] next to it is refused at every
    poll (Kafka's consumer rethrows INCONSISTENT_GROUP_PROTOCOL and joins again next poll)."""
    from groupcheck.impl.assignors import make_assignor

    cluster = Cluster({"t": 4})

    def member(name: str, *strategies: str) -> Consumer:
        c = Consumer(name, [make_assignor(s) for s in strategies], cluster=cluster,
                     heartbeat_interval_ms=300)
        c.subscribe(["t"])
        return c

    group = [member(n, "range", "cooperative-sticky") for n in ("a", "b")]
    now = run_group(coordinator, group, 30)
    assert settled(group) and {c.protocol_name for c in group} == {"range"}
    bounced = group[1]
    bounced.close()
    group[1] = member("b2", "cooperative-sticky")            # first bounce done, second begins
    assert group[1].protocol is COOPERATIVE and group[0].protocol is EAGER
    now = run_group(coordinator, [bounced, *group], 40, now)
    assert settled(group) and {c.protocol_name for c in group} == {"cooperative-sticky"}
    assert sorted(len(c.owned_partitions) for c in group) == [2, 2]
    late = member("old", "range")
    group.append(late)
    raised: list[ConsumerError] = []
    run_group(coordinator, group, 10, now, raised)
    assert late.state is MemberState.PREPARING_REBALANCE and late.generation < 0
    assert len(raised) >= 2 and {e.kafka_class for e in raised} == {
        "InconsistentGroupProtocolException"}
    assert settled(group[:2]) and {c.protocol_name for c in group[:2]} == {"cooperative-sticky"}
