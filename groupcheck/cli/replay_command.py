"""``groupcheck replay FILE``: run a saved counterexample again, whatever groupcheck saved it
as (`model.saved_files`): a state-machine replay file (its events on a fresh group), an
audit story or counterexample (its chain of rebalances), or assign requests (each answer
judged). Exit codes: 1 when it reproduces (the recorded invariant, or any for a bare story
or a request), 0 when it does not, 2 bad arguments. ``--html OUT`` also writes its
ownership timeline (stories and state-machine files)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import engines
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    UsageError,
    add_assignor_option,
    add_broker_option,
    add_quiet_option,
    add_timeout_option,
)

__all__ = ["register"]


def _write_html(path: str, page: str) -> None:
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    print(f"picture: {path}")


def _replayed(args: argparse.Namespace, env: Environment) -> engines.Replayed:
    try:
        saved = engines.read_saved(args.file)
    except engines.SavedFileError as exc:
        raise UsageError(str(exc)) from None
    where = {"target": args.target, "assignor": args.assignor, "settings": env.settings}
    if saved.kind == "story":
        story = engines.replay_story(saved, **where)
        return engines.Replayed(story.lines, story.reproduced, story.page)
    if args.html and saved.kind != "events":
        raise engines.EngineInputError("--html draws audit and scenarios stories and "
                                       "state-machine replay files")
    if saved.kind == "events":
        with shown(args.quiet) as progress:
            return engines.replay_events_file(saved, timeout=args.timeout,
                                              drawn=bool(args.html), progress=progress,
                                              **where)
    return engines.replay_requests_file(saved, timeout=args.timeout, **where)


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    out = _replayed(args, env)
    lines = out.lines
    if args.html:  # the verdict comes last, after the picture's path
        print("\n".join(lines[:-1]))
        _write_html(args.html, out.page)
        print(lines[-1])
    else:
        print("\n".join(lines))
    return 1 if out.reproduced else 0


def register(sub: Any) -> None:
    p = sub.add_parser("replay", help="run a saved counterexample again (a state-machine "
                                      "replay file, an audit story, or assign requests)")
    p.add_argument("file")
    p.add_argument("--target", default=None, help="replay on another target")
    add_assignor_option(p, "the assignor, for a target that answers several (default: the "
                           "one the file was found on; a replayed request names its own)",
                        repeat=False)
    add_timeout_option(p)
    add_broker_option(p)
    p.add_argument("--html", default=None, metavar="OUT",
                   help="also write the counterexample's ownership timeline (an SVG page) "
                        "to OUT")
    add_quiet_option(p)
    p.set_defaults(func=run)
