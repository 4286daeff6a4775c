"""``groupcheck fuzz`` and ``groupcheck replay``: the state machine from the command line,
and replays of saved counterexamples (state-machine stories, or single ``assign`` requests:
`request_replay`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .cli_values import int_at_least, positive_seconds

if TYPE_CHECKING:  # the engines load only when a command runs: `jsonl` needs none of them
    from .model.machine import MachineConfig
    from .targets.registry import Target

SETTINGS = ("ci", "dev", "deep", "wire")  # model.fuzz.PROFILES
WIRE_SHRINK_SECONDS = 240.0  # real clients replay in seconds: shrink within this

DEFAULT_FAILURES = "groupcheck-failures"


class CommandError(Exception):
    """Reported as one line with exit code 2."""


def _resolve(target: str, assignor: str | None = None,
             timeout: float | None = None) -> Target:
    from .targets.registry import TargetError, resolve

    try:
        return resolve(target, assignor=assignor, timeout=timeout)
    except TargetError as exc:
        raise CommandError(str(exc)) from None


def _group_target(target: str, assignor: str | None = None,
                  timeout: float | None = None) -> Target:
    """The target, which must have a group (a target that offers several assignors needs
    ``assignor``)."""
    resolved = _resolve(target, assignor, timeout)
    if resolved.group is None:
        if resolved.choices is not None and resolved.assignor is None:
            raise CommandError(f"{target} offers several assignors "
                               f"({', '.join(resolved.choices())}); name one")
        raise CommandError(f"{target} is not a group target (it has no assignor)")
    return resolved


def _progress(started: float) -> Callable[[int, int], None]:
    def show(examples: int, events: int) -> None:
        if sys.stderr.isatty():
            print(f"\r  examples {examples:>5}  events {events:>7}  "
                  f"{time.perf_counter() - started:6.1f}s", end="", file=sys.stderr, flush=True)
    return show


def _fuzz_one(args: argparse.Namespace, target: Target) -> int:
    from .battery import machine_config
    from .model.fuzz import fuzz
    from .model.replay import replay_events, save

    if target.group is None:
        print(f"{target.name} [{target.assignor}]: no group to drive (not a group target)")
        return 0
    config: MachineConfig = machine_config(target)
    wire = target.hints is not None and target.hints.wire
    settings = "wire" if wire and args.settings == "ci" else args.settings
    started = time.perf_counter()
    result = fuzz(target.group, config, profile=settings,
                  max_examples=args.max_examples, seed_value=args.seed,
                  progress=_progress(started),
                  shrink_seconds=WIRE_SHRINK_SECONDS if wire else None)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    rate = result.steps / result.seconds if result.seconds else 0.0
    print(f"{target.name} [{target.assignor}]: {result.examples} examples, {result.steps} "
          f"events in {result.seconds:.1f}s ({rate:.0f} events/s), settings {settings}, "
          f"seed {args.seed}")
    if not result.failed:
        judged = ", ".join(f"{inv} {n:,}" for inv, n in sorted(result.stats.judged.items()))
        print(f"every invariant judged held (judgements: {judged})")
        return 0
    path = save(args.failures, args.target, result.events, result.violations, args.seed,
                extra={"assignor": target.assignor})
    outcome = replay_events(target.group(), result.events, config.promises)
    print(f"VIOLATION {result.violations[0]}")
    print(f"shrunk to {len(result.events)} events; the story:")
    print("\n".join(outcome.story))
    print(f"replay file: {path}  (groupcheck replay {path})")
    return 1


def cmd_fuzz(args: argparse.Namespace) -> int:
    from .check_command import offers_of
    from .targets.offers import close_all

    offers = offers_of(args.target, args.assignor, args.timeout)
    code = 0
    try:
        for offer in offers:
            if offer.target is None:
                print(f"{args.target} [{offer.label}]: not supported: {offer.error}")
                continue
            code = max(code, _fuzz_one(args, offer.target))
    finally:
        close_all(offers)
    return code


def cmd_replay(args: argparse.Namespace) -> int:
    import json

    from .battery import machine_config
    from .model.replay import load, replay_events
    from .request_replay import is_request_file

    try:
        with open(args.file, encoding="utf-8") as fh:
            body = json.load(fh)
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot replay {args.file}: {exc}") from None
    if is_request_file(body):
        return _replay_request(args, body)
    try:
        data = load(args.file)
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot replay {args.file}: {exc}") from None
    name = args.target or data["target"]
    target = _group_target(name, args.assignor or data.get("assignor"), args.timeout)
    assert target.group is not None
    promises = machine_config(target).promises if target.hints is not None else None
    try:
        outcome = replay_events(target.group(), data["events"], promises)
    finally:
        target.close()
    print(f"replaying {args.file} ({len(data['events'])} events) on {name}")
    if data.get("note"):
        print(f"note: {data['note']}")
    print("\n".join(outcome.story))
    if outcome.violations:
        print(f"reproduced: {outcome.violations[0]}")
        return 1
    print("did not reproduce: every invariant held")
    return 0


def _replay_request(args: argparse.Namespace, body: dict[str, Any]) -> int:
    """One saved ``assign`` request on ``--target`` (else the target it was saved from)."""
    from .request_replay import answer_table, replay_request

    meta = body.pop("groupcheck", None) or {}
    name = args.target or meta.get("target")
    if not isinstance(name, str):
        raise CommandError(f"cannot replay {args.file}: it names no target; give --target")
    assignor = args.assignor or body.get("assignor")
    target = _resolve(name, assignor if isinstance(assignor, str) else None, args.timeout)
    if target.assign is None:
        raise CommandError(f"{name} has no assign function to replay a request on")
    body.setdefault("op", "assign")
    try:
        print(f"replaying {args.file} (one assign request, {len(body['members'])} members, "
              f"{body.get('assignor')}) on {name}")
        response, found = replay_request(target, body)
    finally:
        target.close()
    if response is not None:
        print(answer_table(response))
    if found:
        print(f"reproduced: {found[0]}")
        return 1
    print("did not reproduce: every invariant held")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from .check_command import add_broker_option

    p = sub.add_parser("fuzz", help="run the stateful model against a target")
    p.add_argument("--target", required=True,
                   help="any target with a group (an assignor): builtin:<assignor>, "
                        "mutant:<name>, python:pkg.module[:attr], jsonl:<command>, "
                        "java:[CLASSPATH], wire:<client>:<assignor>, …")
    p.add_argument("--assignor", action="append", default=None,
                   help="which assignors (repeatable or comma-separated; default: every "
                        "assignor the target answers)")
    _timeout_option(p)
    p.add_argument("--max-examples", type=int_at_least(1), default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--settings", choices=SETTINGS, default="ci",
                   help="ci (default; wire for librdkafka: targets), dev, deep, wire")
    p.add_argument("--failures", default=DEFAULT_FAILURES, help="where replay files go")
    add_broker_option(p)
    p.set_defaults(func=cmd_fuzz)
    p = sub.add_parser("replay", help="run a saved counterexample again (a state-machine "
                                      "replay file, or one saved assign request)")
    p.add_argument("file")
    p.add_argument("--target", default=None, help="replay on another target")
    p.add_argument("--assignor", default=None,
                   help="the assignor, for a target that answers several (default: the one "
                        "the file was found on; a replayed request names its own)")
    _timeout_option(p)
    add_broker_option(p)
    p.set_defaults(func=cmd_replay)


def _timeout_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=positive_seconds, default=None,
                   help="seconds per request for a jsonl: or java: target before it is a "
                        "TIMEOUT (default 10)")
