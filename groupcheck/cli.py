"""The ``groupcheck`` command line.

Exit codes: 0 every invariant holds / the job succeeded, 1 a violation was found,
2 usage or input error (one plain line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .cli_values import folder_problem
from .impl import jsonl
from .impl.errors import AssignorError, CodecError, InvalidRequestError
from .membership_commands import CommandError


class UsageError(Exception):
    """Bad arguments or input: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _cmd_jsonl(args: argparse.Namespace) -> int:
    if args.input == "-":
        return jsonl.serve(sys.stdin, sys.stdout)
    try:
        with open(args.input, encoding="utf-8") as fh:
            return jsonl.serve(fh, sys.stdout)
    except OSError as exc:
        raise UsageError(f"cannot read {args.input}: {exc.strerror}") from None


def _read_request(path: str) -> dict[str, Any]:
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        request = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not a JSON request: {exc}") from None
    if not isinstance(request, dict):
        raise UsageError(f"{path} must hold one JSON object (an assign request)")
    request.setdefault("op", "assign")
    return request


def _assignment_table(response: dict[str, Any]) -> str:
    rows = [(m, parts) for m, parts in response["assignment"].items()]
    width = max([len("member")] + [len(m) for m, _ in rows])
    lines = [f"{'member':<{width}}  count  partitions"]
    for member, parts in rows:
        shown = ", ".join(f"{t}-{p}" for t, p in parts) or "-"
        lines.append(f"{member:<{width}}  {len(parts):>5}  {shown}")
    lines.append(f"generation {response['generation']}, protocol {response['protocol']}, "
                 f"assign took {response['ms']:.3f} ms")
    return "\n".join(lines)


def _cmd_assign(args: argparse.Namespace) -> int:
    from .impl.assign_op import run_assign

    request = _read_request(args.request)
    try:
        response = run_assign(request)
    except (CodecError, AssignorError, InvalidRequestError) as exc:
        raise UsageError(jsonl.error_text(exc)) from None
    if args.json:
        print(json.dumps(response, ensure_ascii=False))
    else:
        print(_assignment_table(response))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="groupcheck",
                     description="Check Kafka classic consumer-group rebalances.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("jsonl", help="serve the JSON-lines contract (one request per line)")
    p.add_argument("input", nargs="?", default="-", help="request file, or - for stdin")
    p.set_defaults(func=_cmd_jsonl)
    p = sub.add_parser("assign", help="run one assign request and print the assignment")
    p.add_argument("request", help="JSON file with one assign request, or - for stdin")
    p.add_argument("--json", action="store_true", help="print the JSON response instead")
    p.set_defaults(func=_cmd_assign)
    from .audit_command import add_commands as add_audit
    from .broker_command import add_commands as add_broker
    from .check_command import add_commands as add_check
    from .membership_commands import add_commands
    from .prove_command import add_commands as add_prove
    from .scenario_engine import add_commands as add_scenarios
    from .story_commands import add_commands as add_shrink

    add_commands(sub)
    add_prove(sub)
    add_check(sub)
    add_audit(sub)
    add_scenarios(sub)
    add_shrink(sub)
    add_broker(sub)
    return parser


def _input_error(exc: Exception) -> bool:
    """Bad arguments or input, wherever found: a target string that names nothing we can run
    may surface only when a command (or one of its worker processes) resolves it."""
    if isinstance(exc, UsageError | CommandError):
        return True
    from .targets.registry import TargetError

    return isinstance(exc, TargetError)


def main(argv: Sequence[str] | None = None) -> int:
    broker_before = os.environ.get("GROUPCHECK_BROKER")
    try:
        args = build_parser().parse_args(argv)
        failures = getattr(args, "failures", None)
        problem = folder_problem(failures, "--failures") if failures else None
        if problem:
            raise UsageError(problem)
        if getattr(args, "broker", None):  # wire targets read it when they are resolved
            os.environ["GROUPCHECK_BROKER"] = args.broker
        code: int = args.func(args)
        return code
    except Exception as exc:
        if not _input_error(exc):
            raise
        print(str(exc).splitlines()[0] if str(exc) else "usage error", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:  # --broker is this command's: a later one in the process gets the default
        if broker_before is None:
            os.environ.pop("GROUPCHECK_BROKER", None)
        else:
            os.environ["GROUPCHECK_BROKER"] = broker_before
