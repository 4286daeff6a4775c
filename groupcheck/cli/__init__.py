"""The ``groupcheck`` command line: one thin module per command over the engines
(``groupcheck.engines``), the pieces they share in `shared`.

Exit codes: 0 every invariant holds / the job succeeded, 1 a violation was found,
2 usage or input error (one plain line on stderr, no traceback), 130 interrupted.

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
from .progress_view import process_started
from .shared import Environment, Parser, UsageError, folder_problem, input_error

__all__ = ["COMMANDS", "build_parser", "main"]

#: the commands, in the order ``groupcheck --help`` lists them
COMMANDS = (jsonl_command, assign_command, fuzz_command, replay_command, prove_command,
            check_command, zoo_command, diff_command, audit_command, scenarios_command,
            shrink_command, matrix_command, bisect_command, upgrade_command, broker_command)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (each module registers its own)."""
    parser = Parser(prog="groupcheck",
                    description="Check Kafka classic consumer-group rebalances.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit code (see the module docstring). A budget counts from the
    process's start when the arguments are the program's, else from this call."""
    try:
        args = build_parser().parse_args(argv)
        args.started = process_started() if argv is None else time.perf_counter()
        failures = getattr(args, "failures", None)
        problem = folder_problem(failures, "--failures") if failures else None
        if problem:
            raise UsageError(problem)
        env = Environment.read(os.environ).with_broker(getattr(args, "broker", None))
        code: int = args.func(args, env)
        return code
    except Exception as exc:
        if not input_error(exc):
            raise
        print(str(exc).splitlines()[0] if str(exc) else "usage error", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
