"""Rolling upgrades on the wire: how long one upgrade of four members over two bounces (eight
restarts) takes on groupcheck's broker, per client.

Each row plays one prescribed two-bounce path with ``groupcheck upgrade``'s engine (seed 0,
the default chance of a fault after each restart, no shrinking) on a fresh group and prints
the wall time from the first join to the last settle, the rebalances of each bounce and the
verdict. The Python and C clients refuse a list that mixes eager and cooperative assignors
(their finding, in the default table), so their two bounces change the assignor on the same
protocol, range to roundrobin (first to [roundrobin, range], then to [roundrobin]); Kafka's
Java client takes KIP-429's own path, range to cooperative-sticky.

    python bench/upgrade.py [--members N] [--rows client,...]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

from groupcheck.engines.upgrades.plan import parse_side, plans_for
from groupcheck.engines.upgrades.play import UpgradeUnavailable, play
from groupcheck.targets.settings import Settings

ROWS = {
    "librdkafka": ("wire:librdkafka@2.3.0:range", "wire:librdkafka@2.16.1:roundrobin"),
    "kafka-python": ("wire:kafka-python@2.0.2:range", "wire:kafka-python@3.0.12:roundrobin"),
    "aiokafka": ("wire:aiokafka@0.10.0:range", "wire:aiokafka@0.14.0:roundrobin"),
    "java": ("wire:java@3.4.0:range", "wire:java@4.0.0-SNAPSHOT:cooperative-sticky"),
}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--rows", default=",".join(ROWS))
    args = parser.parse_args(argv)
    settings = Settings.from_environ(os.environ)
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'client':<13} {'from':<30} {'to':<42} {'restarts':>8} {'seconds':>8}  "
          "rebalances per bounce  verdict")
    for name in args.rows.split(","):
        source, dest = (parse_side(t) for t in ROWS[name])
        plan = plans_for(source, dest)[0]
        began = time.monotonic()
        try:
            outcome = play(plan, settings, members=args.members, shrink_seconds=0)
        except UpgradeUnavailable as exc:
            print(f"{name:<13} unavailable: {exc}")
            continue
        seconds = time.monotonic() - began
        rebalances = ", ".join(str(b.rebalances) for b in outcome.bounces if b.bounce)
        print(f"{name:<13} {source.client + ' ' + ','.join(source.assignors):<30} "
              f"{dest.client + ' ' + ','.join(dest.assignors):<42} "
              f"{args.members * len(plan.bounces):>8} {seconds:>8.1f}  {rebalances:<21}  "
              f"{outcome.verdict}{': ' + outcome.reason if outcome.reason else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
