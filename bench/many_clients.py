"""Many clients on groupcheck's broker: one group of fifty mixed consumers, twenty groups at
once, and members SIGKILLed at seeded moments; every group judged by the model as any wire
run is (I1 to I11), its settles timed, the broker's answered requests counted.

Scenarios (`groupcheck.engines.many_clients.scenarios`, seeded):

* ``one-group-range``: ``--members`` consumers (librdkafka, kafka-python, aiokafka, Kafka's
  Java client in turn, in a seeded order) join one group on range, one after the other; then
  the group settles.
* ``one-group-cooperative``: the same on cooperative-sticky, librdkafka and Java (the clients
  whose cooperative-sticky holds in a mixed group).
* ``many-groups``: ``--groups`` groups of three at once on one broker; every fifth a KafkaJS
  group on its round robin (KafkaJS cannot share a group with another client), the others
  three mixed clients on range.
* ``sigkill``: ``--kill-groups`` groups of five mixed members at once, ``--kills`` of each
  SIGKILLed (each such member in a driver of its own) at seeded moments: among the joins,
  a seeded number of protocol steps in, or once the group settled; each kill is a crash the
  group sees only at the member's session timeout.

The first three share one driver process per client for every member (one JVM, one Node);
``--private-drivers`` gives each member of a client that crashes by kill a process of its own
instead, as a lone wire group does.
"settle after joins" runs from the end of the last join (its consumer created) to the group
settled; "settle after a kill" from the SIGKILL to the group settled. "req/s" is every request
the broker answered over the scenario, divided by its wall time. Each scenario runs
``--repeat`` times (seeds ``--seed``, ``--seed``+1, …); its settles are pooled.

    python bench/many_clients.py [--seed N] [--repeat N] [--scenarios a,b] [--members 50]
        [--groups 20] [--kill-groups 4] [--kills 2] [--private-drivers] [--json FILE]
        [--failures DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from groupcheck.engines.many_clients import ScenarioResult, run, scenarios, settle_bound
from groupcheck.targets.registry import client_setup
from groupcheck.targets.settings import Settings
from groupcheck.targets.wire.clients import hello


def _stats(values: list[float]) -> str:
    if not values:
        return "–"
    return f"{statistics.median(values):.2f} / {max(values):.2f}"


def _clients(result: ScenarioResult) -> str:
    counts = Counter(c for g in result.scenario.groups for c in g.clients)
    return ", ".join(f"{c} {n}" for c, n in counts.most_common())


def _verdict(results: list[ScenarioResult]) -> str:
    """Each distinct group verdict with how many groups (over every repeat) gave it; a
    failing group names its clients."""
    counts: Counter[str] = Counter()
    for result in results:
        for g in result.groups:
            text = g.plain if g.plain == "holds" else \
                f"{g.plain[:100]} [{'+'.join(sorted(set(g.clients)))}]"
            counts[text] += 1
    return "; ".join(f"{n}× {v}" for v, n in counts.most_common())


def _row(name: str, results: list[ScenarioResult]) -> str:
    first = results[0]
    joins = [s for r in results for s in r.settles("join")]
    kills = [s for r in results for s in r.settles("kill")]
    rate = statistics.median(r.rate for r in results)
    late = sum(g.late for r in results for g in r.groups)
    rss = statistics.median(r.driver_rss_mb for r in results)
    return (f"| {name} | {first.scenario.members} ({len(first.groups)} group"
            f"{'s' if len(first.groups) > 1 else ''}) | {_clients(first)} | {_stats(joins)} | "
            f"{_stats(kills)} | {rate:.0f} | {first.drivers} ({rss:.0f} MB) | {late} | "
            f"{_verdict(results)} |")


def _versions(settings: Settings) -> str:
    names = ("librdkafka", "kafka-python", "aiokafka", "java", "kafkajs")
    infos = [hello(n, client_setup(n, settings)[0]) for n in names]
    return ", ".join(f"{i.client} {i.version}" for i in infos)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scenarios", default="one-group-range,one-group-cooperative,"
                                                "many-groups,sigkill")
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--kill-groups", type=int, default=4)
    parser.add_argument("--kills", type=int, default=2)
    parser.add_argument("--private-drivers", action="store_true",
                        help="a driver process per member of a kill-crash client, as a lone "
                             "wire group has (to compare with the shared drivers)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--failures", type=Path, default=Path("build/many-clients/failures"))
    args = parser.parse_args(argv)
    settings = Settings.from_environ(os.environ)
    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.2f}; {_versions(settings)}")
    print(f"a settle may take {settle_bound():.0f} s (the session timeout, then a rebalance "
          "timeout for each rebalance a settle may take, and one more)")
    print("| scenario | members | clients | settle after joins, median / max s | settle after "
          "a kill, median / max s | broker req/s | driver processes (RSS) | late events | "
          "verdict |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    report = []
    for name in args.scenarios.split(","):
        results = []
        for seed in range(args.seed, args.seed + args.repeat):
            chosen = scenarios(seed, args.members, args.groups, kill_groups=args.kill_groups,
                               kills=args.kills)[name]
            if args.private_drivers:
                chosen = dataclasses.replace(chosen, shared_drivers=False)
            began = time.monotonic()
            results.append(run(chosen, settings, args.failures))
            print(f"  ({name}, seed {seed}: {time.monotonic() - began:.1f}s)", file=sys.stderr)
        print(_row(name, results), flush=True)
        report += [r.to_json() for r in results]
    print(f"load {os.getloadavg()[0]:.2f} at the end")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
