"""``groupcheck shrink FILE``: make a saved counterexample smaller while it still fails the
same way (delta debugging), whatever groupcheck saved it as (`model.saved_files`):

* an audit story or counterexample: its story loses members, topics, partitions, steps and
  claims while the same invariant breaks the same way (its own violation, or the same Kafka
  rule's) on the target; written as an audit counterexample (``groupcheck-audit-chain/1``);
* a state-machine replay file: its events, each try on a fresh group of the target;
* assign requests: the first failing request loses members, topics, partitions, claims and
  subscriptions while the same invariant breaks; written as a request file.

The target is the one the file names unless ``--target`` is given. Exit codes: 0 shrunk
and written, 2 bad arguments or a file that does not fail on the target.
"""

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
    add_quiet_option,
    add_reference_option,
    add_timeout_option,
    positive_seconds,
)

__all__ = ["register"]

DEFAULT_BUDGET = 60.0


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    try:
        saved = engines.read_saved(args.file)
    except engines.SavedFileError as exc:
        raise UsageError(str(exc)) from None
    with shown(args.quiet) as progress:
        where = {"target": args.target, "assignor": args.assignor,
                 "invariant": args.invariant, "seconds": args.budget,
                 "settings": env.settings, "progress": progress}
        if saved.kind == "events":
            record, lines = engines.shrink_events_file(saved, **where)
        elif saved.kind == "story":
            record, lines = engines.shrink_story_file(saved, reference=args.reference,
                                                      **where)
        else:
            record, lines = engines.shrink_requests_file(saved, timeout=args.timeout,
                                                         **where)
    out = Path(args.out) if args.out else Path(args.file).with_suffix(".shrunk.json")
    print("\n".join(lines))
    print(f"written: {engines.write_record(out, record)}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("shrink", help="make a saved counterexample smaller while it still "
                                      "fails the same way (delta debugging)")
    p.add_argument("file", help="an audit or scenarios counterexample, a story, a "
                                "state-machine replay file, or assign requests")
    p.add_argument("--target", default=None, help="default: the target the file names")
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_BUDGET,
                   help="seconds (default %(default)s)")
    p.add_argument("--out", default=None, help="default: FILE with .shrunk.json")
    p.add_argument("--assignor", default=None,
                   help="which assignor a jsonl: target runs (default: the file's)")
    p.add_argument("--invariant", default=None,
                   help="the invariant to keep broken (default: the file's)")
    add_timeout_option(p)
    add_reference_option(p, "label each candidate's violations from T's evidence (java: "
                            "runs the story's assignor on Kafka's client): a violation T "
                            "reproduced shrinks only to stories T still reproduces")
    add_quiet_option(p)
    p.set_defaults(func=run)
