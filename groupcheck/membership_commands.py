"""``groupcheck fuzz`` and ``groupcheck replay``: the state machine from the command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engines load only when a command runs: `jsonl` needs none of them
    from .model.machine import MachineConfig
    from .properties.group import GroupTarget

SETTINGS = ("ci", "dev", "deep", "wire")  # model.fuzz.PROFILES
WIRE_SHRINK_SECONDS = 240.0  # real clients replay in seconds: shrink within this

DEFAULT_FAILURES = "groupcheck-failures"


class CommandError(Exception):
    """Reported as one line with exit code 2."""


def _config(target: str) -> MachineConfig:
    from .battery import machine_config
    from .targets.registry import TargetError, resolve

    try:
        chosen: MachineConfig = machine_config(resolve(target))
    except TargetError as exc:
        raise CommandError(str(exc)) from None
    return chosen


def _factory(target: str) -> Callable[[], GroupTarget]:
    from .targets.registry import TargetError, group_target_factory

    try:
        return group_target_factory(target)
    except TargetError as exc:
        raise CommandError(str(exc)) from None


def _progress(started: float) -> Callable[[int, int], None]:
    def show(examples: int, events: int) -> None:
        if sys.stderr.isatty():
            print(f"\r  examples {examples:>5}  events {events:>7}  "
                  f"{time.perf_counter() - started:6.1f}s", end="", file=sys.stderr, flush=True)
    return show


def cmd_fuzz(args: argparse.Namespace) -> int:
    from .battery import is_wire
    from .model.fuzz import fuzz
    from .model.replay import replay_events, save

    factory = _factory(args.target)
    wire = is_wire(args.target)
    settings = "wire" if wire and args.settings == "ci" else args.settings
    started = time.perf_counter()
    result = fuzz(factory, _config(args.target), profile=settings,
                  max_examples=args.max_examples, seed_value=args.seed,
                  progress=_progress(started),
                  shrink_seconds=WIRE_SHRINK_SECONDS if wire else None)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    rate = result.steps / result.seconds if result.seconds else 0.0
    print(f"{args.target}: {result.examples} examples, {result.steps} events in "
          f"{result.seconds:.1f}s ({rate:.0f} events/s), settings {settings}, "
          f"seed {args.seed}")
    if not result.failed:
        print("every invariant held")
        return 0
    path = save(args.failures, args.target, result.events, result.violations, args.seed)
    outcome = replay_events(factory(), result.events)
    print(f"VIOLATION {result.violations[0]}")
    print(f"shrunk to {len(result.events)} events; the story:")
    print("\n".join(outcome.story))
    print(f"replay file: {path}  (groupcheck replay {path})")
    return 1


def cmd_replay(args: argparse.Namespace) -> int:
    from .model.replay import load, replay_events

    try:
        data = load(args.file)
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot replay {args.file}: {exc}") from None
    target = args.target or data["target"]
    outcome = replay_events(_factory(target)(), data["events"])
    print(f"replaying {args.file} ({len(data['events'])} events) on {target}")
    if data.get("note"):
        print(f"note: {data['note']}")
    print("\n".join(outcome.story))
    if outcome.violations:
        print(f"reproduced: {outcome.violations[0]}")
        return 1
    print("did not reproduce: every invariant held")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from .check_command import add_broker_option

    p = sub.add_parser("fuzz", help="run the stateful model against a target")
    p.add_argument("--target", required=True,
                   help="builtin:<assignor>, mutant:<name>, wire:<client>:<assignor>, …")
    p.add_argument("--max-examples", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--settings", choices=SETTINGS, default="ci",
                   help="ci (default; wire for librdkafka: targets), dev, deep, wire")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where replay files go")
    add_broker_option(p)
    p.set_defaults(func=cmd_fuzz)
    p = sub.add_parser("replay", help="run a saved counterexample again")
    p.add_argument("file")
    p.add_argument("--target", default=None, help="replay on another target")
    add_broker_option(p)
    p.set_defaults(func=cmd_replay)
