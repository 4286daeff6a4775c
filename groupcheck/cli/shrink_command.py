"""``groupcheck shrink FILE``: make a saved counterexample smaller while it still fails the
same way (delta debugging), whatever groupcheck saved it as (`model.saved_files`):

* an audit story or counterexample: its story loses members, topics, partitions, steps and
  claims while the same invariant breaks the same way (its own violation, or the same Kafka
  rule's) on the target; written as an audit counterexample (``groupcheck-audit-chain/1``);
* a state-machine replay file: its events, each try on a fresh group of the target;
* assign requests: the first failing request loses members, topics, partitions, claims and
  subscriptions while the same invariant breaks; written as a request file.

The target is the one the file names unless ``--target`` is given. The result is written to
``DIR/<FILE's stem>.shrunk.json`` with ``--out DIR``, else beside FILE (an ``--out`` path
ending in ``.json``, the old spelling, is that file). Exit codes: 0 shrunk and written,
2 bad arguments or a file that does not fail on the target.

``--json``: `output.JsonEnvelope` whose ``result`` is ``{"file", "written"}``.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
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
    add_json_option,
    add_quiet_option,
    add_reference_option,
    add_timeout_option,
    command_parser,
    out_file,
    positive_seconds,
    refuse,
    target_help,
)

__all__ = ["register"]

DEFAULT_BUDGET = 60.0


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    try:
        saved = engines.read_saved(args.file)
    except engines.SavedFileError as exc:
        raise UsageError(str(exc)) from None
    where = {"target": args.target, "assignor": args.assignor, "invariant": args.invariant,
             "seconds": args.budget, "settings": env.settings}
    name = f"{Path(args.file).stem}.shrunk.json"
    path = out_file(args.out, name) if args.out else Path(args.file).with_name(name)
    if saved.kind != "story":
        refuse(args, ["reference"], "to a state-machine replay file or requests (stories "
                                    "only)")
    if saved.kind in ("events", "story"):
        refuse(args, ["timeout"], "to a state-machine replay file" if saved.kind == "events"
               else "to an audit story (it runs in this process)")
    record: Mapping[str, object]
    with shown(args.quiet) as progress:
        if saved.kind == "events":
            record, lines = engines.shrink_events_file(saved, progress=progress, **where)
        elif saved.kind == "story":
            record, lines = engines.shrink_story_file(saved, reference=args.reference,
                                                      progress=progress, **where)
        else:
            record, lines = engines.shrink_requests_file(saved, timeout=args.timeout,
                                                         progress=progress, **where)
    out = Output("shrink", args.json)
    out.block(lines)
    written = engines.write_record(path, record)
    out.line(f"written: {written}")
    return out.finish(0, {"file": args.file, "written": str(written)})


def register(sub: Any) -> None:
    p = command_parser(sub, "shrink", "make a saved counterexample smaller while it still "
                                      "fails the same way (delta debugging)",
                       [(0, "shrunk and written"),
                        (2, "also: the file does not fail the same way on the target")])
    p.add_argument("file", help="an audit or scenarios counterexample, a story, a "
                                "state-machine replay file, or assign requests")
    p.add_argument("--target", metavar="T", default=None, help=target_help(
        GROUP_KINDS, "shrink on this target (default: the one the file names)"))
    p.add_argument("--budget", metavar="S", type=positive_seconds, default=DEFAULT_BUDGET,
                   help="seconds (default %(default)s)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write DIR/<FILE's stem>.shrunk.json (default: beside FILE)")
    p.add_argument("--assignor", default=None,
                   help="which assignor a jsonl: target runs (default: the file's)")
    p.add_argument("--invariant", metavar="I", default=None,
                   help="the invariant to keep broken (default: the file's)")
    add_timeout_option(p)
    add_reference_option(p, "label each candidate's violations from T's evidence (java: "
                            "runs the story's assignor on Kafka's client): a violation T "
                            "reproduced shrinks only to stories T still reproduces")
    add_json_option(p, '{"file", "written"}')
    add_quiet_option(p)
    p.set_defaults(func=run)
