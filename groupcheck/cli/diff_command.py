"""``groupcheck diff --target A --target B``: the smallest input of the scope on which two
targets disagree; over the audit's chains of rebalances (``--stories N``); or saved
requests run again on both targets (``--request FILE``, any saved file that holds requests).

    groupcheck diff --target java@3.4.0: --target java@3.5.1: [--assignor A] [--scope S]
                    [--no-vectors]                   (``diff A B``: the old spelling)
    groupcheck diff --target builtin:sticky --target java: --stories 1000 [--seed S]
                    [--start I] [--jobs W] [--timeout S] [--failures DIR]
    groupcheck diff --target builtin:sticky --target java: --request FILE [--request ...]

An option of one of these runs given to another is refused (exit 2).

Exit codes: 0 no difference that counts, 1 one or more (each saved as a request file), 2 bad
arguments.

``--json``: `output.JsonEnvelope` whose ``result`` is ``{"targets": [A, B], "agree"}``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from .. import engines
from ..targets.offers import close_all, parse_assignors
from ..targets.target import Target
from .output import Output
from .progress_view import CommandClock, shown
from .shared import (
    ASSIGN_KINDS,
    DEFAULT_BUDGET,
    NO_ENVIRONMENT,
    Environment,
    add_failures_option,
    add_jobs_option,
    add_json_option,
    add_quiet_option,
    add_seed_option,
    add_target_option,
    add_timeout_option,
    command_parser,
    int_at_least,
    positional_targets,
    positive_seconds,
    refuse,
    target_help,
)

__all__ = ["register"]

DEFAULT_SCOPE = "members=3,topics=2,partitions=2,generations=2,claims=1,symmetry=2"
#: the options of each kind of run
SEARCH = ("scope", "no_vectors", "budget")
STORIES = ("seed", "start", "jobs")


def _ticks(progress: engines.ProgressFn, subject: str, stories: int
           ) -> Callable[[engines.StoriesResult], None]:
    """The stories engine's partial results as ticks."""
    started = time.perf_counter()

    def tick(partial: engines.StoriesResult) -> None:
        progress(engines.Tick("diff", subject, partial.groups, time.perf_counter() - started,
                              None, partial.unexplained_count,
                              f"{partial.groups:,} of {stories:,} stories"))
    return tick


def _stories(args: argparse.Namespace, env: Environment, out: Output) -> bool:
    ours, reference = args.target
    bad = 0
    for assignor in engines.story_assignors(args.target, args.assignor):
        with shown(args.quiet) as progress:
            result = engines.run_diff_stories(
                ours, reference, assignor, groups=args.stories, seed=args.seed,
                start=args.start, workers=args.jobs, timeout=args.timeout or 5.0,
                progress=_ticks(progress, f"{ours} vs {reference} [{assignor}]",
                                args.stories), settings=env.settings)
        out.block(engines.story_report(result, ours, reference, args.jobs))
        for path in engines.save_differences(result, ours, reference, args.failures):
            out.line(f"  saved: {path}")
        bad += result.unexplained_count
    return not bad


def _saved(paths: list[str]) -> list[engines.SavedFile]:
    try:
        return [engines.read_saved(path) for path in paths]
    except engines.SavedFileError as exc:
        raise engines.EngineInputError(f"diff: {exc}") from None


def _search(args: argparse.Namespace, env: Environment, out: Output,
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
            out.line(f"note: {a.name} runs {a.assignor!r}, {b.name} runs {b.assignor!r}; "
                     f"requests name {assignor!r}")
        with shown(args.quiet) as progress:
            result = engines.run_diff(
                a, b, assignor=assignor, scope=args.scope or DEFAULT_SCOPE,
                vectors=not args.no_vectors, vectors_folder=env.vectors, progress=progress,
                budget=max(end - time.perf_counter(), 0.0) / (len(pairs) - n))
        if len(pairs) > 1:
            out.line(f"[{assignor}]")
        out.line(engines.describe(result, a.name, b.name))
        agree = agree and result.agree
        if not result.agree and args.failures:
            saved = engines.save_search_difference(args.failures, a, b, assignor, result)
            out.line(f"saved: {saved}")
    return agree


def _pairs_agree(args: argparse.Namespace, env: Environment, out: Output) -> bool:
    """The scope's search, or ``--request``'s files, on both targets' assignors."""
    clock = CommandClock(getattr(args, "started", None))
    saved = _saved(args.request)
    wanted = parse_assignors(args.assignor)
    with clock.starting(*args.target):
        # only the assignors asked for: a java: side starts a JVM for each it offers
        a_offers = engines.offers_of(args.target[0], args.assignor, args.timeout, env.settings)
        b_offers = engines.offers_of(args.target[1], args.assignor, args.timeout, env.settings)
        engines.started(o.target for o in a_offers + b_offers if o.target is not None)
    try:
        pairs = engines.diff_pairs(a_offers, b_offers, wanted)
        if saved:
            lines, agree = engines.requests_lines(saved, {n: (a, b) for a, b, n in pairs})
            out.block(lines)
            return bool(agree)
        return _search(args, env, out, pairs, clock.left(args.budget))
    finally:
        close_all(a_offers + b_offers)


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    args.target = positional_targets(args, "--target A --target B")
    if len(args.target) != 2:
        raise engines.EngineInputError("diff: give exactly two targets (--target A --target "
                                       "B)")
    out = Output("diff", args.json)
    if args.stories:
        refuse(args, [*SEARCH, "request"], "to --stories")
        agree = _stories(args, env, out)
    else:
        refuse(args, STORIES, "without --stories")
        if args.request:
            refuse(args, SEARCH, "to --request (the saved requests are run as they are)")
        engines.check_scope(args.scope)
        agree = _pairs_agree(args, env, out)
    return out.finish(0 if agree else 1, {"targets": args.target, "agree": agree})


def register(sub: Any) -> None:
    p = command_parser(sub, "diff", "find the smallest input on which two targets disagree",
                       [(0, "no difference that counts"),
                        (1, "one or more differences (each saved as a request file)")])
    p.add_argument("targets", nargs="*", metavar="TARGET", help=argparse.SUPPRESS)
    add_target_option(p, target_help(ASSIGN_KINDS, "twice: the target, then the reference"),
                      repeat=True)
    p.add_argument("--assignor", action="append", default=None, metavar="A",
                   help="compare only these assignors (repeatable or comma-separated; "
                        "default: every assignor both targets answer)")
    p.add_argument("--scope", metavar="S", default=None,
                   help=f"scope of generated requests (default {DEFAULT_SCOPE})")
    p.add_argument("--no-vectors", action="store_true",
                   help="generated requests only (not the golden vectors too)")
    p.add_argument("--budget", metavar="S", type=positive_seconds, default=DEFAULT_BUDGET,
                   help="seconds of the search (default %(default)s)")
    add_timeout_option(p)
    add_failures_option(p, "where the input is saved")
    p.add_argument("--request", action="append", default=[], metavar="FILE",
                   help="run the requests of this saved file on both targets (repeatable)")
    p.add_argument("--stories", type=int_at_least(0), default=0, metavar="N",
                   help="feed both targets N of the audit's random chains of rebalances "
                        "(each request built from the first target's answer)")
    add_seed_option(p, "--stories: the audit's seed")
    p.add_argument("--start", type=int_at_least(0), default=0,
                   help="--stories: the first scenario id (default %(default)s)")
    add_jobs_option(p, "--stories: worker processes, each with its own JVM (default "
                       "%(default)s)", 1)
    add_json_option(p, '{"targets": [A, B], "agree"}')
    add_quiet_option(p)
    p.set_defaults(func=run)
