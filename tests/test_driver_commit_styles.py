"""The java and kafkajs member drivers commit as a ``create``'s ``commit_style`` says, and
report what they were handed and what they committed with the generation they were in.

One driver process per run hosts one member per style offered, each alone in a group of its
own on groupcheck's broker, reading records produced beforehand to a topic of two
partitions: each member is handed every record once, its ``records`` and ``commit`` events
name the generation the broker gave its group (KafkaJS: records null, it does not tell the
application), its ``commit`` events carry its style, and what it last committed is what the
broker answers an OffsetFetch with: the high watermark (none: nothing committed). The Java
driver runs on the oldest and newest Kafka release it supports (it is compiled for each), the
KafkaJS driver on the lockfile's release and on 1.16.0.
Each test skips only when its runtime is missing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("kio", reason="groupcheck's broker needs kio")

from groupcheck.broker import Broker, BrokerConfig  # noqa: E402
from groupcheck.broker.client import KafkaConnection  # noqa: E402
from groupcheck.targets.wire.clients import DRIVER_ENV, argv  # noqa: E402
from groupcheck.targets.wire.driver_process import CommandFailed, DriverProcess  # noqa: E402
from groupcheck.targets.wire.drivers.messages import DriverEvent  # noqa: E402

from helpers.environment import SETTINGS, missing  # noqa: E402

pytestmark = pytest.mark.wire

TOPIC, PARTITIONS, PER_PARTITION = "orders", 2, 3
HIGH_WATERMARK = {(TOPIC, p): PER_PARTITION for p in range(PARTITIONS)}
DEADLINE = 60.0
OFFSET_FETCH, OFFSET_FETCH_VERSION = 9, 1


@dataclass
class Member:
    """What one member's events said."""

    style: str
    handed: list[tuple[str, int, int]] = field(default_factory=list)
    record_generations: set[int | None] = field(default_factory=set)
    commits: list[dict[str, Any]] = field(default_factory=list)  # the commit events

    def last_committed(self) -> dict[tuple[str, int], int]:
        """Each partition's offset in the last commit that succeeded."""
        last: dict[tuple[str, int], int] = {}
        for commit in self.commits:
            if commit.get("outcome") == "ok":
                for topic, partition, offset in commit["offsets"]:
                    last[(str(topic), int(partition))] = int(offset)
        return last

    def done(self) -> bool:
        """Handed every record and (styles committing while polling) committed them all."""
        read = len(self.handed) == PARTITIONS * PER_PARTITION
        return read and (self.style in ("none", "revoke")
                         or self.last_committed() == HIGH_WATERMARK)


class StyleRun:
    """One driver on one broker, its members by name (each with its commit style)."""

    def __init__(self, command: list[str], broker: Broker, styles: dict[str, str]) -> None:
        self.broker = broker
        self.members = {name: Member(style) for name, style in styles.items()}
        self.lock = threading.Lock()
        self.driver = DriverProcess(command, "commits", self.on_event, DRIVER_ENV)

    def on_event(self, _: DriverProcess, line: DriverEvent) -> None:
        with self.lock:
            member = self.members.get(str(line.get("member")))
            if member is None:
                return
            if line["event"] == "records":
                member.handed += [(str(t), int(p), int(o)) for t, p, o in line["records"]]
                member.record_generations.add(line.get("generation"))
            elif line["event"] == "commit":
                member.commits.append(dict(line))

    def produce(self, first: int, count: int) -> None:
        """Values ``v<first>`` … to every partition."""
        for partition in range(PARTITIONS):
            for i in range(first, first + count):
                self.driver.call("produce", bootstrap=self.broker.bootstrap, topic=TOPIC,
                                 partition=partition, value=f"v{i}")

    def create(self, name: str, group: str, assignor: str = "roundrobin") -> None:
        style = self.members[name].style
        config: dict[str, Any] = {"commit_style": style, "enable_auto_commit": style == "auto"}
        if style == "auto":
            config["auto_commit_interval_ms"] = 500
        self.driver.call("create", member=name, bootstrap=self.broker.bootstrap, group=group,
                         assignor=assignor, topics=[TOPIC], config=config)

    def wait(self, what: str, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            with self.lock:
                if done():
                    return
            time.sleep(0.1)
        pytest.fail(f"{what}: {self.members}")


def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets, as the broker answers an OffsetFetch."""
    with KafkaConnection(bootstrap, "groupcheck-admin") as connection:
        answer = connection.call(OFFSET_FETCH, OFFSET_FETCH_VERSION, {
            "group_id": group,
            "topics": [{"name": TOPIC, "partition_indexes": list(range(PARTITIONS))}]})
    return {(str(t.name), int(p.partition_index)): int(p.committed_offset)
            for t in answer.topics for p in t.partitions if int(p.committed_offset) >= 0}


@contextmanager
def run_styles(command: list[str], styles: tuple[str, ...]) -> Iterator[tuple[StyleRun, dict[
        str, int]]]:
    """Produce, create a member per style, wait until each read (and committed), note each
    group's generation, close every member; gives the run and the generations."""
    with Broker(BrokerConfig(topics={TOPIC: PARTITIONS})) as broker:
        run = StyleRun(command, broker, {style: style for style in styles})
        try:
            run.produce(0, PER_PARTITION)
            for style in styles:
                run.create(style, f"g-{style}")
            run.wait("not every member read and committed",
                     lambda: all(m.done() for m in run.members.values()))
            generations = {}
            for style in styles:
                description = broker.describe_group(f"g-{style}")
                assert description is not None and description.state == "Stable"
                generations[style] = description.generation
            for style in styles:
                run.driver.call("close", member=style)
            yield run, generations
        finally:
            run.driver.close()


def check_member(run: StyleRun, style: str, generation: int,
                 records_generation: int | None) -> None:
    member = run.members[style]
    every = sorted((TOPIC, p, o) for p in range(PARTITIONS) for o in range(PER_PARTITION))
    assert sorted(member.handed) == every
    assert member.record_generations == {records_generation}
    assert {c["style"] for c in member.commits} <= {style}
    assert [c for c in member.commits if c["outcome"] != "ok"] == []
    assert {c["generation"] for c in member.commits} <= {generation}
    on_broker = committed(run.broker.bootstrap, f"g-{style}")
    if style == "none":
        assert (member.commits, on_broker) == ([], {})
    else:
        assert member.commits, f"{style}: no commit event"
        assert member.last_committed() == HIGH_WATERMARK == on_broker


JAVA_STYLES = ("none", "auto", "sync", "async", "revoke")
KAFKAJS_STYLES = ("none", "auto", "sync")


@pytest.mark.parametrize("release", ("2.8.0", "4.0.0-SNAPSHOT"))
def test_java_driver_commits_in_each_style_what_it_was_handed(release: str) -> None:
    from groupcheck.targets.processes.maven_repo import release_classpath

    from helpers.kafka_releases import repo_releases

    repo_releases(release)
    classpath = release_classpath(release, SETTINGS.maven_repo)
    with run_styles(argv("java", classpath), JAVA_STYLES) as (run, generations):
        for style in JAVA_STYLES:
            check_member(run, style, generations[style], generations[style])


@pytest.mark.parametrize("client", (
    "kafkajs", pytest.param("kafkajs@1.16.0", marks=pytest.mark.heavy)))
def test_kafkajs_driver_commits_auto_and_sync_and_hands_records_without_a_generation(
        client: str) -> None:
    reason = missing(client)
    if reason:
        pytest.skip(reason)
    with run_styles(argv(client), KAFKAJS_STYLES) as (run, generations):
        for style in KAFKAJS_STYLES:
            check_member(run, style, generations[style], None)


@pytest.mark.parametrize(("client", "offered", "refused"), (
    ("java", JAVA_STYLES, "eventually"), ("kafkajs", KAFKAJS_STYLES, "revoke")))
def test_driver_lists_its_commit_styles_and_refuses_another(
        client: str, offered: tuple[str, ...], refused: str) -> None:
    reason = missing(client)
    if reason:
        pytest.skip(reason)
    driver = DriverProcess(argv(client, SETTINGS.kafka_classpath), client,
                           lambda _d, _e: None, DRIVER_ENV)
    try:
        assert tuple(driver.call("hello")["commit_styles"]) == offered
        with pytest.raises(CommandFailed, match=f"commit styles.*not {refused}"):
            driver.call("create", member="m", bootstrap="127.0.0.1:1", group="g",
                        assignor="roundrobin", topics=[TOPIC],
                        config={"commit_style": refused})
    finally:
        driver.close()


def test_java_revoke_style_commits_before_a_rebalance_so_the_new_owner_reads_nothing_again(
        ) -> None:
    """Member a reads every record; b joins (range: eager, a gives up both partitions). a
    commits what it read inside onPartitionsRevoked, in the generation it read them in, so
    each owner starts at that commit: records produced afterwards are read once, nothing
    before them again. At close each commits what it read of its partition."""
    reason = missing("java")
    if reason:
        pytest.skip(reason)
    with Broker(BrokerConfig(topics={TOPIC: PARTITIONS})) as broker:
        run = StyleRun(argv("java", SETTINGS.kafka_classpath), broker,
                       {"a": "revoke", "b": "revoke"})
        a, b = run.members["a"], run.members["b"]
        try:
            run.produce(0, PER_PARTITION)
            run.create("a", "g", "range")
            run.wait("a read every record", lambda: len(a.handed) == PARTITIONS * PER_PARTITION)
            before = broker.describe_group("g")
            assert before is not None
            run.create("b", "g", "range")
            run.wait("a committed on revoke", lambda: bool(a.commits))
            run.produce(PER_PARTITION, 1)
            run.wait("the new records were read",
                     lambda: len(a.handed) + len(b.handed) == PARTITIONS * (PER_PARTITION + 1))
            for name in ("a", "b"):
                run.driver.call("close", member=name)
        finally:
            run.driver.close()
        first = a.commits[0]
        assert (first["style"], first["outcome"], first["generation"]) == (
            "revoke", "ok", before.generation)
        assert {(t, p): o for t, p, o in first["offsets"]} == HIGH_WATERMARK
        every = [(TOPIC, p, o) for p in range(PARTITIONS) for o in range(PER_PARTITION + 1)]
        assert sorted(a.handed + b.handed) == every
        assert committed(broker.bootstrap, "g") == {tp: PER_PARTITION + 1 for tp in HIGH_WATERMARK}
