"""``groupcheck check`` on every wire client, seed after seed: no run may end on groupcheck's
own failure, and every counterexample a run saves must replay.

For each client (librdkafka, Kafka's Java client, kafka-python, aiokafka, KafkaJS), on range
(KafkaJS has none: its round robin) and, with ``--cooperative``, on cooperative-sticky for the
clients that have it, and for each seed: ``groupcheck check --target wire:<client>:<assignor>
--budget B --seed S --json`` in a process of its own, on groupcheck's broker. Each run's exit
code, time and verdict (``holds`` or its violations) are kept, and its stderr is searched for
a traceback. A run that exits 1 has each saved counterexample replayed (``groupcheck replay``,
up to ``--attempts`` times: real clients do not always interleave the same way), and whether
it reproduced, showed a different violation or none is kept. Each run's JSON and stderr, and
each replay's story, are kept under ``--out`` to look into. One row per run, in a Markdown
table, then one line per failure of the script: a traceback, an exit code other than 0 or 1,
a finding saved with no counterexample (an ``ERROR`` the group raised: nothing to replay),
or a counterexample that never reproduced. Exit status 1 when there is any.

    nice python bench/wire_stress.py [--seeds 1-5] [--budget 150] [--clients a,b]
                                     [--cooperative] [--attempts 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from groupcheck.targets.registry import client_setup
from groupcheck.targets.settings import Settings
from groupcheck.targets.wire.clients import hello, missing

CLIENTS = ("librdkafka", "java", "kafka-python", "aiokafka", "kafkajs")
GROUPCHECK = [sys.executable, "-m", "groupcheck"]
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class StressRun:
    target: str
    seed: int
    code: int = 0
    seconds: float = 0.0
    verdict: str = ""
    traceback: str = ""  # the exception's last line, when stderr held a traceback
    files: list[str] = field(default_factory=list)
    replays: list[str] = field(default_factory=list)  # per file: reproduced (k/n) or not
    unsaved: int = 0  # findings without a counterexample file (nothing to replay)

    def problems(self) -> list[str]:
        out = [f"traceback: {self.traceback}"] if self.traceback else []
        if self.code not in (0, 1):
            out.append(f"exit {self.code}")
        if self.unsaved:
            out.append(f"{self.unsaved} finding(s) without a counterexample to replay")
        out += [f"{Path(f).name}: {r}" for f, r in zip(self.files, self.replays, strict=True)
                if not r.startswith("reproduced")]
        return out


def targets(clients: list[str], cooperative: bool, settings: Settings) -> list[str]:
    out = []
    for client in clients:
        classpath = client_setup(client, settings)[0]
        if missing(client, classpath):
            print(f"skipped {client}: {missing(client, classpath)}", file=sys.stderr)
            continue
        assignors = hello(client, classpath).assignors
        out.append(f"wire:{client}:{'range' if 'range' in assignors else assignors[0]}")
        if cooperative and "cooperative-sticky" in assignors:
            out.append(f"wire:{client}:cooperative-sticky")
    return out


def last_exception(stderr: str) -> str:
    lines = [line for line in stderr[stderr.rindex(TRACEBACK):].splitlines() if line.strip()]
    return lines[-1].strip()[:200] if lines else "?"


def check(target: str, seed: int, budget: float, out: Path) -> StressRun:
    run = StressRun(target, seed)
    folder = out / f"{target.replace(':', '-')}-seed{seed}"
    began = time.monotonic()
    proc = subprocess.run([*GROUPCHECK, "check", "--target", target, "--budget", str(budget),
                           "--seed", str(seed), "--json", "--failures", str(folder)],
                          capture_output=True, text=True)
    run.code, run.seconds = proc.returncode, time.monotonic() - began
    (out / f"{folder.name}.stderr").write_text(proc.stderr, encoding="utf-8")
    (out / f"{folder.name}.json").write_text(proc.stdout, encoding="utf-8")
    if TRACEBACK in proc.stderr:
        run.traceback = last_exception(proc.stderr)
    try:
        body = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        run.verdict = "no JSON verdict"
        return run
    found = [f for a in body["assignors"].values() if a.get("supported")
             for e in a["engines"].values()
             for f in [*e["violations"].values(), *e["moreViolations"]]]
    run.verdict = "holds" if body["ok"] else "; ".join(f["violation"][:120] for f in found)
    run.files = [f["file"] for f in found if f.get("file")] if run.code == 1 else []
    run.unsaved = sum(not f.get("file") for f in found)
    return run


def replay(path: str, attempts: int) -> str:
    """``reproduced (k/n)``, or what the last attempt said instead."""
    said = ""
    for attempt in range(1, attempts + 1):
        proc = subprocess.run([*GROUPCHECK, "replay", path], capture_output=True, text=True)
        Path(f"{path}.replay-{attempt}.txt").write_text(proc.stdout + proc.stderr,
                                                        encoding="utf-8")
        said = (proc.stdout.strip().splitlines() or ["no output"])[-1]
        if TRACEBACK in proc.stderr:
            return f"traceback: {last_exception(proc.stderr)}"
        if proc.returncode == 1 and said.startswith("reproduced"):
            return f"reproduced ({attempt}/{attempts})"
    return said[:160]


def row(run: StressRun) -> str:
    replays = "; ".join(run.replays) or "-"
    return (f"| `{run.target}` | {run.seed} | {run.code} | {run.seconds:.0f} | "
            f"{run.verdict.replace('|', '/')} | {run.traceback or 'none'} | {replays} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", default="1-5", help="first-last")
    parser.add_argument("--budget", type=float, default=150.0)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--cooperative", action="store_true")
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--out", default="build/wire-stress")
    args = parser.parse_args()
    first, _, last = args.seeds.partition("-")
    seeds = range(int(first), int(last or first) + 1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    settings = Settings.from_environ(os.environ)  # this script's edge
    began = time.monotonic()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| target | seed | exit | s | verdict | traceback | replays |")
    print("| --- | --- | --- | --- | --- | --- | --- |", flush=True)
    runs = []
    for target in targets(args.clients.split(","), args.cooperative, settings):
        for seed in seeds:
            run = check(target, seed, args.budget, out)
            run.replays = [replay(f, args.attempts) for f in run.files]
            runs.append(run)
            print(row(run), flush=True)
    failed = [(r, p) for r in runs for p in r.problems()]
    print(f"\n{len(runs)} runs in {(time.monotonic() - began) / 60:.0f} min, "
          f"{sum(r.code == 1 for r in runs)} with a finding, {len(failed)} failure(s); "
          f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for r, problem in failed:
        print(f"FAILED {r.target} seed {r.seed}: {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
