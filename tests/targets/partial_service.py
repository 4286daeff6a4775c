"""A JSON-lines service for the tests of "every assignor by default": groupcheck's own
service, except that it answers every ``roundrobin`` request with an error (it does not
implement that assignor) and, with ``--broken-range``, its ``range`` gives every partition
of a topic to the topic's first subscriber (a defect in one assignor only)."""

from __future__ import annotations

import json
import sys
from typing import Any

from groupcheck.impl.jsonl import handle


def answer(request: Any, broken_range: bool) -> dict[str, Any]:
    if isinstance(request, dict) and request.get("assignor") == "roundrobin":
        return {"error": "UnsupportedAssignor: roundrobin is not implemented here"}
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
    broken = "--broken-range" in sys.argv[1:]
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line), broken)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
