"""The whole battery against one target: used by ``groupcheck check``, ``zoo`` and the
pytest plugin.

Engines, each run only where the target has what it needs:

* ``fuzz`` — the Hypothesis state machine over the target's group (model/fuzz.py), in
  chunks of examples with successive seeds until its share of the budget is spent;
* ``prove`` — the exhaustive scope prover over the target's assign function
  (properties/scope.py);
* ``vectors`` — the golden vectors' ``assign`` lines for the target's assignor (with
  ``parity``): I1 and I2 on every answer, and on lines not marked ``kafka_bug`` the same
  partitions per member as Kafka's answer (``PARITY``); an exception where Kafka answered
  is also a ``PARITY`` difference;
* ``codec`` — I10 over every writer/reader version pair for a fixed set of subscriptions;
* ``scenarios`` — the audit's seeded random group stories (1–200 members, chains of
  rebalances) on the target's assign function (`scenario_engine`);
* ``scenario`` — fixed rebalance inputs (the bug zoo's), judged by the prover's rules.

Every violation comes with a counterexample file: a replay file for ``fuzz``
(``groupcheck replay``), a request file for ``prove``, ``vectors`` and ``scenario``
(``groupcheck assign``), a JSON record for ``codec``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from .battery_golden import (
    answer,
    load_assign_vectors,
    partition_sets,
    run_codec,
    run_vectors,
    vectors_dir,
)
from .battery_results import (
    DEFAULT_SCOPE,
    ENGINES,
    INVARIANT_ROWS,
    SMALL_SCOPE,
    BatteryResult,
    EngineResult,
    Finding,
    file_safe,
    invariant_id,
    save_json,
)
from .targets.registry import Target

__all__ = ["ENGINES", "INVARIANT_ROWS", "BatteryResult", "EngineResult", "Finding", "answer",
           "file_safe", "invariant_id", "load_assign_vectors", "machine_config",
           "partition_sets", "run_battery", "run_codec", "run_fuzz", "run_prove",
           "run_scenarios", "run_vectors", "save_json", "vectors_dir"]


# ---------------------------------------------------------------------------------------
# fuzz


def machine_config(target: Target) -> Any:
    """The state machine's configuration for a target (its hints, its wire versions)."""
    from .model.machine import config_for, wire_config

    hints = target.hints
    assert hints is not None and target.assignor is not None
    if hints.wire:
        return wire_config(hints.assignor, adversarial=hints.adversarial)
    config = config_for(hints.assignor, profiles=hints.profiles,
                        user_data_versions=hints.user_data_versions)
    config = replace(config, subscription_versions=hints.subscription_versions)
    if not hints.upgrades:
        config = replace(config, strategies=((hints.assignor,),), upgrades=())
    return config


def is_wire(name: str) -> bool:
    """A target of real clients on a real wire (slow: seconds per event)."""
    from .targets.registry import TargetError, resolve

    try:
        hints = resolve(name).hints
    except TargetError:
        return False
    return hints is not None and hints.wire


def run_fuzz(target: Target, budget: float, failures: str, *, seed: int = 0,
             chunk: int = 40, profile: str = "ci") -> EngineResult:
    """Chunks of examples with successive seeds until ``budget`` is spent. A wire target
    (real clients: seconds per event) runs five examples per chunk, starts no chunk the
    budget cannot hold (judged by the slowest chunk so far), and shrinks within the rest."""
    from .model.fuzz import fuzz
    from .model.replay import replay_events, save

    result = EngineResult("fuzz", ("I1", "I2", "I3", "I5", "I6", "I7", "I8", "I9", "I11"))
    if target.group is None:
        result.skipped = "no group target"
        return result
    config = machine_config(target)
    wire = target.hints is not None and target.hints.wire
    if wire:
        chunk, profile = 5, "wire"
        result.checked = ("I1", "I2", "I5", "I6", "I7", "I8", "I9", "I11")
    started = time.perf_counter()
    examples = 0
    chunks = 0
    slowest = 0.0
    while True:
        left = budget - (time.perf_counter() - started)
        if wire and chunks and left < 2 * slowest:
            break
        began = time.perf_counter()
        try:
            out = fuzz(target.group, config, profile=profile, max_examples=chunk,
                       seed_value=seed + chunks,
                       shrink_seconds=max(left - slowest, 60.0) / 2 if wire else None)
        except Exception as exc:  # noqa: BLE001 - the target failed outside the model
            kind = "TIMEOUT" if isinstance(exc, TimeoutError) else "ERROR"
            result.add(Finding(kind, f"{kind}: the group raised {type(exc).__name__}: {exc}",
                               None, None, f"seed {seed + chunks}"))
            break
        slowest = max(slowest, time.perf_counter() - began)
        chunks += 1
        examples += out.examples
        result.runs = examples
        if out.failed:
            path = save(failures, file_safe(target.name), out.events, out.violations,
                        seed + chunks - 1, extra={"target": target.name})
            story = replay_events(target.group(), out.events).story
            inv = invariant_id(out.violations[0])
            result.add(Finding(inv, out.violations[0], str(path), len(out.events),
                               "\n".join(story)))
            break
        if time.perf_counter() - started >= budget:
            break
    result.seconds = time.perf_counter() - started
    result.note = f"{chunks} chunk(s) of {chunk} examples, seeds {seed}..{seed + chunks - 1}"
    return result


# ---------------------------------------------------------------------------------------
# prove and scenarios


def _request_detail(request: dict[str, Any], response: Any) -> str:
    return (f"request:  {json.dumps(request, ensure_ascii=False)}\n"
            f"response: {json.dumps(response, ensure_ascii=False)}")


def _prover_checked(target: Target) -> tuple[str, ...]:
    base = ["I1", "I2", "I11", "ERROR"]
    if target.timeout is not None:
        base.append("TIMEOUT")
    if target.balanced:
        base += ["I3", "I4a"]
    base += ["I5", "I6"]
    return tuple(base)


def run_prove(target: Target, scope_text: str, failures: str, *,
              workers: int | None = None, strict: bool = False) -> EngineResult:
    """The scope prover; a violation Kafka's own client shows too (`kafka_rules`) goes to
    ``inherited`` unless ``strict``."""
    from .properties.scope import Scope, prove

    result = EngineResult("prove", _prover_checked(target))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    scope = Scope.parse(scope_text)
    if not target.fork_safe:
        workers = 1
    report = prove(target.assign, target.assignor, scope, target=file_safe(target.name),
                   workers=workers, failures=failures, sticky=target.balanced,
                   session=target.assign_session)
    result.seconds = report.seconds
    result.runs = report.configurations
    result.note = (f"scope {scope.text()}: "
                   + ("proof" if report.proved else "sampled, not proved"))
    for inv in INVARIANT_ROWS:
        cex = report.counterexamples.get(inv)
        if cex is not None:
            request, response = cex.rounds[cex.round_no]
            finding = Finding(inv, cex.violations[0], cex.file, len(cex.config.members),
                              _request_detail(request, response))
            if inv in report.own_violations or strict:
                result.add(finding)
            else:
                finding.violation = (f"{report.violations[inv]:,} configuration(s), Kafka's "
                                     f"own ({', '.join(report.rules.get(inv, []))}): "
                                     f"{finding.violation}")
                result.inherited[inv] = finding
    return result


def run_scenarios(target: Target, scenarios: Iterable[Any], failures: str,
                  expect: Callable[..., list[str]] | None = None) -> EngineResult:
    """Fixed inputs judged by the prover's rules (`properties.scope.judge`)."""
    from .properties.scope import judge

    result = EngineResult("scenario", _prover_checked(target))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    started = time.perf_counter()
    for scenario in scenarios:
        config = scenario.config()
        j = judge(target.assign, target.assignor, config, None, target.balanced)
        result.runs += 1
        found = list(j.violations)
        if not found and expect is not None and j.rounds and "assignment" in j.rounds[-1][1]:
            request = j.rounds[0][0]
            subs = {m: list(v["topics"]) for m, v in request["members"].items()}
            settled = {m: [(t, p) for t, p in ps]
                       for m, ps in j.rounds[-1][1]["assignment"].items()}
            found = expect(settled, subs)
        if found:
            request, response = j.rounds[-1] if j.rounds else ({}, None)
            body = {**request, "groupcheck": {"format": "groupcheck-scenario/1",
                                              "target": target.name, "scenario": scenario.label,
                                              "violations": found, "response": response}}
            path = save_json(failures, f"scenario-{target.name}-{invariant_id(found[0])}",
                              body)
            result.add(Finding(invariant_id(found[0]), found[0], path, len(config.members),
                               f"scenario: {scenario.label}\n"
                               + _request_detail(request, response)))
            break
    result.seconds = time.perf_counter() - started
    return result



# ---------------------------------------------------------------------------------------
# the battery


#: the share of ``check``'s budget the scenario engine gets (large groups, every target)
SCENARIOS_SHARE = 0.3


def default_scope(budget: float) -> str:
    return DEFAULT_SCOPE if budget >= 300 else SMALL_SCOPE


def run_battery(target: Target, *, budget: float = 120.0, parity: bool = False,
                scope: str | None = None, failures: str = "groupcheck-failures",
                seed: int = 0,
                engines: Iterable[str] = ("fuzz", "prove", "vectors", "codec", "scenarios"),
                workers: int | None = None, strict: bool = False) -> BatteryResult:
    """Every engine the target supports; fuzz gets what the others leave of ``budget``."""
    started = time.perf_counter()
    wanted = set(engines)
    out: list[EngineResult] = []
    if "codec" in wanted:
        out.append(run_codec(target, failures))
    if "prove" in wanted:
        out.append(run_prove(target, scope or default_scope(budget), failures,
                             workers=workers, strict=strict))
    if "vectors" in wanted:
        if parity:
            out.append(run_vectors(target, failures))
        else:
            out.append(EngineResult("vectors", skipped="not asked (--parity)"))
    if "scenarios" in wanted:
        from .scenario_engine import run_scenarios_engine

        out.append(run_scenarios_engine(target, budget * SCENARIOS_SHARE, failures, seed,
                                        strict=strict))
    if "fuzz" in wanted:
        left = max(budget - (time.perf_counter() - started), budget * 0.25)
        out.append(run_fuzz(target, left, failures, seed=seed))
    order = {e: i for i, e in enumerate(ENGINES)}
    out.sort(key=lambda e: order.get(e.engine, 99))
    return BatteryResult(target.name, out, time.perf_counter() - started)
