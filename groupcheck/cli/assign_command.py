"""``groupcheck assign FILE [--json]``: run one assign request on groupcheck's own
assignors and print the assignment (a table, or the JSON answer). FILE is any saved file
holding one request (a bare request, or a request file with groupcheck's notes), or ``-``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, cast

from .. import engines
from ..impl import jsonl
from ..impl.assign_op import run_assign
from ..impl.errors import AssignorError, CodecError, InvalidRequestError
from ..impl.jsonl_shapes import AssignOpAnswer, AssignOpRequest
from .shared import NO_ENVIRONMENT, Environment, UsageError, add_json_option, command_parser

__all__ = ["register"]


def _read_request(path: str) -> AssignOpRequest:
    """The one request in ``path``; an object that is no saved file of another kind goes
    to the assignors as it is, so that what is wrong with it is theirs to say."""
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path} is not a JSON request: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} must hold one JSON object (an assign request)")
    try:
        saved = engines.classify_saved(data, path)
    except engines.SavedFileError:
        # any JSON object: run_assign checks every field it reads
        return cast(AssignOpRequest, {**data, "op": data.get("op", "assign")})
    if saved.kind != "requests" or len(saved.requests) != 1:
        held = (f"{len(saved.requests)} requests" if saved.kind == "requests"
                else "a story" if saved.kind == "story" else "a state-machine replay")
        raise UsageError(f"{path} holds {held}, not one assign request; groupcheck replay "
                         "plays it")
    return saved.requests[0]


def _assignment_table(response: AssignOpAnswer) -> str:
    rows = [(m, parts) for m, parts in response["assignment"].items()]
    width = max([len("member")] + [len(m) for m, _ in rows])
    lines = [f"{'member':<{width}}  count  partitions"]
    for member, parts in rows:
        shown = ", ".join(f"{t}-{p}" for t, p in parts) or "-"
        lines.append(f"{member:<{width}}  {len(parts):>5}  {shown}")
    lines.append(f"generation {response['generation']}, protocol {response['protocol']}, "
                 f"assign took {response['ms']:.3f} ms")
    return "\n".join(lines)


def run(args: argparse.Namespace, env: Environment = NO_ENVIRONMENT) -> int:
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


def register(sub: Any) -> None:
    p = command_parser(sub, "assign", "run one assign request and print the assignment",
                       [(0, "answered")])
    p.add_argument("request", help="JSON file with one assign request, or - for stdin")
    add_json_option(p, help="print the assign answer of the JSON-lines contract instead")
    p.set_defaults(func=run)
