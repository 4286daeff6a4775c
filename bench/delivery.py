"""Real clients on the wire, per client and commit style: how many records a rebalance hands
the application twice (the duplicate window), and whether I17 (delivery) holds.

For each client installed and each commit style it offers, one story on groupcheck's broker
(range, or the client's first assignor when it has none), played through the model's events
as the engines play them, to its end whatever breaks, so the group's delivery log is judged:
a topic of 4 partitions; c1 joins; records on every partition; settle; c2 joins (a
rebalance); more records; settle; c1 leaves (or, with ``--crash``, crashes); more records;
settle. Both members commit in the style of the row. Each cell is played ``--runs`` times;
the table gives the records produced and handed and the re-deliveries of the run with the
widest window, the windows over every run (count, widest, how many out of window), I17's
verdict over every run, and the median seconds a story took; other invariants broken show
after ``also``.

    python bench/delivery.py [--runs N] [--clients a,b,...] [--crash] [--per-partition N]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass

from bench_machine import machine_line, runnable

from groupcheck.model.event_types import Crash, Join, Leave
from groupcheck.model.events import DomainEvent
from groupcheck.model.group_events import Partitions, Produce, Settle
from groupcheck.model.replay import replay_events
from groupcheck.properties.delivery import DeliveryLog, DeliveryVerdict, judge_delivery
from groupcheck.targets.registry import make_group_target
from groupcheck.targets.settings import Settings
from groupcheck.targets.wire.clients import BUILT, SHIPPED, ClientInfo, hello

TOPIC, PARTITIONS = "t0", 4


def story(assignor: str, style: str, per_partition: int, crash: bool) -> list[DomainEvent]:
    """The story of one cell: c1 alone, c2 joins, c1 leaves (or crashes); records before each
    step and a settle after it; both members commit in ``style``."""
    def join(member: str) -> Join:
        return Join(member, (TOPIC,), (assignor,), commit_style=style)

    def records() -> list[DomainEvent]:
        return [Produce(TOPIC, p) for _ in range(per_partition) for p in range(PARTITIONS)]

    gone: DomainEvent = Crash("c1") if crash else Leave("c1")
    return [Partitions(TOPIC, PARTITIONS), join("c1"), *records(), Settle(),
            join("c2"), *records(), Settle(), gone, *records(), Settle()]


@dataclass(frozen=True)
class DeliveryRun:
    """One story played: its delivery log and verdict, the other invariants it broke, and
    how long it took."""

    log: DeliveryLog | None
    verdict: DeliveryVerdict | None
    problems: tuple[str, ...]
    seconds: float

    @property
    def widest(self) -> int:
        return max((w.length for w in self.verdict.duplicates), default=0) if self.verdict \
            else 0


def play(client: str, assignor: str, style: str, settings: Settings, per_partition: int,
         crash: bool) -> DeliveryRun:
    """One story on a fresh group of ``client``, judged."""
    target = make_group_target(f"wire:{client}:{assignor}", settings)
    started = time.perf_counter()
    try:
        outcome = replay_events(target, story(assignor, style, per_partition, crash),
                                wanted=lambda _: False)  # the whole story, whatever breaks
    finally:
        target.close()
    log = outcome.delivery
    return DeliveryRun(log, judge_delivery(log) if log is not None else None,
               tuple(v for v in outcome.violations if not v.startswith("I17")),
               time.perf_counter() - started)


def redelivered(log: DeliveryLog | None) -> int:
    """How many hand-outs repeated a record handed before (to any member)."""
    if log is None:
        return 0
    seen = Counter((h.topic, h.partition, h.offset) for h in log.handed)
    return sum(n - 1 for n in seen.values())


def i17(runs: list[DeliveryRun]) -> str:
    """``held``, ``unjudged`` (a run showed no delivery log), or the rules broken and how
    often; then the other invariants any run broke."""
    if any(r.verdict is None for r in runs):
        said = "unjudged"
    else:
        rules = Counter(v.rule for r in runs if r.verdict for v in r.verdict.violations)
        said = ", ".join(f"{rule} ×{n}" for rule, n in rules.items()) or "held"
    others = sorted({m.group(0) for r in runs for p in r.problems
                     if (m := re.search(r"\bI\d+a?\b", p))})
    return said + (f"; also {', '.join(others)}" if others else "")


def row(label: str, style: str, runs: list[DeliveryRun]) -> str:
    """One line of the table (the counts are those of the run with the widest window)."""
    worst = max(runs, key=lambda r: r.widest)
    windows = [w for r in runs if r.verdict for w in r.verdict.duplicates]
    produced = sum(worst.log.high_watermarks.values()) if worst.log else 0
    handed = len(worst.log.handed) if worst.log else 0
    out = sum(not w.allowed for w in windows)
    return (f"{label:<24}{style:<8}{produced:>9}{handed:>8}{redelivered(worst.log):>7}"
            f"{len(windows):>9}{worst.widest:>8}{out:>6}"
            f"{statistics.median(r.seconds for r in runs):>9.1f}  {i17(runs)}")


def assignor_of(info: ClientInfo) -> str:
    """range, or the client's first assignor when it has none (KafkaJS: roundrobin)."""
    return "range" if "range" in info.assignors else info.assignors[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", default=",".join([*SHIPPED, *BUILT]))
    parser.add_argument("--styles", default="", help="only these styles (default: all offered)")
    parser.add_argument("--crash", action="store_true", help="c1 crashes instead of leaving")
    parser.add_argument("--per-partition", type=int, default=3)
    args = parser.parse_args()
    settings = Settings.from_environ(os.environ)  # this script's edge
    print(f"{machine_line()}; {args.runs} runs a cell; "
          f"c1 {'crashes' if args.crash else 'leaves'}")
    print(f"{'client':<24}{'style':<8}{'produced':>9}{'handed':>8}{'again':>7}"
          f"{'windows':>9}{'widest':>8}{'out':>6}{'med s':>9}  I17", flush=True)
    for client in runnable(args.clients, settings.kafka_classpath, 24):
        info = hello(client, settings.kafka_classpath)
        wanted = args.styles.split(",") if args.styles else info.commit_styles
        for style in (s for s in info.commit_styles if s in wanted):
            runs = [play(client, assignor_of(info), style, settings, args.per_partition,
                         args.crash) for _ in range(args.runs)]
            print(row(f"{client} {info.version}", style, runs), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
