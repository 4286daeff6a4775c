"""The commit styles of the Python member drivers (librdkafka, kafka-python, aiokafka), each
driver a child process on groupcheck's broker: a consumer in each style a driver offers reads
the records produced, its ``records`` events carry the generation, its ``commit`` events are
the commits its style makes (after each batch, in the async completion callback, in the
auto-commit hook, in the revoke callback), each committing last handed + 1, and the broker's
committed offsets are the last ones reported committed. A style a driver does not offer is
refused in the create's ack.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from groupcheck.targets.wire.clients import DRIVER_ENV, argv
from groupcheck.targets.wire.driver_process import CommandFailed, DriverProcess
from groupcheck.targets.wire.drivers.messages import DriverEvent
from groupcheck.targets.wire.silence import rejoined_after_sync

from helpers.environment import missing
from helpers.wire_findings import (
    expect_kafka_python_hang,
    kafka_python_dropped_join,
    silent_story,
)

pytest.importorskip("kio", reason="groupcheck's broker needs kio")
pytestmark = [pytest.mark.wire, pytest.mark.broker_config(topics={"t": 2})]

from groupcheck.broker import Broker  # noqa: E402 - after the skip: the broker needs kio
from groupcheck.broker.client import KafkaConnection  # noqa: E402

CLIENTS = ("librdkafka", "kafka-python", "aiokafka")
RECORDS = 3  # per partition
GROUP = "commits"
WAIT = 30.0
#: the drivers' session timeout when the config names none
SESSION_MS = 6000
#: the clients whose auto-commits reach the application (aiokafka has no hook)
AUTO_HOOK = ("librdkafka", "kafka-python")
Offsets = dict[tuple[str, int], int]


class Driver:
    """One member driver (``client``: a client's name, or ``name@release``) and the events it
    wrote; ``label`` is the client's name."""

    def __init__(self, client: str, broker: Broker) -> None:
        reason = missing(client)
        if reason:
            pytest.skip(reason)
        self.broker, self.events = broker, list[DriverEvent]()
        self.changed = threading.Condition()
        self.label = client.split("@")[0]
        self.process = DriverProcess(argv(client), client, self._add, DRIVER_ENV)

    def _add(self, _driver: DriverProcess, event: DriverEvent) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def wait(self, done: Callable[[], bool], what: str) -> None:
        with self.changed:
            if self.changed.wait_for(done, WAIT):
                return
        # a kafka-python member that never finished a join it was answered, or that dropped
        # its joins, is one of those recorded findings
        exchanges = self.broker.exchanges()
        expect_kafka_python_hang(silent_story(exchanges, SESSION_MS), {self.label})
        dropped = kafka_python_dropped_join(rejoined_after_sync(exchanges), {self.label})
        if dropped is not None:
            pytest.xfail(dropped)
        log = [(e.api, e.who.client_id, e.error_code, e.answered_ms) for e in exchanges]
        pytest.fail(f"no {what} in {WAIT:.0f}s: {self.events}; the broker's log: {log}")

    def create(self, member: str, style: str | None) -> None:
        """A consumer in ``style`` (None: a config without the key, as before styles)."""
        config = {"enable_auto_commit": style == "auto",
                  **({"commit_style": style} if style is not None else {}),
                  **({"auto_commit_interval_ms": 200} if style == "auto" else {})}
        self.process.call("create", member=member, bootstrap=self.broker.bootstrap, group=GROUP,
                          assignor="range", topics=["t"], config=config)

    def of(self, name: str, member: str = "a") -> list[DriverEvent]:
        return [e for e in self.events if e["event"] == name and e["member"] == member]

    def handed(self, member: str = "a", before: int | None = None) -> Offsets:
        """The next offset after the last record handed to ``member`` (before event seq)."""
        last: Offsets = {}
        batches = [e for e in self.of("records", member) if before is None or e["seq"] < before]
        for topic, partition, offset in (r for e in batches for r in e.get("records", [])):
            key = (str(topic), int(partition))
            last[key] = max(last.get(key, 0), int(offset) + 1)
        return last

    def committed(self, outcome: str = "ok") -> Offsets:
        """Each partition's offset in the last commit event of that outcome, any member."""
        last: Offsets = {}
        for e in self.events:
            if e["event"] == "commit" and e.get("outcome") == outcome:
                last.update({(str(t), int(p)): int(o) for t, p, o in e.get("offsets", [])})
        return last


def broker_committed(broker: Broker) -> Offsets:
    with KafkaConnection(broker.bootstrap, "committed") as connection:
        answer = connection.call(9, 7, {"group_id": GROUP, "topics": None,
                                        "require_stable": False})
    return {(t.name, p.partition_index): p.committed_offset
            for t in answer.topics for p in t.partitions if p.committed_offset >= 0}


@pytest.fixture
def started(request: pytest.FixtureRequest, broker: Broker) -> Iterator[Driver]:
    driver = Driver(request.param, broker)
    try:
        for partition in (0, 1):
            for i in range(RECORDS):
                driver.process.call("produce", bootstrap=broker.bootstrap, topic="t",
                                    partition=partition, value=str(i))
        yield driver
    finally:
        driver.process.close()


def _consume(driver: Driver, style: str | None) -> None:
    """Member a in ``style`` reads every record produced."""
    driver.create("a", style)
    everything = {("t", 0): RECORDS, ("t", 1): RECORDS}
    driver.wait(lambda: driver.handed() == everything, "records")


def _records_carry_the_generation(driver: Driver, client: str) -> None:
    """Each batch carries a generation (aiokafka: none): at least the one of a's last
    assignment before it (the client may have joined the next one by the time the batch is
    handed), and never one a's callbacks have not reported by the end."""
    reported = {c.get("generation") for c in driver.of("callback_start")}
    for e in driver.of("records"):
        assert "generation" in e, e
        if client == "aiokafka":
            assert e["generation"] is None, e
            continue
        assigned = [c for c in driver.of("callback_start") if c["seq"] < e["seq"]
                    and c.get("kind") == "assigned"]
        assert e["generation"] in reported and \
            int(e["generation"]) >= int(assigned[-1]["generation"] or 0), (e, assigned)


def _commits_follow_the_records(driver: Driver, style: str, exact: bool) -> None:
    """Every commit of a is in its style and commits last handed + 1 (at most, when the
    outcome arrives later than the commit was made)."""
    commits = driver.of("commit")
    assert commits and {e.get("style") for e in commits} == {style}, driver.events
    for e in commits:
        handed = driver.handed(before=e["seq"])
        for topic, partition, offset in e.get("offsets", []):
            key = (str(topic), int(partition))
            assert (offset == handed[key]) if exact else (offset <= handed[key]), (e, handed)


def clients(*names: str) -> list[object]:
    return [pytest.param(c, id=c) for c in names]


#: every client's synchronous commit, and the asynchronous one of those that have one
AFTER_EACH_BATCH = [pytest.param(c, s, id=f"{c}-{s}") for c in CLIENTS for s in ("sync", "async")
                    if (c, s) != ("aiokafka", "async")]


@pytest.mark.parametrize(("started", "style"), AFTER_EACH_BATCH, indirect=["started"])
def test_a_member_committing_after_each_batch_reports_each_commit_the_broker_keeps(
        started: Driver, style: str, broker: Broker) -> None:
    client = started.label
    assert style in started.process.call("hello").get("commit_styles", [])
    _consume(started, style)
    started.wait(lambda: started.committed() == started.handed(), f"{style} commit")
    _records_carry_the_generation(started, client)
    _commits_follow_the_records(started, style, exact=style == "sync")
    assert broker_committed(broker) == started.committed()


@pytest.mark.parametrize("started", clients(*CLIENTS), indirect=True)
@pytest.mark.parametrize("style", [None, "none"])
def test_a_member_without_a_commit_style_or_in_style_none_never_commits(
        started: Driver, style: str | None, broker: Broker) -> None:
    _consume(started, style)
    started.create("b", style)  # a revoke, where the revoke style would commit
    started.wait(lambda: any(e.get("kind") == "revoked" and e.get("partitions")
                             for e in started.of("callback_end")), "a's revoke")
    _records_carry_the_generation(started, started.label)
    assert started.of("commit") == [] and broker_committed(broker) == {}


@pytest.mark.parametrize("started", clients(*CLIENTS), indirect=True)
def test_auto_commit_is_reported_where_the_client_has_a_hook(
        started: Driver, broker: Broker) -> None:
    client = started.label
    _consume(started, "auto")
    if client in AUTO_HOOK:
        started.wait(lambda: started.committed() == started.handed(), "auto-commit")
        _commits_follow_the_records(started, "auto", exact=False)
        assert broker_committed(broker) == started.committed()
    else:
        deadline = time.monotonic() + WAIT
        while broker_committed(broker) != started.handed() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert broker_committed(broker) == started.handed()
        assert started.of("commit") == []
    _records_carry_the_generation(started, client)


@pytest.mark.parametrize("started", clients(*CLIENTS), indirect=True)
def test_a_revoke_callback_commit_lands_before_the_partitions_go(
        started: Driver, broker: Broker) -> None:
    _consume(started, "revoke")
    assert started.of("commit") == []  # nothing commits before a revoke
    started.create("b", "revoke")

    def revoke_ends() -> list[DriverEvent]:
        return [e for e in started.of("callback_end") if e.get("kind") == "revoked"
                and e.get("partitions")]

    started.wait(lambda: bool(started.of("commit") and revoke_ends()), "revoke and commit")
    commit = started.of("commit")[0]
    assert commit["seq"] < revoke_ends()[0]["seq"], started.events  # inside the callback
    _commits_follow_the_records(started, "revoke", exact=True)
    assert commit.get("outcome") == "ok" and broker_committed(broker) == started.committed()
    callback = [e for e in started.of("callback_start") if e["seq"] < commit["seq"]][-1]
    expected = callback.get("generation") if started.label != "aiokafka" else None
    assert commit.get("generation") == expected, (commit, callback)


@pytest.mark.parametrize(("client", "style"), [("librdkafka", "sometimes"),
                                               ("kafka-python", "sometimes"),
                                               ("aiokafka", "async")])
def test_a_commit_style_the_driver_does_not_offer_is_refused(
        client: str, style: str, broker: Broker) -> None:
    driver = Driver(client, broker)
    try:
        assert style not in driver.process.call("hello").get("commit_styles", [])
        with pytest.raises(CommandFailed, match=f"commit style '{style}' is not offered"):
            driver.create("a", style)
    finally:
        driver.process.close()


@pytest.mark.parametrize("started", clients("kafka-python@2.0.2", "librdkafka@2.3.0"),
                         indirect=True)
def test_an_older_release_commits_inside_its_revoke_callback_too(
        started: Driver, broker: Broker) -> None:
    """kafka-python 2 runs its listener in ``poll``: the driver's listener calls ``commit()``
    there (no ``group_metadata()`` either: no generation)."""
    _consume(started, "revoke")
    started.create("b", "revoke")
    started.wait(lambda: bool(started.of("commit")), "revoke commit")
    commit = started.of("commit")[0]
    assert commit.get("outcome") == "ok" and broker_committed(broker) == started.committed()
    _commits_follow_the_records(started, "revoke", exact=True)
    if started.label == "kafka-python":
        assert commit.get("generation") is None
        assert all(e.get("generation") is None for e in started.of("records"))
