"""The battery's state-machine engine (``fuzz``): chunks of Hypothesis examples over the
target's group until its budget is spent, judged by the reference model.

Besides pass or fail it reports what the model counted (`model.stats`): the judgements per
invariant (a verdict needs at least one), Kafka's own behaviour it labelled (with a replay
file), and figures — imbalance and moves at every settled generation, the sizes of the
equal-subscription groups that settled, and the I4b gap: the moves between two settled
generations against Z3's fewest moves of any complete balanced assignment
(`properties.optimal`), for small groups, within a slice of the budget.

A target whose requests have a time limit (``jsonl:``, ``java:``) is judged on TIMEOUT too:
a request that gets no answer in time ends the engine with a ``TIMEOUT`` finding, the request
saved as a file (``groupcheck replay`` runs a saved ``assign`` request again); the process
is restarted for whatever runs next. A `HarnessError` (groupcheck's own failure, not the
target's) is let through: never a finding, never shrunk, never saved.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...model.events import DomainEvent
from ...model.fuzz import fuzz
from ...model.machine import config_for, wire_config
from ...model.promises import Promises
from ...model.replay import replay_events, save
from ...model.stats import Stats
from ...properties.balance import STICKY_FAMILY
from ...properties.harness import HarnessError
from ...properties.invariants import judged_by
from ...properties.optimal import MovesOracle
from ...targets.target import Target
from ...targets.wire.backends.factory import BROKER_NODES
from ..faults.table import fault_table
from ..progress import Meter, ProgressFn, silent
from .depth import MIN_EXAMPLES
from .results import EngineResult, Finding, file_safe, invariant_id, save_json

__all__ = ["FUZZ_CHECKED", "GAP_SECONDS", "GAP_SHARE", "SHRINK_SECONDS", "WIRE_CHECKED",
           "fuzz_reasons", "gap_figures", "machine_config", "run_fuzz"]

FUZZ_CHECKED = judged_by("fuzz", timed=False)
WIRE_CHECKED = judged_by("wire", timed=False)
GAP_SHARE = 0.1  # of the fuzz budget, for Z3's optima (at most GAP_SECONDS)
GAP_SECONDS = 10.0
SHRINK_SECONDS = 10.0  # in process: the delta-debugging pass alone, within this


def machine_config(target: Target) -> Any:
    """The state machine's configuration for a target (its hints, its wire versions, what
    its assignor promises, the errors it can be answered with)."""
    hints = target.hints
    assert hints is not None and target.assignor is not None
    if hints.wire:
        return replace(wire_config(hints.assignor, adversarial=hints.adversarial,
                                   steering=hints.steering, profiles=hints.profiles),
                       generations=hints.generations, fault_table=fault_table(target),
                       commit_styles=hints.commit_styles, closes=hints.steering,
                       moves=hints.steering and BROKER_NODES > 1)
    # members on the KIP-429 upgrade path also run Kafka's builtins, held to Kafka's rules
    promises = Promises(balance=((target.assignor, target.balance),),
                        sticky=STICKY_FAMILY | ({target.assignor} if target.sticky else set()))
    config = config_for(hints.assignor, profiles=hints.profiles,
                        user_data_versions=hints.user_data_versions, promises=promises)
    config = replace(config, subscription_versions=hints.subscription_versions,
                     generations=hints.generations, fault_table=fault_table(target))
    if not hints.upgrades:
        config = replace(config, strategies=((hints.assignor,),), upgrades=())
    return config


def fuzz_reasons(target: Target) -> dict[str, str]:
    out = {}
    if target.balance == "none":
        out["I3"] = "the assignor promises no balance (balance = 'none')"
    if not target.sticky:
        out["I4a"] = ("the assignor promises no stickiness (not Kafka's sticky family, no "
                      "balance = 'sticky')")
    else:
        out["I4a"] = ("no rebalance with unchanged membership over a balanced, valid "
                      "previous assignment arose")
    if target.protocol != "COOPERATIVE":
        out["I5"] = out["I6"] = "no cooperative rebalance (the assignor is EAGER)"
    if target.assignor not in ("sticky", "cooperative-sticky") and target.protocol == "EAGER":
        out["I12"] = "no user-data layout to read (not one of Kafka's sticky assignors)"
    return out


def gap_figures(stats: Any, seconds: float) -> tuple[dict[int, int], str]:
    """The I4b gap histogram over the small settled generations the model kept, within
    ``seconds``; and a note on what was measured."""
    try:
        oracle = MovesOracle()
    except ImportError:
        return {}, "I4b gap: not measured (install the z3 extra)"
    gaps: Counter[int] = Counter()
    started = time.perf_counter()
    for (subs, partitions, previous), moves in stats.gap_inputs.items():
        if time.perf_counter() - started > seconds:
            break
        try:
            optimum = oracle.min_moves(dict(subs), dict(partitions),
                                       {m: list(ps) for m, ps in previous}, None)
        except ImportError:
            return {}, "I4b gap: not measured (install the z3 extra)"
        gaps[moves - optimum] += 1
    total = len(stats.gap_inputs)
    return dict(gaps), (f"I4b gap measured on {sum(gaps.values()):,} of {total:,} small "
                        "settled generations (reported, never failed)" if total else "")


def _fill(result: EngineResult, stats: Any, gap_seconds: float) -> None:
    result.judged.update(stats.judged)
    result.delivery += stats.delivery
    result.commit_styles.update(stats.commit_styles)
    result.figures["imbalance"] = dict(stats.imbalance)
    result.figures["moves"] = dict(stats.moves)
    result.figures["equal_groups"] = dict(stats.equal_groups)
    result.shapes.update(_state_shape(key) for key in stats.gap_inputs)
    gaps, note = gap_figures(stats, gap_seconds)
    result.figures["gap"] = gaps
    result.figures["gap_note"] = note


def _state_shape(key: Any) -> str:
    """A small settled generation's class: members, distinct subscriptions, partitions and
    members that owned some before (`model.stats.GapInput`)."""
    subscriptions, partitions, previous = key
    owners = sum(1 for _, owned in previous if owned)
    return (f"state:m{len(subscriptions)}:s{len({ts for _, ts in subscriptions})}"
            f":p{sum(n for _, n in partitions)}:o{owners}")


def _inherited(result: EngineResult, target: Target, stats: Any,
               inherited_events: dict[str, list[DomainEvent]], failures: str) -> None:
    for inv, violation in stats.inherited.items():
        events = inherited_events.get(inv, [])
        path = save(failures, file_safe(target.name), events, [violation], None,
                    extra={"target": target.name, "assignor": target.assignor,
                           "inheritedFromKafka": True})
        result.inherited[inv] = Finding(inv, f"Kafka's own: {violation}", str(path),
                                        len(events))


def _raised(target: Target, exc: Exception, failures: str, seed: int) -> Finding:
    """A group that raised outside the model: ``TIMEOUT`` for a request that got no answer
    in time (saved when the target says which), else ``ERROR``."""
    kind = "TIMEOUT" if isinstance(exc, TimeoutError) else "ERROR"
    violation = f"{kind}: the group raised {type(exc).__name__}: {exc}"
    request = getattr(exc, "request", None)
    path = None
    if kind == "TIMEOUT" and isinstance(request, dict):
        path = save_json(failures, f"fuzz-{target.name}-TIMEOUT", {
            **request, "groupcheck": {"format": "groupcheck-fuzz-request/1",
                                      "target": target.name, "invariant": "TIMEOUT",
                                      "violation": violation, "seed": seed}},
            {"target": target.name, "invariant": "TIMEOUT", "request": request})
    return Finding(kind, violation, path, None, f"seed {seed}")


def _examples(meter: Meter, before: int) -> Callable[[int, int], None]:
    """The state machine's count of examples as ticks, after ``before`` examples."""
    return lambda examples, _events: meter.tick(before + examples)


def run_fuzz(target: Target, budget: float, failures: str, *, seed: int = 0,
             chunk: int = 20, profile: str = "ci", strict: bool = False,
             progress: ProgressFn = silent, minimum: int = MIN_EXAMPLES,
             to_minimum: bool = False) -> EngineResult:
    """Chunks of examples with successive seeds until ``budget`` is spent (the chunk under
    way stops at its end, at the next event), or with ``to_minimum`` until ``minimum``
    examples are played; short of ``minimum`` examples (a wire target: one chunk) the
    invariants it left unjudged are marked shallow. A failure is shrunk by the
    delta-debugging pass alone (within ``SHRINK_SECONDS`` and what is left of the budget;
    ``groupcheck fuzz`` also runs Hypothesis's shrinker), dated when first seen. A wire target
    (real clients: seconds per event) runs five examples per chunk, starts no chunk the
    budget cannot hold (judged by the slowest chunk so far), and shrinks within the rest.
    ``progress`` hears of every example."""
    result = EngineResult("fuzz", judged_by("fuzz", timed=bool(target.timeout)),
                          reasons=fuzz_reasons(target))
    if target.group is None:
        result.skipped = "no group target"
        return result
    config = machine_config(target)
    if strict:
        config = replace(config, promises=replace(config.promises, strict=True))
    wire = target.hints is not None and target.hints.wire
    if wire:
        chunk, profile, minimum = 5, "wire", 5
        result.checked = judged_by("wire", timed=bool(target.timeout))
    stats = Stats()
    inherited_events: dict[str, list[DomainEvent]] = {}
    meter = Meter(progress, "fuzz", target.name, budget)
    started = meter.started
    gap_seconds = min(GAP_SECONDS, budget * GAP_SHARE)
    budget -= gap_seconds
    deadline = started + budget
    chunks = 0
    slowest = 0.0
    cut = False
    while True:
        left = budget - (time.perf_counter() - started)
        if left <= 0 or (wire and chunks and left < 2 * slowest):
            break
        began = time.perf_counter()
        try:
            out = fuzz(target.group, config, profile=profile, max_examples=chunk,
                       seed_value=seed + chunks, stats=stats, inherited=inherited_events,
                       deadline=deadline, progress=_examples(meter, result.runs),
                       shrink_seconds=(left - slowest) / 2 if wire else SHRINK_SECONDS)
        except HarnessError:  # groupcheck's own failure: no verdict on the target
            raise
        except Exception as exc:  # noqa: BLE001 - the target failed outside the model
            result.add(_raised(target, exc, failures, seed + chunks))
            break
        slowest = max(slowest, time.perf_counter() - began)
        chunks += 1
        result.runs += out.examples
        if target.timeout:  # every request of every example had its time limit
            result.judged["TIMEOUT"] += out.examples
        if out.stopped:
            cut = True
            break
        if out.failed:
            found_at = stats.first_violation_at or time.perf_counter()
            story = "\n".join(replay_events(target.group(), out.events, config.promises,
                                            config.generations).story)
            path = save(failures, file_safe(target.name), out.events, out.violations,
                        seed + chunks - 1,
                        extra={"target": target.name, "assignor": target.assignor})
            for violation in out.violations:  # every invariant broken in the last event
                result.add(Finding(invariant_id(violation), violation, str(path),
                                   len(out.events), story, found_at))
            break
        if time.perf_counter() - started >= budget or (to_minimum and result.runs >= minimum):
            break
    result.seconds = time.perf_counter() - started
    result.note = (f"{chunks} chunk(s) of {chunk} examples, seeds {seed}..{seed + chunks - 1}"
                   + ("; the last cut short at the end of the budget" if cut else ""))
    _fill(result, stats, gap_seconds)
    _mark_depth(result, minimum)
    _inherited(result, target, stats, inherited_events, failures)
    return result


def _mark_depth(result: EngineResult, minimum: int) -> None:
    """The examples played against ``minimum``; short of it, the invariants left unjudged
    are shallow, and ``needs`` the seconds the rest would take at the rate measured."""
    result.depth = f"{result.runs:,} examples (minimum {minimum})"
    if result.runs < minimum and not result.failed:
        result.shallow = tuple(i for i in result.checked if not result.judged[i])
        result.needs = (minimum - result.runs) * result.seconds / max(result.runs, 1)
