"""``groupcheck jsonl [FILE] [--target T]``: serve the JSON-lines contract, one request per
line (stdin by default), one answer per line on stdout; a bad line gets an error answer and
the service goes on. With ``--target`` the server answers as that target does (its
assignors, its codec: `targets.served`), so ``jsonl:groupcheck jsonl --target mutant:<name>``
is a process target that runs a zoo mutant."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..impl import jsonl
from ..impl.jsonl import Handler
from ..targets.registry import resolve
from ..targets.served import target_ops
from ..targets.target import Target
from .shared import (
    ASSIGN_KINDS,
    NO_ENVIRONMENT,
    Environment,
    UsageError,
    add_target_option,
    command_parser,
    target_help,
)

__all__ = ["register"]


def _ops(args: argparse.Namespace, env: Environment
         ) -> tuple[dict[str, Handler] | None, Target | None]:
    """The ops to answer with and the resolved target to close (None, None: groupcheck's
    own)."""
    if args.target is None:
        return None, None
    target = resolve(args.target, settings=env.settings)
    try:
        return target_ops(target), target
    except BaseException:
        target.close()
        raise


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
    ops, target = _ops(args, env)
    try:
        if args.input == "-":
            return jsonl.serve(sys.stdin, sys.stdout, ops)
        try:
            fh = open(args.input, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read {args.input}: {exc.strerror}") from None
        with fh:  # an error writing the answers is not the file's (a closed pipe: `exits`)
            return jsonl.serve(fh, sys.stdout, ops)
    finally:
        if target is not None:
            target.close()


def register(sub: Any) -> None:
    p = command_parser(sub, "jsonl", "serve the JSON-lines contract (one request per line)",
                       [(0, "end of input")])
    p.add_argument("input", nargs="?", default="-", help="request file, or - for stdin")
    add_target_option(p, target_help(
        ASSIGN_KINDS, "answer as this target does (its assignors and codec) instead of "
        "groupcheck's four assignors", "; e.g. mutant:<name> serves a zoo mutant"),
        required=False)
    p.set_defaults(func=run)
