"""Differential stories: groupcheck and Kafka's client fed the same chains of rebalances.

Theory of operation. The audit's seeded story generator (`audit.scenarios.random_spec`)
makes groups of every shape (racks, static members, stale and conflicting claims, unequal
and empty subscriptions, topics without metadata, joins, leaves, stalls and returns), and
its chain driver (`audit.chain.run_chain`) plays each story as ``assign`` requests in client
mode, with cooperative follow-ups. Here the driver's target is a `PairedAssign`: every
request goes to both sides, the reference (Kafka's client, ``java:``) and ours, and the two
answers are compared list for list (`properties.deviations.same_answer`). The driver then
carries on from *our* answer, so every later request is again one identical request for
both sides: where the answers differ for a documented reason, Kafka's answer breaks I1 or
I2, is an exception or never came, and only ours is a state a group can go on from.

A difference is explained only by a deviation D1–D4 (`properties.deviations.explain`);
the loop guard of D4 is read from our own assignor on the same request. Every unexplained
difference is kept with its request (`Difference.record` is a request file that ``groupcheck
replay`` and ``groupcheck diff --request`` run again), and the smallest example of each
explanation too. A run splits the scenario ids into chunks; `run_stories` runs them in
this process or in worker processes (each with its own JVM), and merges the chunks in id
order, so its figures do not depend on the number of workers.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypedDict

from ...audit.call_timeout import AssignTimeout, call_with_timeout
from ...audit.chain import run_chain
from ...audit.scenarios import random_spec
from ...audit.story_parts import all_members
from ...audit.targets import AuditTarget
from ...model.story_shapes import StorySpec
from ...properties.deviations import Explanation, explain, same_answer
from ...properties.jsonl_shapes import Answered, AssignAnswer, AssignRequest, pair_of
from ...targets.registry import NO_SETTINGS, resolve
from ...targets.settings import Settings
from ..worker_pools import worker_pool
from .search import AnswerFn, answer_fn

__all__ = ["CHUNK", "KEPT", "Answer", "Difference", "OursFailed", "PairedAssign", "StoriesResult",
           "chunks", "run_chunk", "run_stories", "story_shapes", "target_answer"]

Answer = Answered
#: unexplained differences a run keeps in full (it counts them all)
KEPT = 20
#: scenario ids per chunk of work
CHUNK = 200


class DiffNote(TypedDict):
    """What a differential run notes beside a request it saves: both targets, both answers,
    the deviation that explains them (or not) and where the request came from."""

    format: str
    targets: list[str]
    invariant: str
    answers: list[Answered]
    explanation: str
    why: str
    source: str


class DiffRecord(AssignRequest, total=False):
    """A request file of a differential run: the request, and ``groupcheck``'s notes."""

    groupcheck: DiffNote


@dataclass
class Difference:
    """Two different answers to one request, and what explains the difference."""

    scenario: int
    call: int  # index of the request within the story's calls
    request: AssignRequest
    ours: Answer
    kafka: Answer
    explanation: Explanation

    def size(self) -> tuple[int, int, int]:
        members = self.request.get("members") or {}
        return (len(members), sum((self.request.get("partitions") or {}).values()),
                self.scenario)

    def record(self, ours: str, reference: str, seed: int) -> DiffRecord:
        """The request file: the request at the top level, groupcheck's notes beside it."""
        return {**self.request, "groupcheck": {
            "format": "groupcheck-diff/1", "targets": [ours, reference],
            "invariant": "DIFF", "answers": [self.ours, self.kafka],
            "explanation": self.explanation.label, "why": self.explanation.why,
            "source": f"audit story seed {seed}, scenario {self.scenario}, call "
                      f"{self.call} (each request built from {ours}'s answer)"}}


@dataclass
class StoriesResult:
    """What a differential run over stories found."""

    assignor: str
    seed: int
    start: int = 0  # the first scenario id
    groups: int = 0
    requests: int = 0
    seconds: float = 0.0
    #: explanation label ("D2 (I2)", "unexplained") → differences
    explained: Counter[str] = field(default_factory=Counter)
    unexplained: list[Difference] = field(default_factory=list)
    unexplained_count: int = 0
    #: the smallest example of each explanation
    examples: dict[str, Difference] = field(default_factory=dict)
    #: shapes of the stories played (`story_shapes`) → stories
    shapes: Counter[str] = field(default_factory=Counter)
    #: invariants on which our own side stopped a story (the audit's business, counted)
    stopped: Counter[str] = field(default_factory=Counter)

    @property
    def differences(self) -> int:
        return sum(self.explained.values()) + self.unexplained_count

    def add(self, diff: Difference) -> None:
        if diff.explanation.explained:
            label = diff.explanation.label
            self.explained[label] += 1
            best = self.examples.get(label)
            if best is None or diff.size() < best.size():
                self.examples[label] = diff
        else:
            self.unexplained_count += 1
            if len(self.unexplained) < KEPT:
                self.unexplained.append(diff)

    def merge(self, other: StoriesResult) -> None:
        """Fold in the result of a later chunk of scenario ids."""
        self.groups += other.groups
        self.requests += other.requests
        self.explained.update(other.explained)
        self.shapes.update(other.shapes)
        self.stopped.update(other.stopped)
        self.unexplained_count += other.unexplained_count
        self.unexplained += other.unexplained[:max(0, KEPT - len(self.unexplained))]
        for label, diff in other.examples.items():
            best = self.examples.get(label)
            if best is None or diff.size() < best.size():
                self.examples[label] = diff


def target_answer(name: str, assignor: str, timeout: float,
                  settings: Settings = NO_SETTINGS) -> AnswerFn:
    """The answer function of a target string (`differential.answer_fn`)."""
    return answer_fn(resolve(name, assignor=assignor, timeout=timeout, settings=settings))


class OursFailed(RuntimeError):
    """Our side answered with an exception: the chain driver records it as ERROR."""


class PairedAssign:
    """The chain driver's assign function: both sides on the request, differences to
    ``result``, our answer back to the driver (see the module docstring)."""

    def __init__(self, ours: AnswerFn, kafka: AnswerFn, result: StoriesResult,
                 timeout: float) -> None:
        self.ours, self.kafka, self.result, self.timeout = ours, kafka, result, timeout
        self.scenario = 0
        self.calls = 0

    def start(self, scenario: int) -> None:
        self.scenario, self.calls = scenario, 0

    def __call__(self, request: AssignRequest) -> AssignAnswer:
        call, self.calls = self.calls, self.calls + 1
        self.result.requests += 1
        kafka, _ = self.kafka(request)
        ours: Answer
        guard: bool
        try:
            ours, guard = call_with_timeout(self.ours, request, self.timeout)
        except AssignTimeout as exc:
            ours, guard = {"error": f"TIMEOUT: {exc}", "timeout": True}, False
        if not same_answer(ours, kafka):
            self.result.add(Difference(self.scenario, call, request, ours, kafka,
                                       explain(request, ours, kafka, guard)))
        if "error" in ours:
            raise OursFailed(ours["error"])
        return ours


def story_shapes(spec: StorySpec, calls: int) -> set[str]:
    """The shapes of one story that a differential run must reach (its coverage)."""
    members = spec["members"]
    ops = [op for step in spec.get("steps", []) for op in step]
    everyone = list(all_members(spec))
    out = {f"tier {spec.get('tier', 0)}"}
    topic_sets = {frozenset(m["topics"]) for m in everyone}
    claims: dict[tuple[str, int], list[int]] = {}
    for m in members:
        generation = m.get("generation")
        if generation is not None:
            for claim in m.get("owned") or []:
                claims.setdefault(pair_of(claim), []).append(generation)
    checks = {
        "racks": "racks" in spec,
        "static members": any("groupInstanceId" in m for m in everyone),
        "unequal subscriptions": len(topic_sets) > 1,
        "empty subscription": frozenset() in topic_sets,
        "topic without metadata": any(t not in spec["partitions"] for s in topic_sets
                                      for t in s),
        "previous assignment": bool(claims),
        "stale claims": any(len(set(g)) > 1 for g in claims.values()),
        "conflicting claims": any(len(set(g)) < len(g) for g in claims.values()),
        "chain of rebalances": bool(spec.get("steps")),
        "follow-up rebalances": calls > 1 + len(spec.get("steps", [])),
        "members stall and return": any(op["op"] == "return" for op in ops),
        "topics grow or vanish": any(op["op"] in ("grow", "delete") for op in ops),
    }
    return out | {name for name, hit in checks.items() if hit}


def run_chunk(ours: str, reference: str, assignor: str, seed: int, ids: range,
              timeout: float, settings: Settings = NO_SETTINGS) -> StoriesResult:
    """Play the stories ``ids`` of ``seed`` on both sides (one process, one JVM)."""
    started = time.perf_counter()
    result = StoriesResult(assignor, seed)
    paired = PairedAssign(_answer_fn(ours, assignor, timeout, settings),
                          _answer_fn(reference, assignor, timeout, settings), result, timeout)
    target = AuditTarget(f"{ours} vs {reference}", assignor, paired)
    for index in ids:
        spec = random_spec(seed, index)
        paired.start(index)
        chain = run_chain(target, spec, timeout=0)  # each side has its own time limit
        result.groups += 1
        result.shapes.update(story_shapes(spec, chain.calls))
        result.stopped.update(inv for inv in chain.verdicts
                              if chain.verdicts[inv] == 1 and inv not in chain.inherited)
    result.seconds = time.perf_counter() - started
    return result


_ANSWER_FNS: dict[tuple[str, str, float, Settings], AnswerFn] = {}


def _answer_fn(name: str, assignor: str, timeout: float, settings: Settings) -> AnswerFn:
    """One answer function per (target, assignor, time limit, settings) and process: a
    worker keeps its JVM across chunks."""
    key = (name, assignor, timeout, settings)
    if key not in _ANSWER_FNS:
        _ANSWER_FNS[key] = target_answer(name, assignor, timeout, settings)
    return _ANSWER_FNS[key]


def chunks(start: int, count: int, size: int = CHUNK) -> Iterator[range]:
    """Scenario ids ``start`` … ``start + count - 1`` in ranges of ``size``."""
    for low in range(start, start + count, size):
        yield range(low, min(start + count, low + size))


def run_stories(ours: str, reference: str, assignor: str, *, groups: int, seed: int = 0,
                start: int = 0, workers: int = 1, timeout: float = 5.0,
                progress: Callable[[StoriesResult], None] | None = None,
                settings: Settings = NO_SETTINGS) -> StoriesResult:
    """``groups`` stories from scenario id ``start`` of ``seed``, in this process
    (``workers`` 1) or in ``workers`` spawned processes; merged in id order."""
    started = time.perf_counter()
    total = StoriesResult(assignor, seed, start)
    parts = list(chunks(start, groups))
    if workers <= 1:
        done: Iterator[StoriesResult] = (
            run_chunk(ours, reference, assignor, seed, ids, timeout, settings)
            for ids in parts)
        for part in done:
            total.merge(part)
            if progress is not None:
                progress(total)
    else:
        with worker_pool(workers, "spawn") as pool:  # no JVM pipes shared with a fork
            futures = [pool.submit(run_chunk, ours, reference, assignor, seed, ids, timeout,
                                   settings) for ids in parts]
            for future in futures:
                total.merge(future.result())
                if progress is not None:
                    progress(total)
    total.seconds = time.perf_counter() - started
    return total
