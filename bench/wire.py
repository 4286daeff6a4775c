"""Rebalance latency of real librdkafka consumers on the mock cluster (wire mode).

For each assignor, on a fresh mock cluster per round: c1 joins, c2 joins, c1 leaves; each
event is followed by ``settle`` (the driver waits for the callbacks and the members'
statistics, never on a fixed sleep). Prints the median and the slowest wall time of each
settle over the rounds, with the load average, and the model's verdict (every run must hold).

    python bench/wire.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from groupcheck.model.events import apply_event
from groupcheck.model.spec import ReferenceModel
from groupcheck.targets.librdkafka import ASSIGNORS
from groupcheck.targets.registry import make_group_target

STAGES = ("c1 joins", "c2 joins", "c1 leaves")


def one_round(assignor: str) -> tuple[list[float], list[str]]:
    target = make_group_target(f"librdkafka:{assignor}")
    model = ReferenceModel()
    join = {"op": "join", "topics": ["t0"], "assignors": [assignor], "profile": "librdkafka"}
    events = [{**join, "member": "c1"}, {**join, "member": "c2"}, {"op": "leave", "member": "c1"}]
    times, problems = [], []
    try:
        problems += apply_event({"op": "partitions", "topic": "t0", "count": 6}, target, model)
        for event in events:
            started = time.perf_counter()
            problems += apply_event(event, target, model)
            problems += apply_event({"op": "settle"}, target, model)
            times.append(time.perf_counter() - started)
    finally:
        target.close()
    return times, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'assignor':<20}" + "".join(f"{s + ' (med/max s)':>26}" for s in STAGES)
          + "  verdict")
    for assignor in ASSIGNORS:
        runs = [one_round(assignor) for _ in range(args.rounds)]
        cells = []
        for i in range(len(STAGES)):
            values = [times[i] for times, _ in runs]
            cells.append(f"{statistics.median(values):>14.2f} / {max(values):<9.2f}")
        problems = [p for _, found in runs for p in found]
        print(f"{assignor:<20}" + "".join(f"{c:>26}" for c in cells)
              + ("  held" if not problems else f"  {problems[0]}"))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
