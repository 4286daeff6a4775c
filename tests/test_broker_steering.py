"""Steering groupcheck's broker per member: errors, delays, held responses released in a
chosen order, dropped sessions, topics grown and deleted; and the broker-side verdicts.
Steering meets members that go: a held answer whose member crashed, an answer two
releasers let go, rules aimed at a member that left — none is an error, and none hits the
next member of that name.

Members here are bare protocol clients (`broker_wire.RawClient`), so every step is
deterministic; `test_broker_clients` covers real clients.
"""

from __future__ import annotations

import dataclasses
import socket
import struct

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.broker.steering import ExchangeLog, Who  # noqa: E402
from groupcheck.impl.consumer_protocol import decode_assignment, encode_subscription  # noqa: E402
from groupcheck.impl.types import Subscription  # noqa: E402

from helpers.broker_wire import RawClient, form_pair, sync_both  # noqa: E402

GROUP, TOPIC = "g", "t"
ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 22, 25, 27
pytestmark = pytest.mark.broker_config(topics={TOPIC: 4})


def test_an_error_aimed_at_one_member_reaches_that_member_only(broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    sync_both(p, GROUP, TOPIC)
    assert p.a.receive().error_code == 0 and p.b.receive().error_code == 0
    broker.fail_next("b", "Heartbeat", ILLEGAL_GENERATION)
    assert p.a.heartbeat(GROUP, p.a_id, 2).error_code == 0
    assert p.b.heartbeat(GROUP, p.b_id, 2).error_code == ILLEGAL_GENERATION
    assert p.a.heartbeat(GROUP, p.a_id, 2).error_code == 0
    assert p.b.heartbeat(GROUP, p.b_id, 2).error_code == 0  # fired once, as asked
    failed = [e for e in broker.exchanges() if e.steering]
    assert [(e.who.client_id, e.api, e.error_code) for e in failed] == [
        ("b", "Heartbeat", ILLEGAL_GENERATION)]
    description = broker.describe_group(GROUP)
    assert description is not None and description.state == "Stable"  # never reached it


def test_a_member_named_by_its_member_id_is_failed_too(broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.fail_next(p.a_id, "SyncGroup", UNKNOWN_MEMBER_ID)
    sync_both(p, GROUP, TOPIC)
    assert p.a.receive().error_code == UNKNOWN_MEMBER_ID
    # the leader's assignment never reached the coordinator: the follower still waits
    assert not p.b.pending(0.2)


@pytest.mark.parametrize("first", ["leader", "follower"])
def test_held_sync_answers_go_out_in_the_order_released(broker: Broker, first: str) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.hold("a", "SyncGroup")
    broker.hold("b", "SyncGroup")
    sync_both(p, GROUP, TOPIC)
    held = {h.exchange.who.client_id: h for h in broker.wait_held(2)}
    order = ["a", "b"] if first == "leader" else ["b", "a"]
    clients = {"a": p.a, "b": p.b}
    assert not p.a.pending(0.1) and not p.b.pending(0.1)
    broker.release(held[order[0]])
    assert clients[order[0]].pending(5) and not clients[order[1]].pending(0.2)
    broker.release(held[order[1]])
    answers = {name: clients[name].receive() for name in order}
    assert {n: a.error_code for n, a in answers.items()} == {"a": 0, "b": 0}
    mine = decode_assignment(answers["b"].assignment).to_api().partitions
    assert mine == [(TOPIC, 2), (TOPIC, 3)]


def test_a_delayed_answer_arrives_that_much_later(broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    sync_both(p, GROUP, TOPIC)
    p.a.receive(), p.b.receive()
    broker.delay("b", "Heartbeat", 0.3)
    assert p.b.heartbeat(GROUP, p.b_id, 2).error_code == 0
    beat = [e for e in broker.exchanges() if e.api == "Heartbeat" and e.steering][-1]
    assert beat.answered_ms is not None and beat.answered_ms - beat.received_ms >= 300


def test_a_dropped_session_removes_the_member_and_rebalances(broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    sync_both(p, GROUP, TOPIC)
    p.a.receive(), p.b.receive()
    broker.drop_session(GROUP, p.b_id)
    description = broker.describe_group(GROUP)
    assert description is not None
    assert [m.member_id for m in description.members] == [p.a_id]
    assert p.b.heartbeat(GROUP, p.b_id, 2).error_code == UNKNOWN_MEMBER_ID
    assert p.a.heartbeat(GROUP, p.a_id, 2).error_code == REBALANCE_IN_PROGRESS


def _partition_count(client: RawClient) -> tuple[int, int]:
    answer = client.call(3, 12, {"topics": [{"name": TOPIC, "topic_id": None}],
                                 "allow_auto_topic_creation": False,
                                 "include_topic_authorized_operations": False})
    topic = answer.topics[0]
    return int(topic.error_code), len(topic.partitions)


def test_grown_and_deleted_topics_show_in_metadata(broker: Broker) -> None:
    client = RawClient(broker.bootstrap, "admin")
    assert _partition_count(client) == (0, 4)
    broker.grow_topic(TOPIC, 6)
    assert _partition_count(client) == (0, 6)
    with pytest.raises(Exception, match="cannot grow"):
        broker.grow_topic(TOPIC, 5)
    broker.delete_topic(TOPIC)
    assert _partition_count(client) == (3, 0)  # UNKNOWN_TOPIC_OR_PARTITION, not re-created


def _verdicts_of(broker: Broker, invariant: str) -> list[str]:
    return [m for v in broker.verdicts() if v.invariant == invariant for m in v.messages]


def test_a_partition_given_to_two_members_is_an_i1_verdict_before_anyone_gets_it(
        broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    p.b.send_sync(GROUP, p.b_id, 2)
    p.a.send_sync(GROUP, p.a_id, 2, {p.a_id: [(TOPIC, 0), (TOPIC, 1), (TOPIC, 2)],
                                     p.b_id: [(TOPIC, 2), (TOPIC, 3)]})
    p.a.receive(), p.b.receive()
    assert _verdicts_of(broker, "I1") == ["I1: t-2 assigned to " + ", ".join(
        sorted([p.a_id, p.b_id], key=[p.a_id, p.b_id].index))]
    verdict = next(v for v in broker.verdicts() if v.invariant == "I1" and not v.holds)
    answers = [e.answered_ms for e in broker.exchanges()
               if e.api == "SyncGroup" and e.request.generation_id == 2]
    assert len(answers) == 2 and all(a is not None and verdict.at_ms <= a for a in answers)


def test_a_partition_the_leader_knew_of_and_left_out_is_an_i2_verdict(broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    p.b.send_sync(GROUP, p.b_id, 2)
    p.a.send_sync(GROUP, p.a_id, 2, {p.a_id: [(TOPIC, 0)], p.b_id: [(TOPIC, 2), (TOPIC, 3)]})
    p.a.receive(), p.b.receive()
    assert _verdicts_of(broker, "I2") == ["I2: t partitions [1] are assigned to nobody"]


def test_a_leader_never_told_of_a_topic_is_not_blamed_for_leaving_it_out(
        broker: Broker) -> None:
    a = RawClient(broker.bootstrap, "uninformed")
    joined = a.join(GROUP, [TOPIC])
    a.send_sync(GROUP, joined.member_id, joined.generation_id, {joined.member_id: []})
    assert a.receive().error_code == 0
    assert _verdicts_of(broker, "I2") == []
    assert [v.invariant for v in broker.verdicts() if v.subject.startswith("assignment")] == [
        "I10", "I1", "I2", "I6"]


def test_a_leader_that_leaves_a_known_topic_out_whole_is_excused_once_for_lacking_metadata(
        broker: Broker) -> None:
    """kafka-python's leader can assign before it applies a Metadata answer that came on
    another connection, and Kafka's assignors skip a topic they have no metadata for: a
    topic missing whole from an assignment is not I2 (the leader rejoins once it learns the
    topic), but the group's next assignment leaving it out whole again is; one partition of
    it missing always is (the test above)."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    p.b.send_sync(GROUP, p.b_id, 2)
    p.a.send_sync(GROUP, p.a_id, 2, {p.a_id: [], p.b_id: []})
    p.a.receive(), p.b.receive()
    assert _verdicts_of(broker, "I2") == []
    p.a.send_join(GROUP, p.a_id, [TOPIC])  # the leader rejoins, as on learning the topic
    assert p.b.heartbeat(GROUP, p.b_id, 2).error_code == REBALANCE_IN_PROGRESS
    p.b.send_join(GROUP, p.b_id, [TOPIC])
    third, _ = p.a.receive(), p.b.receive()
    assert third.generation_id == 3
    p.b.send_sync(GROUP, p.b_id, 3)
    p.a.send_sync(GROUP, p.a_id, 3, {p.a_id: [], p.b_id: []})
    p.a.receive(), p.b.receive()
    assert _verdicts_of(broker, "I2") == [f"I2: {TOPIC} partitions [0, 1, 2, 3] are assigned "
                                          "to nobody"]


def test_an_unreadable_subscription_is_an_i10_verdict(broker: Broker) -> None:
    a = RawClient(broker.bootstrap, "garbled")
    good = encode_subscription(Subscription(topics=[TOPIC]))
    a.send(11, 9, {"group_id": GROUP, "session_timeout": 10_000, "rebalance_timeout": 30_000,
                   "member_id": "", "protocol_type": "consumer", "group_instance_id": None,
                   "protocols": [{"name": "range", "metadata": good[:5]}], "reason": None})
    a.receive()
    messages = _verdicts_of(broker, "I10")
    assert messages and messages[0].startswith("I10: the subscription cannot be read")


def test_a_cooperative_tie_resolved_for_one_claimant_is_an_i6_verdict(broker: Broker) -> None:
    a, b = RawClient(broker.bootstrap, "a"), RawClient(broker.bootstrap, "b")
    claim = Subscription(topics=[TOPIC], owned_partitions=[(TOPIC, 0)], generation_id=5)
    metadata = encode_subscription(claim)

    def join(client: RawClient, member_id: str) -> None:
        client.send(11, 9, {"group_id": GROUP, "session_timeout": 10_000,
                            "rebalance_timeout": 30_000, "member_id": member_id,
                            "protocol_type": "consumer", "group_instance_id": None,
                            "protocols": [{"name": "cooperative-sticky", "metadata": metadata}],
                            "reason": None})

    join(a, "")
    a_id = a.receive().member_id
    join(a, a_id)
    a.receive()
    a.send_sync(GROUP, a_id, 1, {a_id: [(TOPIC, 0)]}, protocol="cooperative-sticky")
    a.receive()
    join(b, "")
    b_id = b.receive().member_id
    join(b, b_id)
    assert a.heartbeat(GROUP, a_id, 1).error_code == REBALANCE_IN_PROGRESS
    join(a, a_id)
    a.receive(), b.receive()
    b.send_sync(GROUP, b_id, 2, protocol="cooperative-sticky")
    a.send_sync(GROUP, a_id, 2, {a_id: [(TOPIC, 0)], b_id: [(TOPIC, 1)]},
                protocol="cooperative-sticky")
    a.receive(), b.receive()
    breaches = _verdicts_of(broker, "I6")
    assert len(breaches) == 1 and breaches[0].startswith(f"I6: t-0 was given to {a_id}")


def test_rounds_show_each_generation_as_the_coordinator_ran_it(broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    p.b.send_sync(GROUP, p.b_id, 2)
    assert p.b.pending(0.1) is False
    half = broker.rounds(GROUP)[-1]
    assert (half.generation, half.leader, half.complete, half.assignments) == (2, p.a_id, False, {})
    p.a.send_sync(GROUP, p.a_id, 2, {p.a_id: [(TOPIC, 0), (TOPIC, 1)],
                                     p.b_id: [(TOPIC, 2), (TOPIC, 3)]})
    p.a.receive(), p.b.receive()
    first, second = broker.rounds(GROUP)
    assert (first.generation, list(first.subscriptions), first.complete) == (1, [p.a_id], True)
    assert second.client_ids == {p.a_id: "a", p.b_id: "b"}
    assert set(second.subscriptions) == {p.a_id, p.b_id} and second.complete
    assert decode_assignment(second.assignments[p.b_id]).to_api().partitions == [
        (TOPIC, 2), (TOPIC, 3)]
    assert second.leader_sync_ns > 0 and second.protocol == "range"


def test_joins_in_flight_counts_joins_the_coordinator_has_not_answered(broker: Broker) -> None:
    a, b = RawClient(broker.bootstrap, "a"), RawClient(broker.bootstrap, "b")
    joined = a.join(GROUP, [TOPIC])
    a.send_sync(GROUP, joined.member_id, 1, {joined.member_id: []})
    a.receive()
    b.send_join(GROUP, "", [TOPIC])
    b.send_join(GROUP, b.receive().member_id, [TOPIC])
    assert not b.pending(0.1)
    assert broker.joins_in_flight(GROUP) == 1
    assert a.heartbeat(GROUP, joined.member_id, 1).error_code == REBALANCE_IN_PROGRESS
    a.send_join(GROUP, joined.member_id, [TOPIC])
    a.receive(), b.receive()
    assert broker.joins_in_flight(GROUP) == 0


def test_a_join_below_v4_gets_its_member_id_and_generation_in_one_answer(
        broker: Broker) -> None:
    """KIP-394's MEMBER_ID_REQUIRED exists from JoinGroup v4 on; an older client is let in
    on its first join."""
    old = RawClient(broker.bootstrap, "old")
    metadata = encode_subscription(Subscription(topics=[TOPIC]))
    answer = old.call(11, 3, {"group_id": GROUP, "session_timeout": 10_000,
                              "rebalance_timeout": 30_000, "member_id": "",
                              "protocol_type": "consumer",
                              "protocols": [{"name": "range", "metadata": metadata}]})
    assert int(answer.error_code) == 0 and answer.member_id.startswith("old-")
    assert answer.generation_id == 1 and answer.leader == answer.member_id


def _crash(client: RawClient) -> None:
    """The member's process dies: its connection is reset, no LeaveGroup is sent."""
    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()


def test_releasing_an_answer_whose_member_crashed_skips_it_and_the_group_goes_on(
        broker: Broker) -> None:
    """Both SyncGroup answers held, the follower's connection reset, both released: no
    error, the leader gets its answer and goes on heartbeating; nothing stays held."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.hold("a", "SyncGroup")
    broker.hold("b", "SyncGroup")
    sync_both(p, GROUP, TOPIC)
    held = {h.exchange.who.client_id: h for h in broker.wait_held(2)}
    _crash(p.b)
    sent = broker.release(held["b"], held["a"])
    assert held["a"] in sent
    assert p.a.receive().error_code == 0
    assert p.a.heartbeat(GROUP, p.a_id, 2).error_code == 0
    assert broker.held() == [] and broker.failure() is None


def test_an_answer_released_twice_goes_out_once_and_the_second_release_is_no_error(
        broker: Broker) -> None:
    """Two releasers of one answer (two orderings that saw the same holds): the second
    finds it gone and sends only what is still held."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.hold("a", "SyncGroup")
    broker.hold("b", "SyncGroup")
    sync_both(p, GROUP, TOPIC)
    held = {h.exchange.who.client_id: h for h in broker.wait_held(2)}
    assert broker.release(held["a"]) == [held["a"]]
    assert broker.release(held["a"], held["b"]) == [held["b"]]
    assert p.a.receive().error_code == 0 and p.b.receive().error_code == 0
    with pytest.raises(ValueError, match="ever held"):
        broker.release(dataclasses.replace(held["b"], hold_id=held["b"].hold_id + 100))


def test_holds_carry_their_tag_and_each_tag_is_released_and_disarmed_alone(
        broker: Broker) -> None:
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.hold("a", "SyncGroup", tag="first")
    broker.hold("b", "SyncGroup", tag="second")
    broker.hold("b", "SyncGroup", tag="first")  # behind the second's: it does not fire
    sync_both(p, GROUP, TOPIC)
    broker.wait_held(2)
    assert [h.exchange.who.client_id for h in broker.held("first")] == ["a"]
    assert [h.exchange.who.client_id for h in broker.held("second")] == ["b"]
    assert broker.cancel("b", "SyncGroup", "hold", "second") == 0  # it fired already
    assert broker.cancel("b", "SyncGroup", "hold", "first") == 1
    broker.release(*broker.held("second"), *broker.held("first"))
    assert p.a.receive().error_code == 0 and p.b.receive().error_code == 0


def test_rules_aimed_at_a_member_that_left_never_hit_the_next_member_of_its_name(
        broker: Broker) -> None:
    """An error, a delay and a hold aimed at b, b gone (`forget`): a new consumer named b
    joins and syncs untouched."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    sync_both(p, GROUP, TOPIC)
    p.a.receive(), p.b.receive()
    broker.fail_next("b", "JoinGroup", UNKNOWN_MEMBER_ID)
    broker.delay("b", "SyncGroup", 30)
    broker.hold("b", "SyncGroup")
    _crash(p.b)
    assert broker.forget("b") == 3
    broker.drop_session(GROUP, p.b_id)
    again = RawClient(broker.bootstrap, "b")
    assert p.a.heartbeat(GROUP, p.a_id, 2).error_code == REBALANCE_IN_PROGRESS
    again.send_join(GROUP, "", [TOPIC])
    first = again.receive()
    assert first.error_code == 79  # MEMBER_ID_REQUIRED, not the error aimed at the old b
    again.send_join(GROUP, first.member_id, [TOPIC])
    p.a.send_join(GROUP, p.a_id, [TOPIC])
    joined_a, joined_b = p.a.receive(), again.receive()
    assert joined_a.error_code == joined_b.error_code == 0
    generation = joined_a.generation_id
    again.send_sync(GROUP, first.member_id, generation)
    p.a.send_sync(GROUP, p.a_id, generation, {p.a_id: [(TOPIC, 0), (TOPIC, 1)],
                                               first.member_id: [(TOPIC, 2), (TOPIC, 3)]})
    assert again.pending(5) and again.receive().error_code == 0
    assert p.a.receive().error_code == 0 and broker.held() == []


def test_the_log_lists_steered_exchanges_in_arrival_order_whenever_they_were_steered() -> None:
    """A delay rule marks its exchange when the answer is due, after later requests arrived:
    `ExchangeLog.steered_since` still lists them by arrival, past the given number, and
    never a plain exchange."""
    log = ExchangeLog(limit=10)
    opened = [log.open(connection=1, who=Who("a", "m", None), api_key=12, api_version=4,
                       correlation_id=i, request=None, received_ms=i) for i in range(4)]
    log.steer(opened[2], "fail Heartbeat")
    log.steer(opened[0], "delay Heartbeat (3s)")
    assert [e.seq for e in log.steered_since(-1)] == [0, 2]
    assert [e.seq for e in log.steered_since(0)] == [2]
    assert opened[0].steering == "delay Heartbeat (3s)" and opened[1].steering is None
