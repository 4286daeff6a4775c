"""A group of five on the wire, per client: how long it takes to settle and how many driver
events per second the layer takes in meanwhile.

For each client and assignor, on a fresh mock cluster per round: ten partitions of t0, five
members join one after the other, then ``settle`` (the layer waits for the coordinator's
complete generation and the callbacks, never on a fixed sleep). The time is from the first
join to settled; the events are every line the drivers wrote (callbacks, records, errors)
over that time. Prints the median and the slowest over the rounds, with the load average,
and the model's verdict under each client's own profile.

    python bench/drivers.py [--clients java,kafkajs] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from groupcheck.model.events import apply_event
from groupcheck.model.spec import ReferenceModel
from groupcheck.targets.registry import group_target_factory
from groupcheck.targets.wire_clients import hello, missing

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from wire_cases import five_members  # noqa: E402


def one_round(client: str, assignor: str) -> tuple[float, int, list[str]]:
    """Seconds from the first join to settled, driver events seen, violations."""
    target: Any = group_target_factory(f"wire:{client}:{assignor}")()
    model = ReferenceModel()
    events = five_members(assignor)
    problems: list[str] = []
    try:
        problems += apply_event(events[0], target, model)
        started = time.perf_counter()
        for event in events[1:]:
            problems += apply_event(event, target, model)
        seconds = time.perf_counter() - started
        count = len(target.log.entries)
    finally:
        target.close()
    return seconds, count, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="java,kafkajs")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'client':<10}{'assignor':<20}{'settle med / max s':>20}{'events/s med':>14}"
          f"{'events':>8}  verdict")
    for client in args.clients.split(","):
        reason = missing(client)
        if reason:
            print(f"{client:<10}skipped: {reason}")
            continue
        for assignor in hello(client).assignors:
            runs = [one_round(client, assignor) for _ in range(args.rounds)]
            seconds = [s for s, _, _ in runs]
            rates = [n / s for s, n, _ in runs]
            problems = sorted({p for _, _, found in runs for p in found})
            verdict = "held" if not problems else "; ".join(problems)[:120]
            events = statistics.median([n for _, n, _ in runs])
            print(f"{client:<10}{assignor:<20}"
                  f"{statistics.median(seconds):>11.2f} / {max(seconds):<6.2f}"
                  f"{statistics.median(rates):>14.1f}{events:>8}  {verdict}")


if __name__ == "__main__":
    main()
