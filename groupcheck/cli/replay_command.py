"""``groupcheck replay FILE``: run a saved counterexample again, whatever groupcheck saved it
as (`model.saved_files`): a state-machine replay file (its events on a fresh group), an
audit story or counterexample (its chain of rebalances), or assign requests (each answer
judged). It says ``reproduced`` only for the violation the file saved: the same invariant
about the same members and partitions (`model.reproduced`; any violation, for a file that
saved none); a replay that shows another says ``not reproduced``, names both, and exits 1.
Exit codes: 1 when it shows a violation (the saved one, or a different one), 0 when every
invariant held, 2 bad arguments. ``--out DIR`` also writes its ownership timeline,
``DIR/<FILE's stem>.html`` (stories and state-machine files; ``--html OUT``, the old
spelling, writes the page OUT).

``--json``: `output.JsonEnvelope` whose ``result`` is ``{"file", "reproduced", "different",
"picture"}`` (``different``: it showed another violation; ``picture``: the page written, or
null).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import engines
from .output import Output
from .progress_view import shown
from .shared import (
    GROUP_KINDS,
    NO_ENVIRONMENT,
    Environment,
    UsageError,
    add_assignor_option,
    add_broker_option,
    add_json_option,
    add_quiet_option,
    add_timeout_option,
    command_parser,
    deprecated,
    out_file,
    refuse,
    target_help,
)

__all__ = ["narrowed", "register"]


def _picture_path(args: argparse.Namespace) -> Path | None:
    """Where the timeline goes: ``--out DIR``'s page, or the old ``--html OUT`` file."""
    if args.html:
        if args.out:
            raise UsageError("replay: give --out DIR (--html OUT is its old spelling), not both")
        deprecated("--html OUT", "--out DIR")
        return Path(args.html)
    return out_file(args.out, f"{Path(args.file).stem}.html") if args.out else None


def narrowed(name: str | None, assignor: str | None, env: Environment) -> None:
    """`UsageError` when ``--assignor`` names an assignor the target does not run (a target
    of one fixed assignor would run its own and ignore it)."""
    if not assignor or not name or name.startswith("pyfn:"):
        return
    made = engines.resolved(name, assignor, None, env.settings)
    try:
        if made.assignor not in (None, assignor):
            raise UsageError(f"{name} runs {made.assignor} only; --assignor {assignor} names "
                             "none of it")
    finally:
        made.close()


def _replayed(args: argparse.Namespace, env: Environment, drawn: bool) -> engines.Replayed:
    try:
        saved = engines.read_saved(args.file)
    except engines.SavedFileError as exc:
        raise UsageError(str(exc)) from None
    narrowed(args.target or saved.target, args.assignor, env)
    where = {"target": args.target, "assignor": args.assignor, "settings": env.settings}
    if saved.kind == "story":
        refuse(args, ["timeout"], "to an audit story (it runs in this process)")
        story = engines.replay_story(saved, **where)
        return engines.Replayed(story.lines, story.reproduced, story.page, story.different)
    if drawn and saved.kind != "events":
        raise engines.EngineInputError("--out draws audit and scenarios stories and "
                                       "state-machine replay files, not requests")
    if saved.kind == "events":
        with shown(args.quiet) as progress:
            return engines.replay_events_file(saved, timeout=args.timeout, drawn=drawn,
                                              progress=progress, **where)
    return engines.replay_requests_file(saved, timeout=args.timeout, **where)


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    picture = _picture_path(args)
    replayed = _replayed(args, env, picture is not None)
    out = Output("replay", args.json)
    lines = replayed.lines
    if picture is not None:  # the verdict comes last, after the picture's path
        out.block(lines[:-1])
        try:
            picture.write_text(replayed.page, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {picture}: {exc.strerror}") from None
        out.line(f"picture: {picture}")
        out.line(lines[-1])
    else:
        out.block(lines)
    shown = replayed.reproduced or replayed.different
    return out.finish(1 if shown else 0, {
        "file": args.file, "reproduced": replayed.reproduced, "different": replayed.different,
        "picture": str(picture) if picture else None})


def register(sub: Any) -> None:
    p = command_parser(sub, "replay", "run a saved counterexample again (a state-machine "
                                      "replay file, an audit story, or assign requests)",
                       [(0, "not reproduced: every invariant held"),
                        (1, "it reproduced the saved violation, or showed a different one")])
    p.add_argument("file", help="the saved file: a state-machine replay file, an audit or "
                                "scenarios story or counterexample, or assign requests")
    p.add_argument("--target", metavar="T", default=None,
                   help=target_help(GROUP_KINDS, "replay on this target instead of the "
                                                 "file's"))
    add_assignor_option(p, "the assignor, for a target that answers several (default: the "
                           "one the file was found on; a replayed request names its own); "
                           "one the target does not run is refused", repeat=False)
    add_timeout_option(p)
    add_broker_option(p)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="also write the counterexample's ownership timeline (an SVG page) "
                        "to DIR/<FILE's stem>.html")
    p.add_argument("--html", default=None, help=argparse.SUPPRESS)
    add_json_option(p, '{"file", "reproduced", "different", "picture"}')
    add_quiet_option(p)
    p.set_defaults(func=run)
