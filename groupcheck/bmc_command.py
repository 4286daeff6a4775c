"""``groupcheck prove --bmc`` and ``groupcheck prove --matrix``: bounded model checking of
the protocol across codec versions, and the compatibility matrix.

    groupcheck prove --bmc --depth K [--target T | --protocol eager|cooperative]
                     [--scope members=3,topics=1,partitions=3]
                     [--codecs subscription_version=0-3,user_data_version=0-1,...]
    groupcheck prove --matrix [--depth K] [--scope S] [--out FILE]

Every trace is replayed on an implementation (the target, else ``builtin:sticky`` for eager
groups and ``builtin:cooperative-sticky`` for cooperative ones) and saved as a replay file.
Exit codes: ``--bmc`` 0 no counterexample up to the depth, 1 a counterexample (printed as a
numbered story); ``--matrix`` 0 when every cell's traces replayed, 1 when the model found a
trace the implementation never reproduced; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .membership_commands import CommandError

PROTOCOL_OF = {"sticky": "EAGER", "cooperative-sticky": "COOPERATIVE"}
TARGET_OF = {"EAGER": "builtin:sticky", "COOPERATIVE": "builtin:cooperative-sticky"}
DEFAULT_BMC_SCOPE = "members=3,topics=1,partitions=3"
MAX_DEPTH = 24


def replayer(target: str) -> Any:
    """A ``confirm`` for `bmc_check.check`: replay a trace's events on a fresh ``target``."""
    from .model.replay import replay_events
    from .targets.registry import group_target_factory

    factory = group_target_factory(target)

    def confirm(trace: Any) -> list[str]:
        return replay_events(factory(), trace.events()).violations
    return confirm


def parse_codecs(text: str) -> dict[str, tuple[int, ...]]:
    """``subscription_version=0-3,user_data_version=1`` → allowed values per field."""
    from .model.bmc import CODEC_FIELDS

    out: dict[str, tuple[int, ...]] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, raw = item.partition("=")
        if not sep or key not in CODEC_FIELDS:
            raise CommandError(f"prove: bad --codecs item {item!r}; keys: "
                               f"{', '.join(CODEC_FIELDS)}")
        low, _, high = raw.partition("-")
        try:
            values = tuple(range(int(low), int(high or low) + 1))
        except ValueError:
            raise CommandError(f"prove: --codecs {key} wants N or N-M, not {raw!r}") from None
        if not values or not set(values) <= set(CODEC_FIELDS[key]):
            raise CommandError(f"prove: --codecs {key} must lie within "
                               f"{CODEC_FIELDS[key][0]}-{CODEC_FIELDS[key][-1]}")
        out[key] = values
    return out


def _plan(args: argparse.Namespace) -> list[tuple[str, str, dict[str, tuple[int, ...]]]]:
    """(protocol, replay target, codec domain) per run: the target's hints, else all."""
    codecs = parse_codecs(args.codecs or "")
    wanted = args.protocol.upper() if args.protocol else None
    if args.target is None:
        return [(p, TARGET_OF[p], codecs) for p in ("EAGER", "COOPERATIVE")
                if wanted in (None, p)]
    from .targets.registry import TargetError, machine_hints

    try:
        hints = machine_hints(args.target)
    except TargetError as exc:
        raise CommandError(f"prove: {exc}") from None
    if hints.assignor not in PROTOCOL_OF:
        raise CommandError(f"prove: --bmc models the sticky family; {args.target} runs "
                           f"{hints.assignor}")
    domain = {"subscription_version": hints.subscription_versions,
              "user_data_version": hints.user_data_versions, "cooperative_user_data": (1,)}
    domain.update(codecs)
    protocol = PROTOCOL_OF[hints.assignor]
    if wanted not in (None, protocol):
        raise CommandError(f"prove: {args.target} runs {hints.assignor}, a "
                           f"{protocol.lower()} protocol, not {args.protocol}")
    return [(protocol, args.target, domain)]


def _save(trace: Any, target: str, failures: str) -> Path:
    from .model.replay import save

    return save(failures, target, trace.events(), trace.replayed or [trace.invariant],
                None, {"bmc": trace.to_dict()})


def cmd_bmc(args: argparse.Namespace) -> int:
    from .model.bmc import CodecMix
    from .model.bmc_check import check

    depth = _depth(args.depth)
    scope = _scope(args.scope)
    failed = False
    for protocol, target, domain in _plan(args):
        result = check(scope, protocol, CodecMix(tuple(domain.items())), depth,
                       replayer(target))
        print(f"{protocol.lower()} group, replayed on {target}, {scope.text()}: "
              f"{result.verdict()} ({result.seconds:.2f}s, {result.solver_calls} solver "
              f"call(s))")
        trace = result.trace or (result.unconfirmed[0] if result.unconfirmed else None)
        if trace is None:
            if not target.startswith("builtin:"):
                print(f"note: the model's leader follows the protocol for the codec versions "
                      f"{target} speaks; its own assignor or consumer rules are checked by "
                      f"prove --target {target} (scope prover) and fuzz")
            continue
        failed = True
        print("\n".join(trace.story()))
        if trace.replayed:
            print(f"on {target}: {trace.replayed[0]}")
        print(f"replay file: {_save(trace, target, args.failures)}")
    return 1 if failed else 0


def cmd_matrix(args: argparse.Namespace) -> int:
    from .model.compat import compatibility_matrix

    depth = _depth(args.depth)
    scope = _scope(args.scope)
    matrix = compatibility_matrix(scope, depth, lambda p: replayer(TARGET_OF[p]))
    print(matrix.table())
    files: dict[tuple[str, str], str] = {}
    for cell, invariant, result in matrix.traces():
        assert result.trace is not None
        print(f"\n{cell.cell.protocol.lower()} / {cell.cell.label} / {invariant}:")
        print("\n".join(result.trace.story()))
        shown = result.trace.replayed[0] if result.trace.replayed else "not replayed"
        print(f"on {TARGET_OF[cell.cell.protocol]}: {shown}")
        path = str(_save(result.trace, TARGET_OF[cell.cell.protocol], args.failures))
        files[(cell.cell.label, invariant)] = path
        print(f"replay file: {path}")
    if args.out:
        body = matrix.to_dict()
        for row in body["cells"]:
            for invariant, entry in row["invariants"].items():
                entry["replay_file"] = files.get((row["codecs"], invariant))
        body["command"] = f"groupcheck prove --matrix --depth {depth} --scope {scope.text()}"
        out = Path(args.out)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n",
                           encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"prove: cannot write {args.out}: {exc.strerror}") from None
        print(f"matrix written to {args.out}")
    unconfirmed = [f"{c.cell.label} / {i}" for c in matrix.cells for i in c.results
                   if c.mark(i) == "unconfirmed"]
    for cell_name in unconfirmed:
        print(f"model and implementation disagree: {cell_name} (no trace replayed)")
    return 1 if unconfirmed else 0


def _depth(depth: int | None) -> int:
    chosen = 6 if depth is None else depth
    if not 1 <= chosen <= MAX_DEPTH:
        raise CommandError(f"prove: --depth must be in 1..{MAX_DEPTH}")
    return chosen


def _scope(text: str | None) -> Any:
    from .model.bmc import BmcScope

    try:
        return BmcScope.parse(text or DEFAULT_BMC_SCOPE)
    except ValueError as exc:
        raise CommandError(f"prove: {exc}") from None
