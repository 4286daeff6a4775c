"""``groupcheck bisect FILE --versions A..B [--assignor A]`` (or ``--target T``, repeatable):
a saved counterexample (a request file or a state-machine replay file) replayed on every
version in order: one line per version (present, absent or n/a, and the violation), then
where it was first seen and where it is gone.

Exit codes: 1 when some version shows it, 0 when none does, 2 bad arguments.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import engines
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    add_assignor_option,
    add_quiet_option,
    add_timeout_option,
    add_versions_option,
    with_releases,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    targets = with_releases(args.target, args.versions, env,
                            "bisect: give --versions A..B or --target T (repeatable)")
    with shown(args.quiet) as progress:
        found = engines.bisect_file(args.file, targets, assignor=args.assignor,
                                    timeout=args.timeout, settings=env.settings,
                                    progress=progress)
    width = max(len(t) for t in targets)
    print(f"bisecting {args.file} ({found.invariant or 'any invariant'}) over "
          f"{len(targets)} target(s)")
    for o in found.outcomes:
        print(f"  {o.target:<{width}}  {o.verdict:<8} {o.text}")
    print(found.summary())
    return 1 if found.present_in else 0


def register(sub: Any) -> None:
    p = sub.add_parser("bisect", help="replay a saved counterexample on every Kafka release "
                                      "in a range: first seen in, gone in")
    p.add_argument("file", help="a request file or a state-machine replay file")
    add_versions_option(p)
    p.add_argument("--target", action="append", default=[],
                   help="a target to replay on, in order (repeatable; before --versions' "
                        "releases)")
    add_assignor_option(p, "the assignor (default: the file's)", repeat=False)
    add_timeout_option(p)
    add_quiet_option(p)
    p.set_defaults(func=run)
