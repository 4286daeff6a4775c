"""``groupcheck diff --target A --target B``: the smallest input of the scope on which two
targets disagree; over the audit's chains of rebalances (``--stories N``); or saved
requests run again on both targets (``--request FILE``, any saved file that holds requests).

    groupcheck diff A B [--assignor A] [--scope S] [--no-vectors]   (two releases:
                    groupcheck diff java@3.4.0: java@3.5.1:; --target A --target B too)
    groupcheck diff --target builtin:sticky --target java: --stories 1000 [--seed S]
                    [--start I] [--workers W] [--timeout S] [--failures DIR]
    groupcheck diff --target builtin:sticky --target java: --request FILE [--request ...]

Exit codes: 0 no difference that counts, 1 one or more (each saved as a request file), 2 bad
arguments.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from .. import engines
from ..targets.offers import close_all, parse_assignors
from ..targets.target import Target
from .progress_view import CommandClock, shown
from .shared import (
    DEFAULT_BUDGET,
    NO_ENVIRONMENT,
    Environment,
    add_failures_option,
    add_quiet_option,
    add_target_option,
    add_timeout_option,
    int_at_least,
    positive_seconds,
)

__all__ = ["register"]

DEFAULT_SCOPE = "members=3,topics=2,partitions=2,generations=2,claims=1,symmetry=2"


def _ticks(progress: engines.ProgressFn, subject: str, stories: int
           ) -> Callable[[engines.StoriesResult], None]:
    """The stories engine's partial results as ticks."""
    started = time.perf_counter()

    def tick(partial: engines.StoriesResult) -> None:
        progress(engines.Tick("diff", subject, partial.groups, time.perf_counter() - started,
                              None, partial.unexplained_count,
                              f"{partial.groups:,} of {stories:,} stories"))
    return tick


def _stories(args: argparse.Namespace, env: Environment) -> int:
    ours, reference = args.target
    bad = 0
    for assignor in engines.story_assignors(args.target, args.assignor):
        with shown(args.quiet) as progress:
            result = engines.run_diff_stories(
                ours, reference, assignor, groups=args.stories, seed=args.seed,
                start=args.start, workers=args.workers, timeout=args.timeout or 5.0,
                progress=_ticks(progress, f"{ours} vs {reference} [{assignor}]",
                                args.stories), settings=env.settings)
        print("\n".join(engines.story_report(result, ours, reference, args.workers)))
        for path in engines.save_differences(result, ours, reference, args.failures):
            print(f"  saved: {path}")
        bad += result.unexplained_count
    return 1 if bad else 0


def _saved(paths: list[str]) -> list[engines.SavedFile]:
    try:
        return [engines.read_saved(path) for path in paths]
    except engines.SavedFileError as exc:
        raise engines.EngineInputError(f"diff: {exc}") from None


def _search(args: argparse.Namespace, env: Environment,
            pairs: list[tuple[Target, Target, str]], budget: float) -> bool:
    """The scope's requests (then the vectors') on every pair, ``budget`` seconds in all;
    True when all agree."""
    agree = True
    end = time.perf_counter() + budget
    for n, (a, b, assignor) in enumerate(pairs):
        if a.assign is None or b.assign is None:
            raise engines.EngineInputError("diff: both targets need an assign function (an "
                                           "assignor)")
        if len(pairs) == 1 and a.assignor != b.assignor:
            print(f"note: {a.name} runs {a.assignor!r}, {b.name} runs {b.assignor!r}; "
                  f"requests name {assignor!r}")
        with shown(args.quiet) as progress:
            result = engines.run_diff(
                a, b, assignor=assignor, scope=args.scope or DEFAULT_SCOPE,
                vectors=not args.no_vectors, vectors_folder=env.vectors, progress=progress,
                budget=max(end - time.perf_counter(), 0.0) / (len(pairs) - n))
        if len(pairs) > 1:
            print(f"[{assignor}]")
        print(engines.describe(result, a.name, b.name))
        agree = agree and result.agree
        if not result.agree and args.failures:
            print(f"saved: {engines.save_search_difference(args.failures, a, b, assignor, result)}")
    return agree


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    args.target = [*(args.target or []), *args.targets]
    if len(args.target) != 2:
        raise engines.EngineInputError("diff: give exactly two targets (A B, or --target A "
                                       "--target B)")
    if args.stories:
        return _stories(args, env)
    clock = CommandClock(getattr(args, "started", None))
    engines.check_scope(args.scope)
    saved = _saved(args.request)
    wanted = parse_assignors(args.assignor)
    with clock.starting(*args.target):
        a_offers = engines.offers_of(args.target[0], None, args.timeout, env.settings)
        b_offers = engines.offers_of(args.target[1], None, args.timeout, env.settings)
    try:
        pairs = engines.diff_pairs(a_offers, b_offers, wanted)
        if saved:
            lines, agree = engines.requests_lines(saved, {n: (a, b) for a, b, n in pairs})
            print("\n".join(lines))
            return 0 if agree else 1
        return 0 if _search(args, env, pairs, clock.left(args.budget)) else 1
    finally:
        close_all(a_offers + b_offers)


def register(sub: Any) -> None:
    p = sub.add_parser("diff", help="find the smallest input on which two targets disagree")
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help="the two targets, e.g. java@3.4.0: java@3.5.1: (or --target twice)")
    add_target_option(p, "two targets (the second is the reference)", repeat=True)
    p.add_argument("--assignor", action="append", default=None,
                   help="compare only these assignors (repeatable or comma-separated; "
                        "default: every assignor both targets answer)")
    p.add_argument("--scope", default=None, help="scope of generated requests")
    p.add_argument("--no-vectors", action="store_true", help="generated requests only")
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_BUDGET, help="seconds")
    add_timeout_option(p)
    add_failures_option(p, "where the input is saved")
    p.add_argument("--request", action="append", default=[], metavar="FILE",
                   help="run the requests of this saved file on both targets (repeatable)")
    p.add_argument("--stories", type=int_at_least(0), default=0, metavar="N",
                   help="feed both targets N of the audit's random chains of rebalances "
                        "(each request built from the first target's answer)")
    p.add_argument("--seed", type=int, default=0, help="--stories: the audit's seed")
    p.add_argument("--start", type=int_at_least(0), default=0,
                   help="--stories: the first scenario id")
    p.add_argument("--workers", type=int_at_least(1), default=1,
                   help="--stories: worker processes (each with its own JVM)")
    add_quiet_option(p)
    p.set_defaults(func=run)
