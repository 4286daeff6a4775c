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
* ``scenario`` — fixed rebalance inputs (the bug zoo's), judged by the prover's rules.

Every violation comes with a counterexample file: a replay file for ``fuzz``
(``groupcheck replay``), a request file for ``prove``, ``vectors`` and ``scenario``
(``groupcheck assign``), a JSON record for ``codec``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .targets.registry import Target

INVARIANT_ROWS = ("I1", "I2", "I3", "I4a", "I5", "I6", "I7", "I8", "I9", "I10", "I11",
                  "PARITY", "ERROR")
ENGINES = ("fuzz", "prove", "vectors", "codec", "scenario")
DEFAULT_SCOPE = "members=3,topics=2,partitions=2,generations=2,claims=2"
SMALL_SCOPE = "members=2,topics=2,partitions=2,generations=2,claims=2"
_ID = re.compile(r"\b(I\d+a?|ERROR|PARITY)\b")


def file_safe(name: str) -> str:
    """A target name fit for a file name (a jsonl: command has spaces and slashes)."""
    return re.sub(r"[^A-Za-z0-9._:-]+", "_", name)[:60]


def invariant_id(violation: str) -> str:
    found = _ID.search(violation)
    return found.group(1) if found else "ERROR"


@dataclass
class Finding:
    invariant: str
    violation: str
    file: str | None = None
    size: int | None = None  # events (fuzz) or members (assign inputs)
    detail: str = ""  # the counterexample, readable


@dataclass
class EngineResult:
    engine: str
    checked: tuple[str, ...] = ()
    seconds: float = 0.0
    runs: int = 0
    findings: dict[str, Finding] = field(default_factory=dict)
    note: str = ""
    skipped: str = ""  # why the engine did not run

    def add(self, finding: Finding) -> None:
        self.findings.setdefault(finding.invariant, finding)

    @property
    def failed(self) -> bool:
        return bool(self.findings)


@dataclass
class BatteryResult:
    target: str
    engines: list[EngineResult]
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return any(e.failed for e in self.engines)

    def first(self) -> tuple[EngineResult, Finding] | None:
        for e in self.engines:
            for inv in INVARIANT_ROWS:
                if inv in e.findings:
                    return e, e.findings[inv]
        return None

    def table(self) -> str:
        ran = [e for e in self.engines if not e.skipped]
        width = max([12] + [len(e.engine) + 2 for e in ran])
        lines = [f"check {self.target}  ({self.seconds:.1f}s)",
                 "invariant  " + "".join(f"{e.engine:<{width}}" for e in ran)]
        files: list[str] = []
        for inv in INVARIANT_ROWS:
            cells = []
            for e in ran:
                if inv in e.findings:
                    files.append(f"  {inv} [{e.engine}]: {e.findings[inv].violation}"
                                 + (f"\n      {e.findings[inv].file}"
                                    if e.findings[inv].file else ""))
                    cells.append("VIOLATED")
                elif inv in e.checked:
                    cells.append("holds")
                else:
                    cells.append("-")
            if any(c != "-" for c in cells):
                lines.append(f"{inv:<11}" + "".join(f"{c:<{width}}" for c in cells))
        lines.append("")
        for e in self.engines:
            state = f"skipped: {e.skipped}" if e.skipped else \
                f"{e.runs:,} runs in {e.seconds:.1f}s" + (f"; {e.note}" if e.note else "")
            lines.append(f"  {e.engine:<9} {state}")
        if files:
            lines.append("counterexamples:")
            lines += files
        lines.append("VIOLATED" if self.failed else "every invariant held")
        return "\n".join(lines)


def _save_json(directory: str | os.PathLike[str], stem: str, body: dict[str, Any]) -> str:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(body, indent=1, ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    path = out / f"{file_safe(stem).replace(':', '-')}-{digest}.json"
    path.write_text(text + "\n", encoding="utf-8")
    return str(path)


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
            result.add(Finding("ERROR", f"ERROR: the group raised {type(exc).__name__}: {exc}",
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
    if target.balanced:
        base += ["I3", "I4a"]
    base += ["I5", "I6"]
    return tuple(base)


def run_prove(target: Target, scope_text: str, failures: str, *,
              workers: int | None = None) -> EngineResult:
    from .properties.scope import Scope, prove

    result = EngineResult("prove", _prover_checked(target))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    scope = Scope.parse(scope_text)
    if not target.fork_safe:
        workers = 1
    report = prove(target.assign, target.assignor, scope, target=file_safe(target.name),
                   workers=workers,
                   failures=failures, sticky=target.balanced)
    result.seconds = report.seconds
    result.runs = report.configurations
    result.note = f"scope {scope.text()}"
    for inv in INVARIANT_ROWS:
        cex = report.counterexamples.get(inv)
        if cex is not None:
            request, response = cex.rounds[cex.round_no]
            result.add(Finding(inv, cex.violations[0], cex.file, len(cex.config.members),
                               _request_detail(request, response)))
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
            path = _save_json(failures, f"scenario-{target.name}-{invariant_id(found[0])}",
                              body)
            result.add(Finding(invariant_id(found[0]), found[0], path, len(config.members),
                               f"scenario: {scenario.label}\n"
                               + _request_detail(request, response)))
            break
    result.seconds = time.perf_counter() - started
    return result


# ---------------------------------------------------------------------------------------
# vectors


def vectors_dir() -> Path | None:
    """``$GROUPCHECK_VECTORS``, else ``../shared/vectors`` beside the checkout or the
    working directory."""
    env = os.environ.get("GROUPCHECK_VECTORS")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve().parent.parent
    candidates += [here.parent / "shared" / "vectors", Path.cwd().parent / "shared" / "vectors"]
    for c in candidates:
        if (c / "assign.jsonl").is_file():
            return c
    return None


def load_assign_vectors() -> list[dict[str, Any]]:
    d = vectors_dir()
    if d is None:
        return []
    with open(d / "assign.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def answer(assign: Callable[[dict[str, Any]], dict[str, Any]],
           request: dict[str, Any]) -> dict[str, Any]:
    """The target's answer, with any exception as ``{"error": ...}``."""
    try:
        return assign(request)
    except Exception as exc:  # noqa: BLE001 - a failing target is a finding
        return {"error": f"{type(exc).__name__}: {exc}"}


def partition_sets(response: dict[str, Any]) -> dict[str, frozenset[tuple[str, int]]]:
    return {m: frozenset((str(t), int(p)) for t, p in ps)
            for m, ps in (response.get("assignment") or {}).items() if ps}


def run_vectors(target: Target, failures: str,
                lines: list[dict[str, Any]] | None = None) -> EngineResult:
    from .properties.assignment import exclusive_ownership, valid_targets

    result = EngineResult("vectors", ("I1", "I2", "PARITY"))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    lines = load_assign_vectors() if lines is None else lines
    if not lines:
        result.skipped = "golden vectors not found (set GROUPCHECK_VECTORS)"
        return result
    mine = [x for x in lines if x["request"].get("assignor") == target.assignor]
    if not mine:
        result.skipped = f"no vector lines for assignor {target.assignor!r}"
        return result
    started = time.perf_counter()
    counts = {"PARITY": 0, "I1": 0, "I2": 0}
    for line in mine:
        request, expected = line["request"], line["response"]
        got = answer(target.assign, request)
        result.runs += 1
        problems: list[str] = []
        if "error" not in got:
            subs = {m: v.get("topics") or [] for m, v in request["members"].items()}
            assignment = {m: [(t, p) for t, p in ps] for m, ps in got["assignment"].items()}
            problems += exclusive_ownership(assignment)
            problems += valid_targets(assignment, subs, request.get("partitions") or {})
        elif "kafka_bug" in line:
            problems.append(f"I2: answered with an error where a correct assignment exists: "
                            f"{got['error']}")
        if "kafka_bug" not in line:
            if "error" in expected and "error" not in got:
                problems.append(f"PARITY: Kafka raised {expected['errorClass']}, the target "
                                "answered")
            elif "error" not in expected and "error" in got:
                problems.append(f"PARITY: the target raised {got['error']}")
            elif "error" not in expected and partition_sets(got) != partition_sets(expected):
                problems.append(f"PARITY: {_first_member_difference(expected, got)}")
        for p in problems:
            inv = invariant_id(p)
            counts[inv] = counts.get(inv, 0) + 1
            if inv not in result.findings:
                body = {**request, "groupcheck": {
                    "format": "groupcheck-vector/1", "target": target.name,
                    "case": line.get("case"), "kafka_bug": line.get("kafka_bug"),
                    "violation": p, "kafka": expected, "got": got}}
                path = _save_json(failures, f"vector-{target.name}-{inv}", body)
                result.add(Finding(inv, f"{p} (case {line.get('case')})", path,
                                   len(request["members"]),
                                   f"case {line.get('case')}\n"
                                   f"request: {json.dumps(request)}\n"
                                   f"kafka:   {json.dumps(expected.get('assignment'))}\n"
                                   f"got:     {json.dumps(got.get('assignment', got))}"))
    result.seconds = time.perf_counter() - started
    bugs = sum(1 for x in mine if "kafka_bug" in x)
    result.note = (f"{len(mine)} lines ({bugs} kafka_bug); differing lines: "
                   + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return result


def _first_member_difference(expected: dict[str, Any], got: dict[str, Any]) -> str:
    a, b = partition_sets(expected), partition_sets(got)
    for m in sorted(set(a) | set(b)):
        if a.get(m, frozenset()) != b.get(m, frozenset()):
            def show(s: frozenset[tuple[str, int]]) -> str:
                return ",".join(f"{t}-{p}" for t, p in sorted(s)) or "-"
            return f"{m}: Kafka {show(a.get(m, frozenset()))}, target {show(b.get(m, frozenset()))}"
    return "no difference"


# ---------------------------------------------------------------------------------------
# codec


def codec_inputs() -> list[dict[str, Any]]:
    """Subscriptions that exercise every field: unsorted and repeated topics, unsorted owned
    partitions across topics, empty and absent user data, generations, racks."""
    return [
        {"topics": ["t0"], "userData": None, "owned": [], "generation": -1, "rack": None},
        {"topics": ["b", "a"], "userData": b"\x00\x01", "owned": [("b", 1), ("a", 0), ("b", 0)],
         "generation": 5, "rack": "r1"},
        {"topics": ["t1", "t0", "t2"], "userData": b"", "owned": [("t2", 3), ("t0", 1)],
         "generation": 2, "rack": None},
        {"topics": ["a"], "userData": b"xyz", "owned": [("a", 2), ("a", 0), ("a", 1)],
         "generation": 7, "rack": ""},
        {"topics": [], "userData": None, "owned": [], "generation": 0, "rack": "rack-\u00e9"},
    ]


def run_codec(target: Target, failures: str) -> EngineResult:
    from .properties.codec import (
        HIGHEST_VERSION,
        codec_violations,
        expected_subscription_decode,
    )
    from .targets.codecs import CodecFailure

    result = EngineResult("codec", ("I10",))
    codec = target.codec
    if codec is None:
        result.skipped = "no codec"
        return result
    started = time.perf_counter()
    for x in codec_inputs():
        for w in range(HIGHEST_VERSION + 1):
            found: list[str] = []
            try:
                data = codec.encode_subscription(dict(x), w)
            except Exception as exc:  # noqa: BLE001 - the writer must not fail
                found.append(f"I10: writing a valid subscription at v{w} raised "
                             f"{type(exc).__name__}: {exc}")
                data = None
            for r in range(HIGHEST_VERSION + 1):
                if data is None or found:
                    break
                result.runs += 1
                reread = r.to_bytes(2, "big", signed=True) + data[2:]
                try:
                    decoded: dict[str, Any] | None = codec.decode_subscription(reread)
                except CodecFailure:
                    decoded = None
                except Exception as exc:  # noqa: BLE001
                    found.append(f"I10: reading v{w} bytes as v{r} raised "
                                 f"{type(exc).__name__}: {exc} (must decode or fail cleanly)")
                    break
                if decoded is not None and decoded.get("remaining") is None:
                    # the codec does not say how many bytes it left unread: not judged
                    expected = expected_subscription_decode(x, w, r)
                    decoded["remaining"] = expected["remaining"] if expected else 0
                found += codec_violations(x, w, r, decoded)
            if found:
                body = {"op": "encode_subscription", "version": w, "topics": x["topics"],
                        "owned": [list(tp) for tp in x["owned"]], "generation": x["generation"],
                        "rack": x["rack"],
                        "userData": None if x["userData"] is None else x["userData"].hex(),
                        "groupcheck": {"format": "groupcheck-codec/1", "target": target.name,
                                       "violations": found,
                                       "hex": None if data is None else data.hex()}}
                path = _save_json(failures, f"codec-{target.name}-I10", body)
                result.add(Finding("I10", found[0], path, None,
                                   f"input: {x!r}\nwritten at v{w}: "
                                   f"{None if data is None else data.hex()}"))
                result.seconds = time.perf_counter() - started
                return result
    result.seconds = time.perf_counter() - started
    return result


# ---------------------------------------------------------------------------------------
# the battery


def default_scope(budget: float) -> str:
    return DEFAULT_SCOPE if budget >= 300 else SMALL_SCOPE


def run_battery(target: Target, *, budget: float = 120.0, parity: bool = False,
                scope: str | None = None, failures: str = "groupcheck-failures",
                seed: int = 0, engines: Iterable[str] = ("fuzz", "prove", "vectors", "codec"),
                workers: int | None = None) -> BatteryResult:
    """Every engine the target supports; fuzz gets what the others leave of ``budget``."""
    started = time.perf_counter()
    wanted = set(engines)
    out: list[EngineResult] = []
    if "codec" in wanted:
        out.append(run_codec(target, failures))
    if "prove" in wanted:
        out.append(run_prove(target, scope or default_scope(budget), failures,
                             workers=workers))
    if "vectors" in wanted:
        if parity:
            out.append(run_vectors(target, failures))
        else:
            out.append(EngineResult("vectors", skipped="not asked (--parity)"))
    if "fuzz" in wanted:
        left = max(budget - (time.perf_counter() - started), budget * 0.25)
        out.append(run_fuzz(target, left, failures, seed=seed))
    order = {e: i for i, e in enumerate(ENGINES)}
    out.sort(key=lambda e: order.get(e.engine, 99))
    return BatteryResult(target.name, out, time.perf_counter() - started)
