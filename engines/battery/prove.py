"""The battery's engines over a target's assign function: the exhaustive scope prover
(``prove``) and fixed rebalance inputs judged by the prover's rules (``scenario``, the bug
zoo's triggers).

What each judges on a target follows from what its assignor promises: I1, I2 and ERROR
always; I3 under the assignor's balance contract (the prover's own rule is Kafka's
isBalanced; the range and roundrobin rules are judged on every answer as it passes,
`contract`); I4a when stickiness is promised (a breach by an assignor that promises
none is not reported); I5, I6 and I11 for a COOPERATIVE assignor. The prover reports
how many configurations it ran, not which premises held in each, so the judgements of
I4a (its premise: equal generations and a complete balanced previous assignment) and of
I6 (contested claims) are counted by a pass over the scope's requests — every one in a small
scope, the first of each in a large one. A target whose requests have a time limit (``jsonl:``,
``java:``) is judged on TIMEOUT too: an assign call that does not answer in time is a
finding with its request saved, and the process is restarted for the next one.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from ...properties.deviations import EVIDENCE
from ...properties.generations import contested
from ...properties.jsonl_shapes import Answered, AssignRequest
from ...properties.rebalance import i4a_applies, sent_claims
from ...properties.scope.enumeration import enumerate_scope
from ...properties.scope.judgement import build_request, judge
from ...properties.scope.prover import prove
from ...properties.scope.space import Scope
from ...targets.target import Target
from ..progress import Meter, ProgressFn, Tick, silent
from .contract import ContractWatch, watched
from .results import (
    INVARIANT_ROWS,
    EngineResult,
    Finding,
    file_safe,
    invariant_id,
    save_json,
)

__all__ = ["DEPTH_SCOPE", "PORTFOLIO", "PREMISE_SECONDS", "extend_portfolio", "premise_counts",
           "prover_checked", "prover_reasons", "run_prove", "run_prove_within", "run_scenarios",
           "scope_size", "scopes_run"]

PREMISE_SECONDS = 1.0  # the premise count's time, after which it reports "at least"
#: the scope every assignor's prover covers before any other (depth before breadth): three
#: members claiming one partition at three different generations, the shape of stale and
#: conflicting claims that only a third generation shows
DEPTH_SCOPE = "members=3,topics=1,partitions=1,generations=3,claims=3"
#: small scopes along different axes, ordered by what they can reveal per configuration:
#: the depth scope, then the cheapest: every labelled configuration (assignors that depend
#: on member names); four members; the general one with stale and conflicting claims; three
#: claimants of one partition over two topics; more partitions per topic
PORTFOLIO = (DEPTH_SCOPE,
             "members=2,topics=2,partitions=1,generations=1,claims=1,symmetry=0",
             "members=4,topics=1,partitions=2,generations=1,claims=1",
             "members=2,topics=2,partitions=2,generations=2,claims=2",
             "members=3,topics=2,partitions=1,generations=2,claims=3",
             "members=2,topics=2,partitions=3,generations=1,claims=1")


def _request_detail(request: AssignRequest | None, response: Answered | None) -> str:
    return (f"request:  {json.dumps(request or {}, ensure_ascii=False)}\n"
            f"response: {json.dumps(response, ensure_ascii=False)}")


def prover_checked(target: Target) -> tuple[str, ...]:
    """The invariants the prover's rules judge on ``target``."""
    base = ["I1", "I2", "ERROR"]
    if target.timeout is not None:
        base.append("TIMEOUT")
    if target.balance != "none":
        base.append("I3")
    if target.sticky:
        base.append("I4a")
    base += ["I5", "I6", "I11"]
    return tuple(base)


def prover_reasons(target: Target) -> dict[str, str]:
    out = {}
    if target.balance == "roundrobin":
        out["I3"] = "no request with equal subscriptions (roundrobin's premise) arose"
    if target.protocol != "COOPERATIVE":
        for inv in ("I5", "I6"):
            out[inv] = "an EAGER assignor: nothing is handed over within a rebalance"
        out["I11"] = "an EAGER assignor settles in one rebalance"
    return out


def premise_counts(assignor: str, scope_text: str, deadline: float | None = None
                   ) -> tuple[dict[str, int], bool]:
    """How many of the scope's first-round requests meet I4a's premise, hold contested
    claims and have equal subscriptions (roundrobin's premise, under ``I3``); ``True`` when
    every request was counted (else the counts are lower bounds: the count stops after
    `PREMISE_SECONDS` once each is found, and at ``deadline`` in any case)."""
    counts = {"I4a": 0, "I6": 0, "I3": 0}
    started = time.perf_counter()
    for config in enumerate_scope(Scope.parse(scope_text)):
        if deadline is not None and time.perf_counter() >= deadline:
            return counts, False
        request = build_request(assignor, config)
        subs = {m: list(v["topics"]) for m, v in request["members"].items()}
        counts["I4a"] += i4a_applies(request, subs, request["partitions"])
        counts["I6"] += bool(contested(sent_claims(request)))
        counts["I3"] += len({frozenset(t for t in ts if t in request["partitions"])
                             for ts in subs.values()}) == 1
        if time.perf_counter() - started > PREMISE_SECONDS and all(counts.values()):
            return counts, False
    return counts, True


def _judged(result: EngineResult, target: Target, report: Any, scope_text: str,
            deadline: float | None) -> None:
    configurations = report.configurations
    for inv in ("I1", "I2", "ERROR"):
        result.judged[inv] = configurations
    if target.timeout is not None:
        result.judged["TIMEOUT"] = report.assign_calls
    result.judged["I3"] = configurations if target.balance in ("sticky", "range") else 0
    if target.protocol == "COOPERATIVE":
        result.judged["I5"] = configurations
        result.judged["I11"] = max(report.assign_calls - configurations, 0)
    if not target.sticky and target.protocol != "COOPERATIVE" and target.balance != "roundrobin":
        return
    counts, complete = premise_counts(target.assignor or "", scope_text, deadline)
    if target.balance == "roundrobin":
        result.judged["I3"] = counts["I3"]
    if target.sticky:
        result.judged["I4a"] = counts["I4a"]
    if target.protocol == "COOPERATIVE":
        result.judged["I6"] = counts["I6"]
    if not complete:
        result.note += "; judgements counted by premise are lower bounds"


def run_prove(target: Target, scope_text: str, failures: str, *,
              workers: int | None = None, strict: bool = False,
              reference: Target | None = None, deadline: float | None = None,
              progress: ProgressFn = silent) -> EngineResult:
    """The scope prover; a violation Kafka's own client shows too (`kafka_rules`, or the
    ``reference`` answering its requests identically) goes to ``inherited`` unless
    ``strict``. ``deadline`` (``time.perf_counter``): the prover stops there, its note says
    so, and the run is no proof; ``progress`` hears of each unit of work."""
    result = EngineResult("prove", prover_checked(target), reasons=prover_reasons(target))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    scope = Scope.parse(scope_text)
    if not target.fork_safe or (reference is not None and not reference.fork_safe):
        workers = 1
    watch = (watched(target.assign, target.balance, failures)
             if target.balance in ("range", "roundrobin") else None)
    session = target.assign_session
    if watch is not None and session is not None:
        make, contract, log = session, watch.contract, watch.log
        session = lambda: ContractWatch(make(), contract, log)  # noqa: E731 - one log for all
    batch = target.batch
    if watch is not None and batch is not None:
        batch = watch.watch_many(batch)
    meter = Meter(progress, "prove", target.name,
                  None if deadline is None else deadline - time.perf_counter())
    report = prove(watch or target.assign, target.assignor, scope,
                   target=target.name, workers=workers, failures=failures,
                   sticky=target.balanced, session=session, assign_many=batch,
                   reference=reference.assign if reference else None,
                   reference_name=reference.name if reference else None,
                   deadline=deadline,
                   progress=lambda configs, _, found: meter.tick(configs, found, scope.text()))
    finding = watch.first(failures, file_safe(target.name)) if watch else None
    if finding is not None:
        result.add(finding)
    result.seconds = report.seconds
    result.runs = report.configurations
    result.note = (f"scope {scope.text()}: "
                   + ("proof" if report.proved else "sampled, not proved" if report.complete
                      else f"{report.stopped_note}, not proved"))
    _judged(result, target, report, scope_text, deadline)
    if report.gaps:
        result.figures["gap"] = dict(report.gaps)
    for inv in INVARIANT_ROWS:
        cex = report.counterexamples.get(inv)
        if cex is None or inv not in result.checked:
            continue  # an assignor that promises no stickiness is not held to I4a
        request, response = cex.rounds[cex.round_no]
        finding = Finding(inv, cex.violations[0], cex.file, len(cex.config.members),
                          _request_detail(request, response))
        if inv in report.own_violations or strict:
            result.add(finding)
        else:
            finding.label = _label_of(report, inv)
            finding.violation = (f"{report.violations[inv]:,} configuration(s), Kafka's "
                                 f"own ({finding.label}): {finding.violation}")
            result.inherited[inv] = finding
    for cex in report.distinct:
        if cex.invariant in result.checked and (cex.rule is None or strict):
            request, response = cex.rounds[cex.round_no]
            result.add(Finding(cex.invariant, cex.violations[0], cex.file,
                               len(cex.config.members), _request_detail(request, response)))
    return result


def _label_of(report: Any, inv: str) -> str:
    """``"rule K1"``, ``"evidence java:"`` or both, with counts when they are mixed."""
    evidence = report.evidence.get(inv, 0)
    rules = [r for r in report.rules.get(inv, []) if r != EVIDENCE]
    parts = [f"rule {','.join(rules)}"] if rules else []
    if evidence:
        parts.append(f"evidence {report.reference}")
    if len(parts) > 1:
        parts = [f"{parts[0]} ({report.inherited[inv] - evidence:,})",
                 f"{parts[1]} ({evidence:,})"]
    return "; ".join(parts)


@functools.cache
def scope_size(scope: str) -> int:
    """How many configurations the prover runs in ``scope``."""
    return sum(1 for _ in enumerate_scope(Scope.parse(scope)))


def run_prove_within(target: Target, budget: float, failures: str, *,
                     scopes: tuple[str, ...] = PORTFOLIO, workers: int | None = None,
                     strict: bool = False, reference: Target | None = None,
                     progress: ProgressFn = silent, of: int | None = None) -> EngineResult:
    """The prover over ``scopes`` in order (its depth counted over ``of`` scopes, default
    all of them), until one shows a violation or ``budget`` is
    spent: a scope is not started when the configurations per second seen so far say it
    would not finish in time, and the one under way stops at the budget's end (it is then
    no proof, and its note says so)."""
    total = EngineResult("prove", prover_checked(target), reasons=prover_reasons(target))
    ran: list[str] = []
    rate = 0.0
    reached = False  # the depth scope ran to its end
    meter = Meter(progress, "prove", target.name, budget)
    deadline = meter.started + budget
    for scope in scopes:  # a scope's size is counted only to judge the ones after the first
        if ran and rate and total.seconds + scope_size(scope) / rate > budget:
            break
        part = run_prove(target, scope, failures, workers=workers, strict=strict,
                         reference=reference, deadline=deadline,
                         progress=_shifted(meter, total))
        if part.skipped:
            return part
        _merge(total, part)
        if part.runs >= scope_size(scope) and not part.findings:
            total.shapes.add(f"proved:{scope}")  # a new proof: what breadth counts as new
        ran.append(part.note.removeprefix("scope ").split(";")[0])  # and proof or sample
        reached = reached or (scope == DEPTH_SCOPE and part.runs >= scope_size(scope))
        rate = total.runs / total.seconds if total.seconds else 0.0
        if part.findings or time.perf_counter() >= deadline:
            break
    total.note = f"{len(ran)} of {of or len(scopes)} scopes: " + "; ".join(ran)
    if not total.runs:
        total.note = (f"its share of the budget ({budget:.1f} s) ended before one unit of "
                      f"work was done; {total.note}")
    total.depth = f"{len(ran)} of {of or len(scopes)} scopes"
    _mark_depth(total, scopes, reached, rate)
    return total


def _mark_depth(total: EngineResult, scopes: tuple[str, ...], reached: bool, rate: float
                ) -> None:
    """The prover's minimum depth: `DEPTH_SCOPE`, wherever it stands in ``scopes``, run to
    its end (or to a violation). Short of it, the invariants the prover judges are marked
    ``shallow`` and ``needs`` is the scope's configurations at the rate measured."""
    if reached or DEPTH_SCOPE not in scopes or total.findings:
        return
    total.shallow = tuple(i for i in total.checked if i not in ("ERROR", "TIMEOUT"))
    total.needs = scope_size(DEPTH_SCOPE) / rate if rate else math.inf


def scopes_run(result: EngineResult) -> int:
    """How many scopes of its portfolio a `run_prove_within` result ran (its ``depth``)."""
    head = result.depth.split(" of ", 1)[0]
    return int(head) if head.isdigit() else 0


def extend_portfolio(first: EngineResult, more: EngineResult, portfolio: int) -> None:
    """``more`` (the portfolio's scopes after those of ``first``) added to ``first``: its
    runs, findings and figures, its scopes in the note, the depth counted over
    ``portfolio`` scopes."""
    done = scopes_run(first) + scopes_run(more)
    _merge(first, more)
    ran = more.note.split(": ", 1)[1] if ": " in more.note else ""
    rest = first.note.partition(": ")[2]
    first.note = f"{done} of {portfolio} scopes: " + "; ".join(p for p in (rest, ran) if p)
    first.depth = f"{done} of {portfolio} scopes"


def _shifted(meter: Meter, total: EngineResult) -> ProgressFn:
    """One scope's ticks as the portfolio's: after the runs of the scopes before it."""
    before = total.runs

    def tick(t: Tick) -> None:
        meter.tick(before + t.runs, len(total.findings) + t.findings, t.note)
    return tick


def _merge(total: EngineResult, part: EngineResult) -> None:
    total.seconds += part.seconds
    total.runs += part.runs
    total.judged.update(part.judged)
    total.shapes |= part.shapes
    for finding in part.every_finding():
        total.add(finding)
    for inv, finding in part.inherited.items():
        total.inherited.setdefault(inv, finding)
    gaps = total.figures.setdefault("gap", {})
    for gap, n in part.figures.get("gap", {}).items():
        gaps[gap] = gaps.get(gap, 0) + n


def run_scenarios(target: Target, scenarios: Iterable[Any], failures: str,
                  expect: Callable[..., list[str]] | None = None) -> EngineResult:
    """Fixed inputs judged by the prover's rules (`properties.scope.judgement.judge`)."""
    result = EngineResult("scenario", prover_checked(target), reasons=prover_reasons(target))
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    started = time.perf_counter()
    for scenario in scenarios:
        config = scenario.config()
        j = judge(target.assign, target.assignor, config, None, target.balanced)
        result.runs += 1
        request0 = build_request(target.assignor, config)
        for inv in ("I1", "I2", "ERROR", "I5", "I11"):
            result.judged[inv] += 1
        result.judged["TIMEOUT"] += target.timeout is not None
        result.judged["I3"] += target.balanced
        subs = {m: list(v["topics"]) for m, v in request0["members"].items()}
        result.judged["I4a"] += i4a_applies(request0, subs, request0["partitions"])
        result.judged["I6"] += 1 if target.protocol == "COOPERATIVE" else 0
        found = [v for v in j.violations if invariant_id(v) in result.checked]
        if not found and expect is not None and j.rounds and "assignment" in j.rounds[-1][1]:
            settled = {m: [(t, p) for t, p in ps]
                       for m, ps in j.rounds[-1][1]["assignment"].items()}
            found = expect(settled, subs)
        if found:
            last, response = j.rounds[-1] if j.rounds else (None, None)
            body = {**(last or {}), "groupcheck": {"format": "groupcheck-scenario/1",
                                              "target": target.name, "scenario": scenario.label,
                                              "violations": found, "response": response}}
            path = save_json(failures, f"scenario-{target.name}-{invariant_id(found[0])}",
                             body, {"target": target.name, "invariant": invariant_id(found[0]),
                                    "scenario": scenario.label, "request": last})
            result.add(Finding(invariant_id(found[0]), found[0], path, len(config.members),
                               f"scenario: {scenario.label}\n"
                               + _request_detail(last, response)))
            break
    if target.protocol != "COOPERATIVE":
        for inv in ("I5", "I6", "I11"):
            result.judged[inv] = 0
    result.seconds = time.perf_counter() - started
    return result
