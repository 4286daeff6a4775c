"""``groupcheck diff``: the smallest input of the scope on which two targets disagree, the
differential run over the audit's chains of rebalances (``--stories N``), and saved
requests run again on both targets (``--request FILE``).

    groupcheck diff --target A --target B [--assignor A] [--scope S] [--no-vectors]
    groupcheck diff --target builtin:sticky --target java: --stories 1000 [--seed S]
                    [--start I] [--workers W] [--timeout S] [--failures DIR]
    groupcheck diff --target builtin:sticky --target java: --request FILE [--request ...]

The second target is the reference: each chain goes on from the first target's answer
(`differential_stories`). Where one target is Kafka's own client (``java:``), the answers
must be equal list for list unless a deviation D1–D4 explains the difference. Exit codes: 0
no difference that counts, 1 one or more (each saved as a request file), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from .check_command import check_scope, offers_of
from .membership_commands import CommandError
from .targets.offers import Offer, close_all, parse_assignors
from .targets.registry import Target

ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")


def _story_assignors(args: argparse.Namespace) -> list[str]:
    """The assignors the stories run: ``--assignor``, else the one a ``builtin:`` target
    names, else all four."""
    wanted = args.assignor if isinstance(args.assignor, list) else (
        [args.assignor] if args.assignor else [])
    names = [a for text in wanted for a in text.split(",") if a]
    if not names:
        names = [t.partition(":")[2] for t in args.target
                 if t.startswith("builtin:") and t.partition(":")[2] in ASSIGNORS][:1]
    unknown = [a for a in names if a not in ASSIGNORS]
    if unknown:
        raise CommandError(f"diff: unknown assignor {unknown[0]!r}; expected one of "
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
    from .battery import save_json

    paths = []
    for d in [*result.unexplained, *result.examples.values()]:
        kind = "unexplained" if not d.explanation.explained else \
            "+".join(d.explanation.deviations)
        stem = f"diff-{result.assignor}-{kind}-s{d.scenario}-c{d.call}"
        paths.append(save_json(failures, stem, d.record(ours, reference, result.seed)))
    return paths


def cmd_diff_stories(args: argparse.Namespace) -> int:
    from .differential_stories import run_stories

    ours, reference = args.target
    bad = 0
    for assignor in _story_assignors(args):
        def progress(partial: Any, assignor: str = assignor) -> None:
            print(f"\r{assignor}: {partial.groups:,}/{args.stories:,} stories, "
                  f"{partial.unexplained_count} unexplained", end="", file=sys.stderr,
                  flush=True)

        result = run_stories(ours, reference, assignor, groups=args.stories, seed=args.seed,
                             start=args.start, workers=args.workers,
                             timeout=args.timeout or 5.0,
                             progress=progress if sys.stderr.isatty() else None)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print("\n".join(story_report(result, ours, reference, args.workers)))
        for path in save_differences(result, ours, reference, args.failures):
            print(f"  saved: {path}")
        bad += result.unexplained_count
    return 1 if bad else 0


def _load_request(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            body = json.load(fh)
    except (OSError, ValueError) as exc:
        raise CommandError(f"diff: cannot read {path}: {exc}") from None
    if not isinstance(body, dict) or not isinstance(body.get("members"), dict):
        raise CommandError(f"diff: {path} is not a saved assign request")
    body.pop("groupcheck", None)
    body.setdefault("op", "assign")
    return body


def cmd_diff_requests(paths: list[str], pairs: dict[str, tuple[Any, Any]]) -> int:
    """Run each saved request on the pair of targets that answer its assignor; print the
    answers and the verdict."""
    from .differential import Pair, answer_table, describe, explained_text, run_requests

    code = 0
    for path in paths:
        request = _load_request(path)
        named = request.get("assignor")
        if named not in pairs and len(pairs) != 1:
            raise CommandError(f"diff: {path} asks for assignor {named!r}, which the two "
                               f"targets do not both answer ({', '.join(sorted(pairs))})")
        a, b = pairs[named] if named in pairs else next(iter(pairs.values()))
        pair = Pair(a, b)
        result = run_requests(pair, iter([(os.path.basename(path), request)]),
                              time.perf_counter(), shrunk=False)
        if result.agree and not result.explained:
            print(f"{path}: {a.name} and {b.name} agree")
        elif result.agree:
            ra, rb, _, _ = pair.check(request, count=False)
            print(f"{path}: {a.name} and {b.name} differ{explained_text(result.explained)}")
            print("\n".join([f"  {a.name} answered", answer_table(ra),
                             f"  {b.name} answered", answer_table(rb)]))
        else:
            code = 1
            print(f"{path}:")
            print(describe(result, a.name, b.name))
    return code


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
        raise CommandError(f"diff: the targets answer no assignor in common "
                           f"({', '.join(str(t.assignor) for t in sa)} / "
                           f"{', '.join(str(t.assignor) for t in sb)})")
    return pairs


def cmd_diff(args: argparse.Namespace) -> int:
    from .differential import describe, run_diff

    if len(args.target) != 2:
        raise CommandError("diff: give exactly two --target options")
    if args.stories:
        return cmd_diff_stories(args)
    check_scope(args.scope)
    wanted = parse_assignors(args.assignor)
    a_offers = offers_of(args.target[0], None, args.timeout)
    b_offers = offers_of(args.target[1], None, args.timeout)
    agree = True
    try:
        pairs = diff_pairs(a_offers, b_offers, wanted)
        if args.request:
            return cmd_diff_requests(args.request, {n: (a, b) for a, b, n in pairs})
        for a, b, assignor in pairs:
            if a.assign is None or b.assign is None:
                raise CommandError("diff: both targets need an assign function (an assignor)")
            if len(pairs) == 1 and a.assignor != b.assignor:
                print(f"note: {a.name} runs {a.assignor!r}, {b.name} runs {b.assignor!r}; "
                      f"requests name {assignor!r}")
            result = run_diff(a, b, assignor=assignor, scope=args.scope or
                              "members=3,topics=2,partitions=2,generations=2,claims=1,"
                              "symmetry=2",
                              vectors=not args.no_vectors, budget=args.budget / len(pairs))
            if len(pairs) > 1:
                print(f"[{assignor}]")
            print(describe(result, a.name, b.name))
            agree = agree and result.agree
            if not result.agree and args.failures:
                from .battery import save_json

                path = save_json(args.failures, f"diff-{a.name}-vs-{b.name}-{assignor}", {
                    **(result.request or {}), "groupcheck": {
                        "format": "groupcheck-diff/1", "targets": [a.name, b.name],
                        "invariant": "TIMEOUT" if result.timeout else "DIFF",
                        "answers": [result.a, result.b], "source": result.source}})
                print(f"saved: {path}")
    finally:
        close_all(a_offers + b_offers)
    return 0 if agree else 1
