"""Real clients on the wire, per client: how long a group of five takes to settle, and how many
events per second the state machine drives through it.

For each client and each backend (groupcheck's broker, the default, and librdkafka's mock;
range, or the client's first assignor when it has none; a fresh cluster per round): five
consumers join a 10-partition topic one after the other, then ``settle`` (the
harness waits for the callbacks and for the coordinator's side, never on a fixed sleep); the
time from the first join until the group is settled is taken over ``--rounds`` rounds. Then
the state machine runs ``--examples`` examples (seed 0, normal operation without pauses and
subscription changes, which have findings of their own) and its events per second are
printed (on the broker the machine also aims late answers and SyncGroup orders at single
members, which the mock cannot). Every run must hold: the verdict column says so, or names
the first violation.

    python bench/wire.py [--rounds N] [--examples N] [--clients a,b,...] [--brokers b,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time

from bench_machine import machine_line, runnable

from groupcheck.engines.battery.runner import machine_config
from groupcheck.model.event_types import Join
from groupcheck.model.events import DomainEvent, apply_event
from groupcheck.model.fuzz import fuzz
from groupcheck.model.group_events import Partitions, Settle
from groupcheck.model.spec import ReferenceModel
from groupcheck.targets.registry import make_group_target, resolve
from groupcheck.targets.settings import Settings
from groupcheck.targets.wire.backends.factory import BACKENDS
from groupcheck.targets.wire.clients import BUILT, SHIPPED, hello


def five_members(assignor: str) -> list[DomainEvent]:
    """The story timed: five members join t0 (10 partitions) one after the other, each join
    settling (tests/test_wire_long.py holds every client to the same story)."""
    joins = (Join(f"c{i}", ("t0",), (assignor,), profile="librdkafka") for i in range(1, 6))
    return [Partitions("t0", 10), *(e for join in joins for e in (join, Settle()))]


def assignor_of(client: str) -> str:
    """range, or the client's first assignor when it has none (KafkaJS: roundrobin)."""
    assignors = hello(client, os.environ.get("GROUPCHECK_KAFKA_CLASSPATH", "")).assignors
    return "range" if "range" in assignors else assignors[0]


def settle_five(client: str, settings: Settings) -> tuple[float, list[str]]:
    target = make_group_target(f"wire:{client}:{assignor_of(client)}", settings)
    model = ReferenceModel()
    events = five_members(assignor_of(client))
    problems: list[str] = []
    try:
        problems += apply_event(events[0], target, model)
        started = time.perf_counter()
        for event in events[1:]:
            problems += apply_event(event, target, model)
        elapsed = time.perf_counter() - started
    finally:
        target.close()
    return elapsed, problems


def machine_rate(client: str, examples: int, settings: Settings
                 ) -> tuple[float, int, list[str]]:
    target = resolve(f"wire:{client}:{assignor_of(client)}", settings=settings)
    assert target.group is not None
    config = dataclasses.replace(machine_config(target), pauses=False, subscriptions=False)
    result = fuzz(target.group, config, profile="wire", max_examples=examples, seed_value=0,
                  shrink_seconds=0)
    return result.steps / max(result.seconds, 1e-9), result.steps, list(result.violations)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--clients", default=",".join([*SHIPPED, *BUILT]))
    parser.add_argument("--brokers", default=",".join(BACKENDS))
    args = parser.parse_args()
    environment = Settings.from_environ(os.environ)  # this script's edge
    print(machine_line())
    print(f"{'client':<28}{'backend':<12}{'five settle, med / max s':>26}"
          f"{'machine events/s':>18}{'events':>8}  verdict", flush=True)
    for client in runnable(args.clients, environment.kafka_classpath, 28):
        label = f"{client} {hello(client, environment.kafka_classpath).version}"
        for broker in args.brokers.split(","):
            settings = dataclasses.replace(environment, broker=broker)
            runs = [settle_five(client, settings) for _ in range(args.rounds)]
            times = [t for t, _ in runs]
            rate, steps, violations = machine_rate(client, args.examples, settings)
            problems = [p for _, found in runs for p in found] + violations
            print(f"{label:<28}{broker:<12}{statistics.median(times):>14.2f} / "
                  f"{max(times):<9.2f}{rate:>18.2f}{steps:>8}  "
                  + ("held" if not problems else problems[0]), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
