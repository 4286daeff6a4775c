"""Static membership (KIP-345) with real clients on groupcheck's broker: a static member that
restarts within its session timeout is given its partitions back with no rebalance (the
generation stays), and a second consumer started with a taken instance id fences the first,
whose client reports why. librdkafka runs in the default suite; Kafka's Java client,
kafka-python and aiokafka are marked ``slow`` (``tox -e wire``). A static member on a client
without static membership (KafkaJS) is refused before it starts.

The session timeout (and with it ``max.poll.interval.ms``, which librdkafka wants no shorter)
is raised for these groups: a restart starts a new driver process,
which on a loaded machine takes longer than the wire targets' usual two seconds.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")

from groupcheck.model.event_types import Join  # noqa: E402
from groupcheck.model.group_events import Partitions, Settle  # noqa: E402
from groupcheck.model.replay import replay_events  # noqa: E402
from groupcheck.model.static_events import StaticDuplicate, StaticRestart  # noqa: E402
from groupcheck.properties.group import GroupView, MemberSpec  # noqa: E402
from groupcheck.targets.wire import wire_group  # noqa: E402
from groupcheck.targets.wire.clients import ClientInfo  # noqa: E402
from groupcheck.targets.wire.members import StaticMembershipRefused, member_config  # noqa: E402
from groupcheck.targets.wire.wire_group import WireGroup  # noqa: E402

from helpers.environment import CLASSPATH, group_target_factory, missing  # noqa: E402

pytestmark = pytest.mark.wire
SESSION_MS = 10_000
SLOW_CLIENTS = [pytest.param(c, marks=pytest.mark.slow) for c in ("java", "kafka-python",
                                                                   "aiokafka")]
SETTLE_SECONDS = 90.0


def _spec(instance: str) -> MemberSpec:
    return MemberSpec(topics=("t0",), assignors=("range",), group_instance_id=instance)


def _group(client: str, monkeypatch: pytest.MonkeyPatch) -> WireGroup:
    reason = missing(client)
    if reason:
        pytest.skip(reason)
    monkeypatch.setitem(wire_group.CONFIG, "session_timeout_ms", SESSION_MS)
    monkeypatch.setitem(wire_group.CONFIG, "max_poll_interval_ms", SESSION_MS)  # librdkafka
    group = WireGroup(f"wire:{client}:range", (client,), "range",
                      classpaths={"java": CLASSPATH})
    group.set_partitions("t0", 4)
    return group


def _settle(group: WireGroup) -> list[GroupView]:
    """Step until the group is settled; every view on the way."""
    views: list[GroupView] = []
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        group.step()
        views.append(group.view())
        if views[-1].settled:
            return views
    raise AssertionError(f"not settled in {SETTLE_SECONDS:.0f}s")


def _errors_of(group: WireGroup, member: str) -> list[str]:
    """What ``member``'s client reported, stepping until it reports anything (bounded)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        group.step()
        told = [text for who, text in group.view().errors if who == member]
        if told:
            return told
    return []


def _generations(group: WireGroup) -> list[int]:
    return [r.generation for r in group.backend.rounds() if r.complete]


def _static_restart(client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group(client, monkeypatch)
    try:
        group.join("a", _spec("ia"))
        group.join("b", _spec("ib"))
        before = _settle(group)[-1]
        generations = _generations(group)
        assert len(before.members["b"].owned) == 2, before.members
        group.leave("b")  # a static member's close sends no LeaveGroup (KIP-345)
        group.join("b", _spec("ib"))
        after = _settle(group)[-1]
        assert _generations(group) == generations  # no rebalance
        assert after.members["b"].owned == before.members["b"].owned
        assert after.members["a"].owned == before.members["a"].owned
    finally:
        group.close()


def test_a_static_librdkafka_member_restarting_within_its_session_keeps_its_partitions(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _static_restart("librdkafka", monkeypatch)


@pytest.mark.parametrize("client", SLOW_CLIENTS)
def test_a_static_member_restarting_within_its_session_keeps_its_partitions(
        client: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _static_restart(client, monkeypatch)


def test_a_second_librdkafka_consumer_with_a_taken_instance_id_fences_the_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group("librdkafka", monkeypatch)
    try:
        group.join("a", _spec("ia"))
        _settle(group)
        group.join("twin", _spec("ia"))
        told = _errors_of(group, "a")  # the fenced member stays fenced: no settling
        assert any("fenced" in text.lower() for text in told), told
    finally:
        group.close()


def test_a_librdkafka_story_of_static_restarts_and_a_duplicate_holds_every_invariant(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The follower and then the leader restart (I14: no rebalance, the same partitions),
    then a twin takes the leader's instance id (I14: the leader is told it is fenced), all
    on the wire targets' own timeouts (a two-second session)."""
    reason = missing("librdkafka")
    if reason:
        pytest.skip(reason)
    story = [Partitions("t0", 4), Join("a", ("t0",), ("range",), group_instance_id="ia"),
             Join("b", ("t0",), ("range",), group_instance_id="ib"), Settle(),
             StaticRestart("b"), StaticRestart("a"), StaticDuplicate("a", "c"), Settle()]
    outcome = replay_events(group_target_factory("wire:librdkafka:range")(), story)
    assert outcome.violations == [], outcome.story
    assert any("fenced" in line for line in outcome.story)


def test_a_static_member_on_a_client_without_static_membership_is_refused() -> None:
    kafkajs = ClientInfo("kafkajs", "kafkajs", "2.2.4", ("roundrobin",), "kip", "kill")
    with pytest.raises(StaticMembershipRefused, match="kafkajs 2.2.4 has no static membership"):
        member_config({}, kafkajs, "a", _spec("ia"))
    assert "group_instance_id" not in member_config({}, kafkajs, "a", MemberSpec(("t0",), ()))


def test_a_static_member_config_carries_its_instance_id_and_client_id() -> None:
    java = ClientInfo("java", "java", "4.0.0", ("range",), "java", "kill", True)
    assert member_config({"session_timeout_ms": 1}, java, "a", _spec("ia")) == {
        "session_timeout_ms": 1, "client_id": "a", "group_instance_id": "ia"}


@pytest.mark.parametrize(("broker", "static"), [("groupcheck", True), ("mock", False)])
def test_a_group_plays_static_membership_only_on_a_coordinator_that_fences(
        broker: str, static: bool) -> None:
    """librdkafka's mock cluster lets a second consumer join with a taken instance id beside
    the first, neither told FENCED_INSTANCE_ID: a group on it draws no static member (what
    KIP-345 promises would be judged against the mock, not the client)."""
    reason = missing("librdkafka")
    if reason:
        pytest.skip(reason)
    if broker == "mock":
        pytest.importorskip("confluent_kafka")
    group = WireGroup("wire:librdkafka:range", ("librdkafka",), "range", broker=broker)
    try:
        assert group.static_membership is static
    finally:
        group.close()
