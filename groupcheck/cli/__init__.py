"""The ``groupcheck`` command line: one thin module per command over the engines
(``groupcheck.engines``), the pieces they share in `shared`, how a run ends in `exits`.

Exit codes (`exits`): 0 every invariant holds / the job succeeded, 1 a violation was found,
2 usage or input error (one plain line on stderr, no traceback), 3 groupcheck's own error
(one line naming the file that holds the traceback), 130 interrupted, 141 standard output
closed by its reader.

`main` is the edge: it parses the arguments, reads the environment once
(`shared.Environment`, with ``--broker`` over ``$GROUPCHECK_BROKER``), checks a
``--failures`` folder before anything runs, and hands both to the command.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from . import (
    assign_command,
    audit_command,
    bisect_command,
    broker_command,
    check_command,
    diff_command,
    fuzz_command,
    jsonl_command,
    matrix_command,
    prove_command,
    replay_command,
    scenarios_command,
    shrink_command,
    upgrade_command,
    zoo_command,
)
from .exits import Run, ascii_fallback, guarded
from .progress_view import process_started
from .shared import Environment, Parser, UsageError, folder_problem
from .version_report import version_lines

__all__ = ["COMMANDS", "build_parser", "main"]

#: the commands, in the order ``groupcheck --help`` lists them
COMMANDS = (jsonl_command, assign_command, fuzz_command, replay_command, prove_command,
            check_command, zoo_command, diff_command, audit_command, scenarios_command,
            shrink_command, matrix_command, bisect_command, upgrade_command, broker_command)


class _Version(argparse.Action):
    """``--version``: the versions found (`version_report`), then exit 0."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print groupcheck's version, Python's and those of the "
                              "optional pieces found (not found: missing), then exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print("\n".join(version_lines()))
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (each module registers its own)."""
    parser = Parser(prog="groupcheck",
                    description="Check Kafka classic consumer-group rebalances.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def _command_of(argv: Sequence[str]) -> str:
    names = {c.__name__.rsplit(".", 1)[-1].removesuffix("_command") for c in COMMANDS}
    return next((a for a in argv if a in names), "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (see the module docstring). A budget counts from the
    process's start when the arguments are the program's, else from this call."""
    started = process_started() if argv is None else time.perf_counter()
    argv = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        ascii_fallback(stream)
    run = Run(_command_of(argv))

    def body() -> int:
        args = build_parser().parse_args(argv)
        args.started = started
        run.failures = getattr(args, "failures", None)
        problem = folder_problem(run.failures, "--failures") if run.failures else None
        if problem:
            raise UsageError(problem)
        env = Environment.read(os.environ).with_broker(getattr(args, "broker", None))
        code: int = args.func(args, env)
        return code

    return guarded(run, body)
