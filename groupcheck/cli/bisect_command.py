"""``groupcheck bisect FILE --versions A..B [--assignor A]`` (or ``--target T``, repeatable):
a saved counterexample (a request file or a state-machine replay file) replayed on every
version in order (a wire story's ``--versions`` releases on the wire: ``wire:java@V:…``):
one line per version (present, absent or n/a, and the violation), then
its windows (the runs of versions where it is present, absent or n/a; a present run after an
absence is a regression), where it was first seen and where it is gone.

``--tries N`` replays up to N times on each version until one shows it: a story of real
clients that shows only now and then is absent on a version only when every replay held.

Exit codes: 1 when some version shows it, 0 when none does, 2 bad arguments.

``--json``: `output.JsonEnvelope` whose ``result`` is ``{"file", "invariant", "outcomes":
[{"target", "verdict", "text"}], "windows": [{"verdict", "first", "last", "targets",
"regression"}], "regression", "firstSeenIn", "goneIn", "summary"}``.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import engines
from .output import Output
from .progress_view import shown
from .shared import (
    NO_ENVIRONMENT,
    Environment,
    add_assignor_option,
    add_json_option,
    add_quiet_option,
    add_release_options,
    command_parser,
    int_at_least,
    releases_of,
)

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    released = releases_of(args.target, args.versions, env,
                           "bisect: give --versions A..B or --target T (repeatable)")
    targets = engines.story_targets(engines.load_counterexample(args.file), released,
                                    args.target, args.assignor)
    with shown(args.quiet) as progress:
        found = engines.bisect_file(args.file, targets, assignor=args.assignor,
                                    timeout=args.timeout, settings=env.settings,
                                    tries=args.tries, progress=progress)
    out = Output("bisect", args.json)
    width = max(len(t) for t in targets)
    out.line(f"bisecting {args.file} ({found.invariant or 'any invariant'}) over "
             f"{len(targets)} target(s)")
    for o in found.outcomes:
        out.line(f"  {o.target:<{width}}  {o.verdict:<8} {o.text}")
    out.line(found.summary())
    return out.finish(1 if found.present_in else 0, {
        "file": args.file, "invariant": found.invariant, "summary": found.summary(),
        "outcomes": [{"target": o.target, "verdict": o.verdict, "text": o.text}
                     for o in found.outcomes],
        "windows": [w.to_json() for w in found.windows], "regression": found.regression,
        "firstSeenIn": found.first_seen, "goneIn": found.gone_in})


def register(sub: Any) -> None:
    p = command_parser(sub, "bisect", "replay a saved counterexample on every Kafka release "
                                      "in a range: the windows where it is present or absent",
                       [(0, "no version shows it"), (1, "some version shows it")])
    p.add_argument("file", help="a request file or a state-machine replay file")
    add_release_options(p, "a target to replay on")
    add_assignor_option(p, "the assignor (default: the file's)", repeat=False)
    p.add_argument("--tries", type=int_at_least(1), default=1, metavar="N",
                   help="replay up to N times on each target until one shows it (default 1):"
                        " a story of real clients that shows only now and then is absent "
                        "only when every replay held")
    add_json_option(p, '{"file", "invariant", "summary", "outcomes": [{"target", "verdict", '
                       '"text"}], "windows": [{"verdict", "first", "last", "targets", '
                       '"regression"}], "regression", "firstSeenIn", "goneIn"}')
    add_quiet_option(p)
    p.set_defaults(func=run)
