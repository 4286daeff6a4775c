"""groupcheck's broker against librdkafka's mock cluster: time for a group of five to settle,
per client, and requests per second the broker serves.

Settle: five consumers of one client (heartbeat every 100 ms, session timeout 6 s, the same
on both backends) subscribe to a 10-partition topic on a fresh cluster;
the time from the first subscribe until every member holds partitions (polling every 10 ms)
is one round (each in a child process, given at most 120 s); the table shows the median and
the slowest of ``--rounds`` (nan: a round that never settled). Python clients run
in this process, Java and KafkaJS as the smoke programs under ``tests/clients`` (skipped
when their runtime is missing). Kafka's Java consumer is not run on the mock: the mock
answers its ApiVersions v4 with a reply Java reads as a 20-minute throttle.

Requests per second: ``--connections`` child processes each send ``--requests`` requests
one after the other — ApiVersions, or Heartbeat of the one member of a stable group of its
own (through the coordinator) — and the table shows the total over the wall time (the
broker logs every request meanwhile, as it always does). Prints the machine and its load.

    python bench/broker.py [--rounds N] [--clients a,b] [--requests N] [--connections N]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groupcheck.broker import Broker, BrokerConfig
from groupcheck.broker.protocol import Fields
from groupcheck.targets.wire.backends.mock_binding import MockCluster

ROOT = Path(__file__).resolve().parent.parent
TOPIC, PARTITIONS, MEMBERS, DEADLINE = "bench", 10, 5, 120.0
#: every client on both backends: a member learns of a rebalance at its next heartbeat, so
#: the clients' 3 s default would measure the clients, not the cluster
HEARTBEAT_MS, SESSION_MS = 100, 6000
CLIENTS = ("librdkafka", "kafka-python", "aiokafka", "java", "kafkajs")


def _until(ready: Callable[[], bool], poll: Callable[[], None]) -> float:
    started = time.perf_counter()
    while not ready():
        if time.perf_counter() - started > DEADLINE:
            return float("nan")
        poll()
    return time.perf_counter() - started


def _settle_polled(consumers: list[Any], poll_one: Callable[[Any], object]) -> float:
    """Poll every consumer in turn until each holds partitions; close them."""

    def poll() -> None:
        for c in consumers:
            poll_one(c)

    took = _until(lambda: all(c.assignment() for c in consumers), poll)
    for c in consumers:
        c.close()
    return took


def settle_librdkafka(bootstrap: str, group: str) -> float:
    from confluent_kafka import Consumer

    consumers = [Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                           "client.id": f"m{i}", "log_level": 3,
                           "heartbeat.interval.ms": HEARTBEAT_MS,
                           "session.timeout.ms": SESSION_MS}) for i in range(MEMBERS)]
    for c in consumers:
        c.subscribe([TOPIC])
    return _settle_polled(consumers, lambda c: c.poll(0.01))


def settle_kafka_python(bootstrap: str, group: str) -> float:
    from kafka import KafkaConsumer

    consumers = [KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=group,
                               client_id=f"m{i}", heartbeat_interval_ms=HEARTBEAT_MS,
                               session_timeout_ms=SESSION_MS) for i in range(MEMBERS)]
    # 100 ms polls: with 10 ms ones kafka-python 3.0's group kept rejoining here
    return _settle_polled(consumers, lambda c: c.poll(100))


def settle_aiokafka(bootstrap: str, group: str) -> float:
    from aiokafka import AIOKafkaConsumer

    async def main() -> float:
        consumers = [AIOKafkaConsumer(TOPIC, bootstrap_servers=bootstrap, group_id=group,
                                      client_id=f"m{i}", heartbeat_interval_ms=HEARTBEAT_MS,
                                      session_timeout_ms=SESSION_MS) for i in range(MEMBERS)]
        started = time.perf_counter()
        for c in consumers:
            await c.start()
        took = float("nan")
        while time.perf_counter() - started < DEADLINE:
            if all(c.assignment() for c in consumers):
                took = time.perf_counter() - started
                break
            await asyncio.sleep(0.01)
        for c in consumers:
            try:  # on the mock a member can hang in its rejoin; do not wait for ever
                await asyncio.wait_for(c.stop(), 10)
            except TimeoutError:
                pass
        return took

    return asyncio.run(main())


def _smoke(command: list[str]) -> float:
    done = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE + 60)
    for line in done.stdout.splitlines():
        if line.startswith("settled_ms ") and int(line.split()[1]) >= 0:
            return int(line.split()[1]) / 1000
    return float("nan")


def settle_java(bootstrap: str, group: str) -> float:
    from groupcheck.targets.processes import java_runtime

    source = {"BrokerSmoke.java": (ROOT / "tests" / "clients" / "BrokerSmoke.java").read_bytes()}
    command = java_runtime.java_command(os.environ.get("GROUPCHECK_KAFKA_CLASSPATH", ""), source,
                                        "BrokerSmoke")
    return _smoke([*command, bootstrap, TOPIC, group, "0",
                   "org.apache.kafka.clients.consumer.RangeAssignor", str(MEMBERS),
                   str(HEARTBEAT_MS)])


def settle_kafkajs(bootstrap: str, group: str) -> float:
    from groupcheck.targets.wire.drivers import kafkajs_member as kafkajs_driver

    os.environ["NODE_PATH"] = str(kafkajs_driver.install() / "node_modules")
    return _smoke(["node", str(ROOT / "tests" / "clients" / "kafkajs" / "smoke.js"), bootstrap,
                   TOPIC, group, "0", str(MEMBERS), str(HEARTBEAT_MS)])


SETTLE = {"librdkafka": settle_librdkafka, "kafka-python": settle_kafka_python,
          "aiokafka": settle_aiokafka, "java": settle_java, "kafkajs": settle_kafkajs}


def runnable(client: str) -> bool:
    needs = {"java": ("java", "javac"), "kafkajs": ("node", "npm")}.get(client, ())
    return all(shutil.which(tool) for tool in needs)


def _settle_in_child(backend: str, client: str, round_no: int) -> float:
    """One round in a child process with a hard time limit: a client that hangs on a
    backend (aiokafka on the mock does) costs ``DEADLINE`` plus a margin, then NaN."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        pending = pool.apply_async(settle_on, (backend, client, round_no))
        try:
            return float(pending.get(timeout=DEADLINE + 30))
        except multiprocessing.TimeoutError:
            return float("nan")


def settle_on(backend: str, client: str, round_no: int) -> float:
    group = f"{client}-{round_no}"
    if backend == "mock":
        with MockCluster() as mock:
            mock.create_topic(TOPIC, PARTITIONS)
            return SETTLE[client](mock.bootstraps, group)
    with Broker(BrokerConfig(topics={TOPIC: PARTITIONS}, log_limit=10_000)) as broker:
        return SETTLE[client](broker.bootstrap, group)


class _Wire:
    """One connection sending requests one at a time (kio types, the broker's framing)."""

    def __init__(self, bootstrap: str) -> None:
        import socket

        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.correlation = 0

    def call(self, api_key: int, version: int, data: Fields) -> Any:
        import socket

        from kio.index import load_request_schema, load_response_schema
        from kio.serial import entity_reader

        from groupcheck.broker.protocol import build, encode_request

        self.correlation += 1
        body = build(load_request_schema(api_key, version), data)
        self.sock.sendall(encode_request(body, self.correlation, "bench"))
        size = int.from_bytes(self.sock.recv(4, socket.MSG_WAITALL), "big")
        payload = self.sock.recv(size, socket.MSG_WAITALL)
        schema = load_response_schema(api_key, version)
        _, used = entity_reader(schema.__header_schema__)(payload, 0)
        return entity_reader(schema)(payload, used)[0]


def _load_worker(args: tuple[str, str, int, int]) -> int:
    """ApiVersions, or Heartbeat of the only member of a group of its own."""
    bootstrap, api, count, worker = args
    wire = _Wire(bootstrap)
    if api == "ApiVersions":
        for _ in range(count):
            wire.call(18, 3, {"client_software_name": "bench", "client_software_version": "1"})
        return count
    group = f"load-{worker}"
    join = {"group_id": group, "session_timeout": 30_000, "rebalance_timeout": 30_000,
            "member_id": "", "protocol_type": "consumer", "group_instance_id": None,
            "protocols": [{"name": "range", "metadata": b"\0\0\0\0\0\0\xff\xff\xff\xff"}],
            "reason": None}
    member = wire.call(11, 9, join).member_id
    answer = wire.call(11, 9, {**join, "member_id": member})
    generation = answer.generation_id
    wire.call(14, 5, {"group_id": group, "generation_id": generation, "member_id": member,
                      "group_instance_id": None, "protocol_type": "consumer",
                      "protocol_name": "range", "assignments": []})
    beat = {"group_id": group, "generation_id": generation, "member_id": member,
            "group_instance_id": None}
    for _ in range(count):
        assert int(wire.call(12, 4, beat).error_code) == 0
    return count


def requests_per_second(api: str, connections: int, requests: int) -> float:
    with Broker(BrokerConfig(log_limit=1000)) as broker:
        with multiprocessing.get_context("spawn").Pool(connections) as pool:
            warm = [(broker.bootstrap, api, 10, -1 - i) for i in range(connections)]
            pool.map(_load_worker, warm)  # imports and connections, not timed
            started = time.perf_counter()
            work = [(broker.bootstrap, api, requests, i) for i in range(connections)]
            total = sum(pool.map(_load_worker, work))
            return total / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--connections", type=int, default=2)
    args = parser.parse_args()
    print(f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    print("| client | backend | median s | slowest s | mock / broker |")
    print("|---|---|---|---|---|")
    for client in filter(None, args.clients.split(",")):
        if not runnable(client):
            print(f"| {client} | - | skipped: runtime missing | | |")
            continue
        medians = {}
        for backend in ("mock", "broker"):
            if backend == "mock" and client == "java":
                print(f"| {client} | mock | not run (mock's ApiVersions defect) | | |")
                continue
            try:
                times = [_settle_in_child(backend, client, r) for r in range(args.rounds)]
            except Exception as e:  # a client that cannot run on this backend at all
                print(f"| {client} | {backend} | failed: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:80]} | | |", flush=True)
                continue
            medians[backend] = statistics.median(times)  # NaN when a round did not settle
            ratio = (f"{medians['mock'] / medians['broker']:.1f}x"
                     if backend == "broker" and "mock" in medians else "")
            print(f"| {client} | {backend} | {medians[backend]:.3f} | {max(times):.3f} | "
                  f"{ratio} |", flush=True)
    print("\n| API | connections | requests each | requests per second |")
    print("|---|---|---|---|")
    for api in ("ApiVersions", "Heartbeat"):
        rate = requests_per_second(api, args.connections, args.requests)
        print(f"| {api} | {args.connections} | {args.requests} | {rate:,.0f} |", flush=True)
    print(f"# load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
