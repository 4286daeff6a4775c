"""The java and kafkajs member drivers on librdkafka's mock cluster, driven over the
member-driver contract by a small harness (tests/driver_session.py): a group of two forms,
takes a record, and rebalances when a member leaves. Java members reach the mock through
`JavaMockProxy` (the mock's defects for Java); KafkaJS members reach it directly.

Each test skips only when its runtime is missing (no java/javac or Kafka client jars, no
node ≥ 18 or npm), with the reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("confluent_kafka")
pytest.importorskip("kio")

from groupcheck.targets.drivers import java_driver, kafkajs_driver  # noqa: E402
from groupcheck.targets.librdkafka_mock import MockCluster  # noqa: E402
from groupcheck.targets.librdkafka_mock_defects import JavaMockProxy  # noqa: E402

from driver_session import Ownership, Session  # noqa: E402

CONFIG = {"session_timeout_ms": 4000, "heartbeat_interval_ms": 400,
          "max_poll_interval_ms": 4000, "auto_offset_reset": "earliest",
          "enable_auto_commit": False}
SETTLE = 60.0
TOPIC, PARTITIONS = "t", 4
ALL = {(TOPIC, p) for p in range(PARTITIONS)}


def log(session: Session) -> str:
    """The events and the driver's last stderr lines, for a failure message."""
    lines = [json.dumps(e) for e in session.events] + list(session.stderr)
    return "\n".join(lines)


def need(reason: str) -> None:
    if reason:
        pytest.skip(reason)


@pytest.fixture
def mock() -> Iterator[MockCluster]:
    with MockCluster() as cluster:
        cluster.create_topic(TOPIC, PARTITIONS)
        yield cluster


@pytest.fixture
def java(mock: MockCluster) -> Iterator[tuple[Session, str]]:
    need(java_driver.missing())
    proxy = JavaMockProxy(mock.bootstraps)
    session = Session(java_driver.command())
    try:
        yield session, proxy.bootstraps
    finally:
        session.close()
        proxy.close()


@pytest.fixture
def kafkajs(mock: MockCluster) -> Iterator[tuple[Session, str]]:
    need(kafkajs_driver.missing())
    session = Session(kafkajs_driver.command())
    try:
        yield session, mock.bootstraps
    finally:
        session.close()


def create(session: Session, bootstrap: str, member: str, assignor: str) -> dict[str, Any]:
    return session.call("create", member=member, bootstrap=bootstrap, group="g",
                        assignor=assignor, topics=[TOPIC],
                        config={**CONFIG, "client_id": member})


def settled(members: list[str]) -> Any:
    """Every partition owned once, by these members only, each owning some."""
    def test(events: list[dict[str, Any]]) -> bool:
        ownership = Ownership().apply(events)
        return ownership.complete(ALL, members) and all(ownership.owned[m] for m in members)
    return test


def hello(argv: list[str]) -> dict[str, Any]:
    session = Session(argv)
    try:
        return session.call("hello")
    finally:
        session.close()


def test_java_driver_hello_names_kafkas_client_and_its_four_assignors() -> None:
    need(java_driver.missing())
    answer = hello(java_driver.command())
    assert answer["client"] == "java" and answer["version"].startswith("4.0.0")
    assert answer["assignors"] == ["range", "roundrobin", "sticky", "cooperative-sticky"]
    assert (answer["profile"], answer["crash"]) == ("java", "kill")


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_java_group_of_two_forms_takes_a_record_and_rebalances_on_leave(
        java: tuple[Session, str], assignor: str) -> None:
    session, bootstrap = java
    assert create(session, bootstrap, "c1", assignor) == {"ack": 1}
    assert session.wait_until(settled(["c1"]), SETTLE), log(session)
    assert create(session, bootstrap, "c2", assignor) == {"ack": 2}
    assert session.wait_until(settled(["c1", "c2"]), SETTLE), log(session)
    assert "error" not in session.call("produce", bootstrap=bootstrap, topic=TOPIC,
                                       partition=1, value="v")
    assert session.wait_until(
        lambda es: any(e["event"] == "records" for e in es), SETTLE), log(session)
    assert session.call("close", member="c1") == {"ack": 4}
    assert session.wait_until(settled(["c2"]), SETTLE), log(session)
    events = session.events
    assert Ownership().apply(events).overlaps == []
    assert not [e for e in events if e["event"] == "error"]
    ends = [e for e in events if e["event"] == "callback_end"]
    assert all(e["memberId"] and e["generation"] > 0 for e in ends)
    for member in ("c1", "c2"):
        generations = [e["generation"] for e in ends if e["member"] == member]
        assert generations == sorted(generations)
    records = [r for e in events if e["event"] == "records" for r in e["records"]]
    assert records == [[TOPIC, 1, 0]]
    if assignor == "cooperative-sticky":  # c1 gives up only what c2 gets (KIP-429)
        first_revoke = next(e for e in ends if e["kind"] == "revoked" and e["partitions"])
        assert first_revoke["member"] == "c1" and len(first_revoke["partitions"]) == 2


def test_kafkajs_driver_hello_names_its_one_assignor_and_the_kip_profile() -> None:
    need(kafkajs_driver.missing())
    answer = hello(kafkajs_driver.command())
    assert (answer["client"], answer["version"]) == ("kafkajs", "2.2.4")
    assert answer["assignors"] == ["roundrobin"]
    assert (answer["profile"], answer["crash"]) == ("kip", "kill")


def latest_assignments(events: list[dict[str, Any]], members: list[str]) -> dict[str, set[Any]]:
    latest: dict[str, set[Any]] = {}
    for e in events:
        if e["event"] == "callback_end" and e["member"] in members:
            latest[e["member"]] = {tuple(p) for p in e["partitions"]}
    return latest


def test_kafkajs_group_of_two_forms_takes_a_record_and_rebalances_on_leave(
        kafkajs: tuple[Session, str]) -> None:
    """KafkaJS reports each join's whole assignment (GROUP_JOIN) and never a revoke: the
    group is judged on the latest assignment of each live member."""
    session, bootstrap = kafkajs

    def split(members: list[str]) -> Any:
        def test(events: list[dict[str, Any]]) -> bool:
            latest = latest_assignments(events, members)
            owned = [p for m in members for p in latest.get(m, set())]
            return sorted(owned) == sorted(ALL)
        return test

    assert create(session, bootstrap, "c1", "roundrobin") == {"ack": 1}
    assert create(session, bootstrap, "c2", "roundrobin") == {"ack": 2}
    assert session.wait_until(split(["c1", "c2"]), SETTLE), log(session)
    assert "error" not in session.call("produce", bootstrap=bootstrap, topic=TOPIC,
                                       partition=2, value="v")
    assert session.wait_until(
        lambda es: any(e["event"] == "records" for e in es), SETTLE), log(session)
    reader = next(e["member"] for e in session.events if e["event"] == "records")
    assert (TOPIC, 2) in latest_assignments(session.events, [reader])[reader]
    assert session.call("slow_revoke", member="c1", ms=10)["error"].endswith(
        "KafkaJS has no revoke callback")
    assert session.call("close", member="c1") == {"ack": 5}
    assert session.wait_until(split(["c2"]), SETTLE), log(session)
    kinds = {e["kind"] for e in session.events if e["event"] == "callback_end"}
    assert kinds == {"assigned"}
    assert all(e["generation"] is None and e["memberId"] for e in session.events
               if e["event"] == "callback_end")
