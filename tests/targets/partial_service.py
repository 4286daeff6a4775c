"""A JSON-lines service for the tests of "every assignor by default": groupcheck's own
service, except that it answers every ``roundrobin`` request with an error (it does not
implement that assignor) and, with ``--broken-range``, its ``range`` gives every partition
of a topic to the topic's first subscriber (a defect in one assignor only). ``--old`` makes
it a process older than the ``assignors`` op (an unknown op, as any other), ``--dies-on-old``
one that exits on it; ``--declares JSON`` answers that op with ``{"assignors": JSON}``,
whatever JSON is."""

from __future__ import annotations

import json
import sys
from typing import Any

from groupcheck.impl.jsonl import handle


def answer(request: Any, broken_range: bool, declares: str | None = None,
           old: bool = False) -> dict[str, Any]:
    if isinstance(request, dict) and request.get("assignor") == "roundrobin":
        return {"error": "UnsupportedAssignor: roundrobin is not implemented here"}
    if isinstance(request, dict) and request.get("op") == "assignors":
        if old:
            return {"error": "InvalidRequestError: unknown op 'assignors'"}
        if declares is not None:
            return {"assignors": json.loads(declares)}
    reply = handle(request)
    if broken_range and request.get("op") == "assign" and request.get("assignor") == "range" \
            and "assignment" in reply:
        members = request["members"]
        whole: dict[str, list[list[Any]]] = {m: [] for m in reply["assignment"]}
        for topic, count in sorted((request.get("partitions") or {}).items()):
            takers = sorted(m for m, v in members.items() if topic in (v.get("topics") or []))
            if takers:
                whole[takers[0]] += [[topic, p] for p in range(count)]
        reply["assignment"] = whole
    return reply


def main() -> int:
    args = sys.argv[1:]
    broken, old = "--broken-range" in args, "--old" in args
    declares = args[args.index("--declares") + 1] if "--declares" in args else None
    for line in sys.stdin:
        if "--dies-on-old" in args and '"assignors"' in line:
            return 1
        if line.strip():
            print(json.dumps(answer(json.loads(line), broken, declares, old)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
