"""``groupcheck jsonl [FILE]``: serve the JSON-lines contract, one request per line (stdin
by default), one answer per line on stdout; a bad line gets an error answer and the
service goes on."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..impl import jsonl
from .shared import NO_ENVIRONMENT, Environment, UsageError, command_parser

__all__ = ["register"]


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    if args.input == "-":
        return jsonl.serve(sys.stdin, sys.stdout)
    try:
        fh = open(args.input, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {args.input}: {exc.strerror}") from None
    with fh:  # an error writing the answers is not the file's (a closed pipe: `exits`)
        return jsonl.serve(fh, sys.stdout)


def register(sub: Any) -> None:
    p = command_parser(sub, "jsonl", "serve the JSON-lines contract (one request per line)",
                       [(0, "end of input")])
    p.add_argument("input", nargs="?", default="-", help="request file, or - for stdin")
    p.set_defaults(func=run)
