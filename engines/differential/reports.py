"""The parts of ``groupcheck diff`` that are not the search itself: which assignors the
stories run, what a run over stories reports and saves, which pairs of targets are compared,
and saved requests run again on both targets.

The second target is the reference: each chain goes on from the first target's answer
(`stories`). Where one target is Kafka's own client (``java:``), the answers
must be equal list for list unless a deviation D1–D4 explains the difference.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from typing import Any

from ...audit.chain import run_chain
from ...audit.targets import AuditTarget
from ...model.saved_files import SavedFile
from ...model.story_shapes import StorySpec
from ...properties.jsonl_shapes import AssignRequest
from ...targets.offers import Offer
from ...targets.target import Target
from ..battery.results import save_json
from ..errors import EngineInputError
from ..saved.requests import answer_table
from .search import (
    ANSWER_INDENT,
    DiffResult,
    Pair,
    answer_fn,
    describe,
    explained_text,
    run_requests,
)
from .stories import PairedAssign, StoriesResult

__all__ = ["ASSIGNORS", "diff_pairs", "requests_lines", "save_differences",
           "save_search_difference", "story_assignors", "story_report"]

ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
#: seconds each side may take per request of a story (the audit's limit)
STORY_CALL_TIMEOUT = 5.0


def story_assignors(targets: list[str], assignor: list[str] | str | None) -> list[str]:
    """The assignors the stories run: ``--assignor``, else the one a ``builtin:`` target
    names, else all four."""
    wanted = assignor if isinstance(assignor, list) else ([assignor] if assignor else [])
    names = [a for text in wanted for a in text.split(",") if a]
    if not names:
        names = [t.partition(":")[2] for t in targets
                 if t.startswith("builtin:") and t.partition(":")[2] in ASSIGNORS][:1]
    unknown = [a for a in names if a not in ASSIGNORS]
    if unknown:
        raise EngineInputError(f"diff: unknown assignor {unknown[0]!r}; expected one of "
                           f"{', '.join(ASSIGNORS)}")
    return names or list(ASSIGNORS)


def story_report(result: Any, ours: str, reference: str, workers: int) -> list[str]:
    """The lines that tell what one run over stories found."""
    last = result.start + result.groups - 1
    lines = [f"{ours} vs {reference}, {result.assignor}: {result.groups:,} stories (seed "
             f"{result.seed}, ids {result.start}-{last}), {result.requests:,} requests in "
             f"{result.seconds:.1f}s ({workers} worker(s)); each request built from {ours}'s "
             "answer",
             f"  differences {result.differences:,}: explained "
             f"{sum(result.explained.values()):,}, unexplained {result.unexplained_count:,}"]
    for label, n in sorted(result.explained.items()):
        d = result.examples[label]
        lines.append(f"  explained {label}: {n:,}; smallest: scenario {d.scenario} call "
                     f"{d.call} ({d.size()[0]} members, {d.size()[1]} partitions)")
    shapes = ", ".join(f"{name} {n:,}" for name, n in sorted(result.shapes.items()))
    lines.append(f"  shapes: {shapes}")
    if result.stopped:
        lines.append("  stories our side stopped (its own violation, the audit's business): "
                     + ", ".join(f"{k} {n:,}" for k, n in sorted(result.stopped.items())))
    for d in result.unexplained:
        lines.append(f"UNEXPLAINED scenario {d.scenario} call {d.call} "
                     f"({d.size()[0]} members, {d.size()[1]} partitions): {d.explanation.why}")
    return lines


def save_differences(result: Any, ours: str, reference: str, failures: str) -> list[str]:
    """Each unexplained difference, and the smallest example of each explanation, as a
    request file; returns the paths."""
    paths = []
    for d in [*result.unexplained, *result.examples.values()]:
        kind = "unexplained" if not d.explanation.explained else \
            "+".join(d.explanation.deviations)
        stem = f"diff-{result.assignor}-{kind}-s{d.scenario}-c{d.call}"
        record = d.record(ours, reference, result.seed)
        paths.append(save_json(failures, stem, record, {
            "targets": [ours, reference], "assignor": result.assignor, "kind": kind,
            "scenario": d.scenario, "call": d.call,
            "request": {k: v for k, v in record.items() if k != "groupcheck"}}))
    return paths


def save_search_difference(failures: str, a: Target, b: Target, assignor: str,
                           result: DiffResult) -> str:
    """The request on which ``a`` and ``b`` disagree, as a request file (with both answers
    in groupcheck's notes); returns its path."""
    return save_json(failures, f"diff-{a.name}-vs-{b.name}-{assignor}", {
        **(result.request or {}), "groupcheck": {
            "format": "groupcheck-diff/1", "targets": [a.name, b.name],
            "invariant": "TIMEOUT" if result.timeout else "DIFF",
            "answers": [result.a, result.b], "source": result.source}},
        {"targets": [a.name, b.name], "assignor": assignor, "request": result.request})


def diff_pairs(a: list[Offer], b: list[Offer], wanted: list[str]
               ) -> list[tuple[Target, Target, str]]:
    """The (A, B, assignor) pairs to compare: the one assignor of each side, or every
    assignor both sides answer, by name."""
    sa = [o.target for o in a if o.target is not None]
    sb = [o.target for o in b if o.target is not None]
    if len(sa) == 1 and len(sb) == 1:
        name = (wanted[0] if wanted else None) or sa[0].assignor or sb[0].assignor
        assert name is not None
        return [(sa[0], sb[0], name)]
    pairs = [(x, y, x.assignor) for x in sa for y in sb
             if x.assignor is not None and x.assignor == y.assignor
             and (not wanted or x.assignor in wanted)]
    if not pairs:
        raise EngineInputError(f"diff: the targets answer no assignor in common "
                               f"({', '.join(str(t.assignor) for t in sa)} / "
                               f"{', '.join(str(t.assignor) for t in sb)})")
    return pairs


def requests_lines(saved: list[SavedFile], pairs: dict[str, tuple[Target, Target]]
                   ) -> tuple[list[str], bool]:
    """Run each saved file on the pair of targets that answer its assignor: every request of
    a request file, chain or audit counterexample; a bare story as a differential chain (each
    request built from the first target's answer). The lines that tell the answers, and
    whether all agree."""
    lines: list[str] = []
    agree = True
    for file in saved:
        if file.kind == "events":
            raise EngineInputError(f"diff: {file.path} holds a state-machine replay: its "
                                   "events need a group target; groupcheck replay plays it")
        if file.kind == "story" and not file.requests:
            assert file.spec is not None
            file_lines, same = _story_lines(file.path, file.spec, pairs)
            lines += file_lines
            agree = agree and same
            continue
        for n, request in enumerate(file.requests, 1):
            label = file.path if len(file.requests) == 1 else f"{file.path} request {n}"
            file_lines, same = _request_lines(label, request, pairs)
            lines += file_lines
            agree = agree and same
    return lines, agree


def _story_lines(label: str, spec: StorySpec, pairs: dict[str, tuple[Target, Target]]
                 ) -> tuple[list[str], bool]:
    """The story played on each pair as `stories` plays the audit's: both
    sides get every request, the chain goes on from the first side's answer."""
    lines: list[str] = []
    agree = True
    for assignor, (a, b) in pairs.items():
        result = StoriesResult(assignor, int(spec.get("seed") or 0))
        paired = PairedAssign(answer_fn(a), answer_fn(b), result, STORY_CALL_TIMEOUT)
        paired.start(int(spec.get("scenario", 0) or 0))
        run_chain(AuditTarget(f"{a.name} vs {b.name}", assignor, paired), spec, timeout=0)
        verdict = (f"{a.name} and {b.name} agree" if not result.differences else
                   f"{a.name} and {b.name} differ{explained_text(Counter(result.explained))}")
        lines.append(f"{label} [{assignor}], a story of {result.requests} request(s): {verdict}")
        for d in result.unexplained:
            lines.append(f"  UNEXPLAINED call {d.call} ({d.size()[0]} members, "
                         f"{d.size()[1]} partitions): {d.explanation.why}")
        agree = agree and not result.unexplained_count
    return lines, agree


def _request_lines(label: str, request: AssignRequest,
                   pairs: dict[str, tuple[Target, Target]]) -> tuple[list[str], bool]:
    named = request.get("assignor")
    if named not in pairs and len(pairs) != 1:
        raise EngineInputError(f"diff: {label} asks for assignor {named!r}, which the two "
                               f"targets do not both answer ({', '.join(sorted(pairs))})")
    a, b = pairs[named] if isinstance(named, str) and named in pairs \
        else next(iter(pairs.values()))
    pair = Pair(a, b)
    result = run_requests(pair, iter([(os.path.basename(label), request)]),
                          time.perf_counter(), shrunk=False)
    if result.agree and not result.explained:
        return [f"{label}: {a.name} and {b.name} agree"], True
    if result.agree:
        ra, rb, _, _ = pair.check(request, count=False)
        return [f"{label}: {a.name} and {b.name} differ{explained_text(result.explained)}",
                f"  {a.name} answered", answer_table(ra, ANSWER_INDENT), f"  {b.name} answered",
                answer_table(rb, ANSWER_INDENT)], True
    return [f"{label}:", describe(result, a.name, b.name)], False
