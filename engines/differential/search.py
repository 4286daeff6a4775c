"""Differential runs: two targets on the same ``assign`` requests, the first disagreement
shrunk to the fewest members and partitions.

Requests come from the scope prover's enumeration, smallest configuration first (so the
first disagreement there is already small), then from the golden vectors; `differential_
stories` feeds both targets the audit's chains of rebalances instead, and a saved request
file runs again as it is. Two answers disagree when some member gets a different set of
partitions, or one target raises and the other answers. Where one target is Kafka's own
client (``java:``) the bar is higher: the answers must be equal list for list (member and
partition order, user data, generation, protocol, or the same exception), except where a
deviation D1–D4 explains the difference (`properties.deviations`); an explained difference
is counted and the search goes on. A disagreement from the vectors is shrunk greedily: drop
a member, drop a topic from the metadata, lower a partition count, drop an owned partition,
drop a topic from a subscription — keeping each step after which the targets still
disagree. A request on which a target does not answer within its time limit ends the run
as ``TIMEOUT``, unshrunk (each try could cost the whole time limit).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ...impl.assign_op import assign_with
from ...impl.assignors import make_assignor
from ...impl.jsonl import error_text
from ...properties.deviations import Explanation, explain, same_answer
from ...properties.harness import HarnessError
from ...properties.jsonl_shapes import Answered, AssignFn, AssignRequest
from ...properties.scope.enumeration import enumerate_scope
from ...properties.scope.judgement import build_request
from ...properties.scope.space import Scope
from ...targets.processes.jsonl_process import TargetFailure
from ...targets.target import Target
from ..battery.golden import answer, iter_assign_vectors, partition_sets
from ..progress import PROCESS_FLOOR, Meter, ProgressFn, silent
from ..resolving import must_start
from ..saved.requests import answer_table, judge_answer, request_size, smaller_requests

__all__ = ["AnswerFn", "AssignFn", "DiffResult", "Pair", "ANSWER_INDENT", "answer_fn",
           "builtin_answer", "canonical_error", "describe", "disagree", "explained_text",
           "judge_pair", "kafka_side", "run_diff", "run_requests", "shrink"]

#: a target's answer to a request (an exception as an error answer) and whether groupcheck's
#: loop guard (D4) fired on it
AnswerFn = Callable[[AssignRequest], tuple[Answered, bool]]
_OUR_ERROR = re.compile(r"^\w+ \((\w+)\): ", re.ASCII)


def canonical_error(text: str) -> str:
    """``"<KafkaClass>: <message>"``: our errors name Kafka's class in brackets
    (``NullPointerError (NullPointerException): …``), Kafka's driver answers with it."""
    return _OUR_ERROR.sub(lambda m: f"{m.group(1)}: ", text, count=1)


def builtin_answer(request: AssignRequest) -> tuple[Answered, bool]:
    """groupcheck's answer to ``request``, and whether its general builder's loop guard
    (D4) fired on it."""
    made: list[Any] = []

    def make() -> Any:
        made.append(make_assignor(str(request.get("assignor"))))
        return made[-1]

    try:
        got: Answered = assign_with(make, request)
    except HarnessError:  # groupcheck's own failure: never a finding
        raise
    except Exception as exc:  # noqa: BLE001 - an exception is an answer to compare
        got = {"error": canonical_error(error_text(exc))}
    stats = [getattr(a, "reassignment_stats", None) for a in made]
    return got, any(s is not None and s.swap_rule_dropped for s in stats)


def answer_fn(target: Target) -> AnswerFn:
    """How to ask ``target`` for an answer that `same_answer` can compare: the builtins in
    process (with the loop guard), others through their JSON-lines ``call`` where they have
    one; ``timeout`` marks an answer that never came, ``failure`` a process that broke."""
    if target.name.startswith("builtin:"):
        return builtin_answer

    call, assign = target.call, target.assign

    def ask(request: AssignRequest) -> tuple[Answered, bool]:
        body: AssignRequest = {**request, "op": "assign"}
        try:
            # a process speaks the contract: its answer is what same_answer compares
            got = cast(Answered, call(body)) if call is not None else \
                assign(body) if assign else cast(Answered, {})
        except TimeoutError as exc:
            return {"error": f"TIMEOUT: {exc}", "timeout": True}, False
        except TargetFailure as exc:
            return {"error": f"FAILURE: {exc}", "failure": True}, False
        except HarnessError:  # groupcheck's own failure: never a finding
            raise
        except Exception as exc:  # noqa: BLE001 - an exception is an answer to compare
            return {"error": canonical_error(error_text(exc))}, False
        if "error" in got:
            return {"error": canonical_error(str(got["error"]))}, False
        return got, False
    return ask


def kafka_side(a: Target, b: Target) -> int | None:
    """0 or 1: which target is Kafka's own client (``java:``), when exactly one is."""
    sides = [i for i, t in enumerate((a, b)) if t.name.startswith("java:")]
    return sides[0] if len(sides) == 1 else None


def judge_pair(request: AssignRequest, ra: Answered, rb: Answered,
               kafka: int, guard: bool) -> Explanation | None:
    """None when the answers are equal list for list; else what explains the difference
    (``kafka``: the side that is Kafka's client; ``guard``: our loop guard fired)."""
    if same_answer(ra, rb):
        return None
    ours, theirs = (rb, ra) if kafka == 0 else (ra, rb)
    return explain(request, ours, theirs, guard)


def disagree(a: Answered, b: Answered) -> bool:
    if ("error" in a) != ("error" in b):
        return True
    if "error" in a:
        return False
    return partition_sets(a) != partition_sets(b)


class Pair:
    """Two targets asked the same requests; ``check`` says whether their answers disagree in
    a way that counts (see the module docstring) and tallies explained differences."""

    def __init__(self, a: Target, b: Target) -> None:
        assert a.assign is not None and b.assign is not None
        self.kafka = kafka_side(a, b)
        if self.kafka is None:
            fa, fb = a.assign, b.assign
            self.ask_a: AnswerFn = lambda r: (answer(fa, r), False)
            self.ask_b: AnswerFn = lambda r: (answer(fb, r), False)
        else:
            self.ask_a, self.ask_b = answer_fn(a), answer_fn(b)
        self.explained: Counter[str] = Counter()

    def check(self, request: AssignRequest, count: bool = True
              ) -> tuple[Answered, Answered, Explanation | None, bool]:
        """(a's answer, b's answer, the explanation where one side is Kafka's, whether
        they disagree unexplained); ``count``: tally an explained difference."""
        (ra, ga), (rb, gb) = self.ask_a(request), self.ask_b(request)
        if self.kafka is None:
            return ra, rb, None, disagree(ra, rb)
        why = judge_pair(request, ra, rb, self.kafka, ga or gb)
        if why is not None and why.explained and count:
            self.explained[why.label] += 1
        return ra, rb, why, why is not None and not why.explained


def shrink(request: AssignRequest, pair: Pair, max_tries: int = 5000,
           deadline: float = float("inf")
           ) -> tuple[AssignRequest, Answered, Answered, Explanation | None]:
    """The smallest request found (by ``deadline``, on ``time.perf_counter``) on which the
    pair still disagrees (unexplained)."""
    current = request
    got_a, got_b, why, _ = pair.check(current, count=False)
    tries = 0
    improved = True
    while improved and tries < max_tries:
        improved = False
        for candidate in smaller_requests(current):
            if time.perf_counter() >= deadline:
                return current, got_a, got_b, why
            tries += 1
            ca, cb, cwhy, differ = pair.check(candidate, count=False)
            if differ and not (ca.get("timeout") or cb.get("timeout")):
                current, got_a, got_b, why, improved = candidate, ca, cb, cwhy, True
                break
            if tries >= max_tries:
                break
    return current, got_a, got_b, why


@dataclass
class DiffResult:
    compared: int
    seconds: float
    source: str = ""
    request: AssignRequest | None = None
    a: Answered | None = None
    b: Answered | None = None
    original_size: tuple[int, ...] = ()
    timeout: str = ""  # "a" or "b": that target did not answer in time
    #: differences a deviation explains (one target is Kafka's client), by label
    explained: Counter[str] = field(default_factory=Counter)
    why: str = ""  # what no deviation explains about the difference found
    skipped: str = ""  # why nothing was compared (a budget too small), if so

    @property
    def agree(self) -> bool:
        return self.request is None


def _scope_requests(assignor: str, scope_text: str, deadline: float
                    ) -> Iterator[AssignRequest]:
    """The scope's requests, smallest first: of the configurations enumerated by
    ``deadline`` (all of them when time allows)."""
    configs = []
    for config in enumerate_scope(Scope.parse(scope_text)):
        configs.append(config)
        if time.perf_counter() >= deadline:
            break
    for config in sorted(configs, key=lambda c: c.size_key()):
        yield build_request(assignor, config)


def run_diff(a: Target, b: Target, *, assignor: str, scope: str, vectors: bool = True,
             budget: float = 120.0, vectors_folder: Path | None = None,
             progress: ProgressFn = silent) -> DiffResult:
    """Ask both targets every request of ``scope``, then (``vectors``) the golden vectors'
    requests of ``assignor`` in ``vectors_folder``, until the first disagreement that
    counts, within ``budget`` seconds (the shrink of the disagreement too); ``progress``
    hears of every request compared."""
    if budget < PROCESS_FLOOR and must_start(a, b):
        return DiffResult(0, 0.0, skipped=(
            f"{budget:.1f} s of the budget was left, less than the {PROCESS_FLOOR:g} s a "
            "process target may need to start"))
    pair = Pair(a, b)
    started = time.perf_counter()

    def sources() -> Iterator[tuple[str, AssignRequest]]:  # enumerating: half the budget
        for r in _scope_requests(assignor, scope, started + budget / 2):
            yield f"scope {scope}", r
        if vectors:  # read a line at a time: the file is large, the budget may end first
            for line in iter_assign_vectors(vectors_folder):
                if line["request"].get("assignor") == assignor:
                    yield f"vector {line.get('case')}", line["request"]

    meter = Meter(progress, "diff", f"{a.name} vs {b.name} [{assignor}]", budget)
    return run_requests(pair, sources(), started, budget, meter=meter)


def run_requests(pair: Pair, requests: Iterator[tuple[str, AssignRequest]],
                 started: float, budget: float = float("inf"), shrunk: bool = True,
                 meter: Meter | None = None) -> DiffResult:
    """Ask the pair each (source, request) until the first unexplained disagreement (shrunk
    unless ``shrunk`` is false, within the budget) or a time-out, within ``budget`` seconds
    from ``started``; ``meter`` ticks after each request."""
    compared = 0
    for source, request in requests:
        if time.perf_counter() - started >= budget:
            break
        if meter is not None:
            meter.tick(compared, note=source)
        compared += 1
        ra, rb, why, differ = pair.check(request)
        if differ and (ra.get("timeout") or rb.get("timeout")):
            return DiffResult(compared, time.perf_counter() - started, source, request, ra, rb,
                              request_size(request), "a" if ra.get("timeout") else "b",
                              pair.explained, why.why if why else "")
        if differ:
            small, sa, sb, swhy = (shrink(request, pair, deadline=started + budget) if shrunk
                                   else (request, ra, rb, why))
            return DiffResult(compared, time.perf_counter() - started, source, small, sa, sb,
                              request_size(request), explained=pair.explained,
                              why=swhy.why if swhy else "")
    return DiffResult(compared, time.perf_counter() - started, explained=pair.explained)


#: a differing answer's rows sit under its "answered" line
ANSWER_INDENT = "    "


def explained_text(explained: Counter[str]) -> str:
    """``"; 3 differences explained: D2 (I2) 2, D3 (ERROR) 1"`` (empty when none)."""
    if not explained:
        return ""
    total = sum(explained.values())
    return (f"; {total:,} difference(s) explained by a deviation: "
            + ", ".join(f"{label} {n:,}" for label, n in sorted(explained.items())))


def describe(result: DiffResult, name_a: str, name_b: str) -> str:
    if result.skipped:
        return f"{name_a} and {name_b}: nothing compared: {result.skipped}"
    if result.agree:
        return (f"{name_a} and {name_b} agree on {result.compared:,} requests "
                f"({result.seconds:.1f}s){explained_text(result.explained)}")
    assert result.request is not None and result.a is not None and result.b is not None
    size = request_size(result.request)
    if result.timeout:
        hung = name_a if result.timeout == "a" else name_b
        return "\n".join([
            f"TIMEOUT after {result.compared:,} requests ({result.seconds:.1f}s), found in "
            f"{result.source}: {hung} did not answer within its time limit "
            f"({size[0]} members / {size[1]} partitions; not shrunk)",
            f"request: {json.dumps(result.request, ensure_ascii=False)}",
            f"  {name_a} answered", answer_table(result.a, ANSWER_INDENT),
            f"  {name_b} answered", answer_table(result.b, ANSWER_INDENT),
        ])
    return "\n".join([
        f"DISAGREE after {result.compared:,} requests ({result.seconds:.1f}s), found in "
        f"{result.source}{explained_text(result.explained)}",
        *([f"no deviation explains it: {result.why}"] if result.why else []),
        f"shrunk from {result.original_size[0]} members / {result.original_size[1]} partitions "
        f"to {size[0]} members / {size[1]} partitions:",
        f"request: {json.dumps(result.request, ensure_ascii=False)}",
        f"  {name_a} answered", answer_table(result.a, ANSWER_INDENT),
        *_broken(result.request, result.a),
        f"  {name_b} answered", answer_table(result.b, ANSWER_INDENT),
        *_broken(result.request, result.b),
    ])


def _broken(request: AssignRequest, response: Answered) -> list[str]:
    """Which invariants one side's answer breaks (`saved.requests.judge_answer`), or that
    it breaks none."""
    if "error" in response:
        return ["    breaks: ERROR (it raised)"]
    try:
        found = judge_answer(request, response)
    except ValueError as exc:
        return [f"    cannot be judged: {exc}"]
    return [f"    breaks {v}" for v in dict.fromkeys(found)] or ["    breaks no invariant"]
