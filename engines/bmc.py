"""``groupcheck prove --bmc`` and ``--matrix``: bounded model checking of the protocol across
codec versions, and the compatibility matrix, each trace replayed on an implementation.

Every trace is replayed on an implementation (the target, else ``builtin:sticky`` for eager
groups and ``builtin:cooperative-sticky`` for cooperative ones) and saved as a replay file.
``--bmc`` fails on a counterexample up to the depth; ``--matrix`` fails when the model found
a trace the implementation never reproduced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.bmc import CODEC_FIELDS, BmcScope, CodecMix
from ..model.bmc_check import check
from ..model.compat import compatibility_matrix
from ..model.replay import replay_events, save
from ..properties.saved_json import steady_text, without_times
from ..targets.registry import NO_SETTINGS, group_target_factory, machine_hints
from ..targets.settings import Settings
from ..targets.target import TargetError
from .errors import EngineInputError
from .progress import Meter, ProgressFn, silent

__all__ = ["DEFAULT_BMC_SCOPE", "MAX_DEPTH", "PROTOCOL_OF", "TARGET_OF", "BmcOutcome",
           "bmc_depth", "bmc_scope", "parse_codecs", "replayer", "run_bmc", "run_matrix"]

PROTOCOL_OF = {"sticky": "EAGER", "cooperative-sticky": "COOPERATIVE"}
TARGET_OF = {"EAGER": "builtin:sticky", "COOPERATIVE": "builtin:cooperative-sticky"}
DEFAULT_BMC_SCOPE = "members=3,topics=1,partitions=3"
MAX_DEPTH = 24
Plan = list[tuple[str, str, dict[str, tuple[int, ...]]]]


@dataclass
class BmcOutcome:
    """What a run found: the lines to print, and whether it failed."""

    lines: list[str] = field(default_factory=list)
    failed: bool = False


def replayer(target: str, settings: Settings = NO_SETTINGS) -> Callable[[Any], list[str]]:
    """A ``confirm`` for `bmc_check.check`: replay a trace's events on a fresh ``target``."""
    factory = group_target_factory(target, settings=settings)

    def confirm(trace: Any) -> list[str]:
        return replay_events(factory(), trace.events()).violations
    return confirm


def parse_codecs(text: str) -> dict[str, tuple[int, ...]]:
    """``subscription_version=0-3,user_data_version=1`` → allowed values per field."""
    out: dict[str, tuple[int, ...]] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, sep, raw = item.partition("=")
        if not sep or key not in CODEC_FIELDS:
            raise EngineInputError(f"prove: bad --codecs item {item!r}; keys: "
                                   f"{', '.join(CODEC_FIELDS)}")
        low, _, high = raw.partition("-")
        try:
            values = tuple(range(int(low), int(high or low) + 1))
        except ValueError:
            raise EngineInputError(f"prove: --codecs {key} wants N or N-M, not {raw!r}"
                                   ) from None
        if not values or not set(values) <= set(CODEC_FIELDS[key]):
            raise EngineInputError(f"prove: --codecs {key} must lie within "
                                   f"{CODEC_FIELDS[key][0]}-{CODEC_FIELDS[key][-1]}")
        out[key] = values
    return out


def plan(target: str | None, protocol: str | None, codecs: str | None,
         settings: Settings = NO_SETTINGS) -> Plan:
    """(protocol, replay target, codec domain) per run: the target's hints, else all."""
    domain_asked = parse_codecs(codecs or "")
    wanted = protocol.upper() if protocol else None
    if target is None:
        return [(p, TARGET_OF[p], domain_asked) for p in ("EAGER", "COOPERATIVE")
                if wanted in (None, p)]
    try:
        hints = machine_hints(target, settings)
    except TargetError as exc:
        raise EngineInputError(f"prove: {exc}") from None
    if hints.assignor not in PROTOCOL_OF:
        raise EngineInputError(f"prove: --bmc models the sticky family; {target} runs "
                               f"{hints.assignor}")
    domain = {"subscription_version": hints.subscription_versions,
              "user_data_version": hints.user_data_versions, "cooperative_user_data": (1,)}
    domain.update(domain_asked)
    runs = PROTOCOL_OF[hints.assignor]
    if wanted not in (None, runs):
        raise EngineInputError(f"prove: {target} runs {hints.assignor}, a "
                               f"{runs.lower()} protocol, not {protocol}")
    return [(runs, target, domain)]


def bmc_depth(depth: int | None) -> int:
    """``--depth``, 6 by default, within 1..`MAX_DEPTH`."""
    chosen = 6 if depth is None else depth
    if not 1 <= chosen <= MAX_DEPTH:
        raise EngineInputError(f"prove: --depth must be in 1..{MAX_DEPTH}")
    return chosen


def bmc_scope(text: str | None) -> BmcScope:
    """``--scope`` for BMC (members, topics, partitions)."""
    try:
        return BmcScope.parse(text or DEFAULT_BMC_SCOPE)
    except ValueError as exc:
        raise EngineInputError(f"prove: {exc}") from None


def _save(trace: Any, target: str, failures: str) -> Path:
    return save(failures, target, trace.events(), trace.replayed or [trace.invariant],
                None, {"bmc": trace.to_dict()})


def run_bmc(*, target: str | None, protocol: str | None, codecs: str | None,
            depth: int | None, scope: str | None, failures: str,
            settings: Settings = NO_SETTINGS, progress: ProgressFn = silent) -> BmcOutcome:
    """BMC of each planned protocol up to the depth; every trace told and saved;
    ``progress`` hears of every depth searched."""
    chosen_depth, chosen_scope = bmc_depth(depth), bmc_scope(scope)
    out = BmcOutcome()
    for runs, replay_on, domain in plan(target, protocol, codecs, settings):
        result = check(chosen_scope, runs, CodecMix(tuple(domain.items())), chosen_depth,
                       replayer(replay_on, settings),
                       on_depth=_depths(Meter(progress, "bmc", f"{runs.lower()} group, "
                                              f"replayed on {replay_on}"), chosen_depth))
        out.lines.append(f"{runs.lower()} group, replayed on {replay_on}, "
                         f"{chosen_scope.text()}: {result.verdict()} ({result.seconds:.2f}s, "
                         f"{result.solver_calls} solver call(s))")
        trace = result.trace or (result.unconfirmed[0] if result.unconfirmed else None)
        if trace is None:
            if not replay_on.startswith("builtin:"):
                out.lines.append(
                    f"note: the model's leader follows the protocol for the codec versions "
                    f"{replay_on} speaks; its own assignor or consumer rules are checked by "
                    f"prove --target {replay_on} (scope prover) and fuzz")
            continue
        out.failed = True
        out.lines.append("\n".join(trace.story()))
        if trace.replayed:
            out.lines.append(f"on {replay_on}: {trace.replayed[0]}")
        out.lines.append(f"replay file: {_save(trace, replay_on, failures)}")
    return out


def _depths(meter: Meter, depth: int) -> Callable[[int], None]:
    """BMC's depths as ticks."""
    return lambda k: meter.tick(k, note=f"depth {k} of {depth}")


def run_matrix(*, depth: int | None, scope: str | None, failures: str,
               out_file: str | None, settings: Settings = NO_SETTINGS,
               progress: ProgressFn = silent) -> BmcOutcome:
    """The compatibility matrix; ``out_file``: also write it as JSON; ``progress`` hears
    of every cell done."""
    chosen_depth, chosen_scope = bmc_depth(depth), bmc_scope(scope)
    meter = Meter(progress, "compat", f"depth {chosen_depth}, {chosen_scope.text()}")
    matrix = compatibility_matrix(chosen_scope, chosen_depth,
                                  lambda p: replayer(TARGET_OF[p], settings),
                                  on_cell=lambda n, label: meter.tick(n, note=label))
    out = BmcOutcome([matrix.table()])
    files: dict[tuple[str, str], str] = {}
    for cell, invariant, result in matrix.traces():
        assert result.trace is not None
        out.lines.append(f"\n{cell.cell.protocol.lower()} / {cell.cell.label} / {invariant}:")
        out.lines.append("\n".join(result.trace.story()))
        shown = result.trace.replayed[0] if result.trace.replayed else "not replayed"
        out.lines.append(f"on {TARGET_OF[cell.cell.protocol]}: {shown}")
        path = str(_save(result.trace, TARGET_OF[cell.cell.protocol], failures))
        files[(cell.cell.label, invariant)] = path
        out.lines.append(f"replay file: {path}")
    if out_file:
        body = matrix.to_dict()
        for row in body["cells"]:
            for invariant, entry in row["invariants"].items():
                entry["replay_file"] = files.get((row["codecs"], invariant))
        body["command"] = (f"groupcheck prove --matrix --depth {chosen_depth} "
                           f"--scope {chosen_scope.text()}")
        _write_json(out_file, body)
        out.lines.append(f"matrix written to {out_file}")
    unconfirmed = [f"{c.cell.label} / {i}" for c in matrix.cells for i in c.results
                   if c.mark(i) == "unconfirmed"]
    for cell_name in unconfirmed:
        out.lines.append(f"model and implementation disagree: {cell_name} (no trace replayed)")
    out.failed = bool(unconfirmed)
    return out


def _write_json(path: str, body: Mapping[str, object]) -> None:
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(steady_text(without_times(body)), encoding="utf-8")
    except OSError as exc:
        raise EngineInputError(f"prove: cannot write {path}: {exc.strerror}") from None
