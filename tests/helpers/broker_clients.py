"""Real Kafka clients run against groupcheck's broker, as their users run them.

Each runner produces ``records`` records to ``topic``, starts two consumers in group
``group`` (client ids ``<client>-a`` and ``<client>-b``), polls until every record is read
and both members hold partitions, keeps polling until each member has heartbeated (a live
member does within its session timeout, `SESSION_TIMEOUT`, or is evicted: that bounds the
wait), then closes both (they leave). It returns what the consumers saw. Java and
KafkaJS run as child processes (`clients/BrokerSmoke.java`, `clients/kafkajs/smoke.js`);
their runtimes are looked for here, and a missing one is a skip with its reason.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from helpers import ROOT
from helpers.environment import CLASSPATH

CLIENTS = ROOT / "tests" / "clients"
SESSION_TIMEOUT = 6.0  # every consumer's session.timeout.ms
DEADLINE = 30.0  # a healthy group of two settles in seconds, after an eviction too
Heartbeated = Callable[[], bool]  # has every member had a Heartbeat answered?


@dataclass
class ClientRun:
    assigned: dict[str, list[str]]  # client id -> partitions ("topic-p") at the end
    records: int


def ready(run: ClientRun, records: int) -> bool:
    return run.records >= records and len(run.assigned) == 2 and all(run.assigned.values())


def _drive(consumers: dict[str, Any], poll_one: Callable[[Any], int], records: int,
           heartbeated: Heartbeated) -> ClientRun:
    """Poll each consumer in turn (``poll_one`` returns the records it got) until every
    record is read and both hold partitions, then until both heartbeated; close them."""
    run = ClientRun({}, 0)

    def poll() -> None:
        for name, c in consumers.items():
            run.records += poll_one(c)
            run.assigned[name] = sorted(f"{tp.topic}-{tp.partition}" for tp in c.assignment())

    deadline = time.monotonic() + DEADLINE
    while not ready(run, records) and time.monotonic() < deadline:
        poll()
    dwell = time.monotonic() + SESSION_TIMEOUT
    while not heartbeated() and time.monotonic() < dwell:
        poll()
    for c in consumers.values():
        c.close()
    return run


def run_librdkafka(bootstrap: str, topic: str, group: str, records: int,
                   heartbeated: Heartbeated) -> ClientRun:
    from confluent_kafka import Consumer, Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(records):
        producer.produce(topic, value=b"v%d" % i)
    assert producer.flush(30) == 0
    names = ["librdkafka-a", "librdkafka-b"]
    consumers = {n: Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": n,
                              "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                              "auto.offset.reset": "earliest"}) for n in names}
    for c in consumers.values():
        c.subscribe([topic])

    def poll_one(c: Any) -> int:
        msg = c.poll(0.05)
        return int(msg is not None and msg.error() is None)

    return _drive(consumers, poll_one, records, heartbeated)


def run_kafka_python(bootstrap: str, topic: str, group: str, records: int,
                     heartbeated: Heartbeated) -> ClientRun:
    from kafka import KafkaConsumer, KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(records):
        producer.send(topic, value=b"v%d" % i).get(timeout=30)
    producer.close()
    names = ["kafka-python-a", "kafka-python-b"]
    consumers = {n: KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=n,
                                  auto_offset_reset="earliest", session_timeout_ms=6000,
                                  heartbeat_interval_ms=500) for n in names}
    return _drive(consumers, lambda c: sum(len(r) for r in c.poll(50).values()), records,
                  heartbeated)


def run_aiokafka(bootstrap: str, topic: str, group: str, records: int,
                 heartbeated: Heartbeated) -> ClientRun:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def main() -> ClientRun:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        for i in range(records):
            await producer.send_and_wait(topic, value=b"v%d" % i)
        await producer.stop()
        names = ["aiokafka-a", "aiokafka-b"]
        consumers = {n: AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                         client_id=n, auto_offset_reset="earliest",
                                         session_timeout_ms=6000, heartbeat_interval_ms=500)
                     for n in names}
        for c in consumers.values():
            await c.start()
        run = ClientRun({}, 0)
        deadline = time.monotonic() + DEADLINE
        dwell: float | None = None
        while time.monotonic() < (dwell or deadline) and not (dwell and heartbeated()):
            for name, c in consumers.items():
                batches = await c.getmany(timeout_ms=50)
                run.records += sum(len(r) for r in batches.values())
                run.assigned[name] = sorted(f"{tp.topic}-{tp.partition}" for tp in c.assignment())
            if dwell is None and ready(run, records):
                dwell = time.monotonic() + SESSION_TIMEOUT
        for c in consumers.values():
            await c.stop()
        return run

    return asyncio.run(main())


_LINE = re.compile(r"^assigned (\S+) \[(.*)\]$")


def _parse(stdout: str) -> ClientRun:
    run = ClientRun({}, 0)
    for line in stdout.splitlines():
        match = _LINE.match(line)
        if match:
            run.assigned[match[1]] = sorted(p for p in match[2].split(", ") if p)
        elif line.startswith("records "):
            run.records = int(line.split()[1])
    assert "closed" in stdout.splitlines(), f"the client did not close cleanly:\n{stdout}"
    return run


def java_classes() -> list[str]:
    """The Java smoke client's command line up to its arguments (compiled and cached by
    `java_runtime`, on Kafka's classpath as the ``java:`` target finds it)."""
    from groupcheck.targets.processes import java_runtime

    reason = java_runtime.missing("", CLASSPATH)
    if reason:
        pytest.skip(reason)
    source = {"BrokerSmoke.java": (CLIENTS / "BrokerSmoke.java").read_bytes()}
    return java_runtime.java_command("", source, "BrokerSmoke", default=CLASSPATH)


def run_java(command: list[str], bootstrap: str, topic: str, group: str, records: int
             ) -> ClientRun:
    assignor = "org.apache.kafka.clients.consumer.RangeAssignor"
    done = subprocess.run([*command, bootstrap, topic, group, str(records), assignor],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-4000:]
    return _parse(done.stdout)


def kafkajs_home() -> Path:
    """KafkaJS's ``node_modules``, as the kafkajs member driver installs it (``npm ci`` of
    its lockfile into the cache, on first use)."""
    from groupcheck.targets.wire.drivers import kafkajs_member as kafkajs_driver

    reason = kafkajs_driver.missing()
    if reason:
        pytest.skip(reason)
    return kafkajs_driver.install() / "node_modules"


def run_kafkajs(modules: Path, bootstrap: str, topic: str, group: str, records: int
                ) -> ClientRun:
    done = subprocess.run(["node", str(CLIENTS / "kafkajs" / "smoke.js"), bootstrap,
                           topic, group, str(records)], capture_output=True, text=True,
                          timeout=180, env={**os.environ, "NODE_PATH": str(modules)})
    assert done.returncode == 0, done.stderr[-4000:]
    return _parse(done.stdout)
