"""A JSON-lines assignor service (``python tests/targets/jsonl_drops_a_partition.py``) that
answers as groupcheck's own, ids echoed, except that an ``assign`` answer to two members
drops the last member's last partition, and every answer's ``ms`` is 0."""

from __future__ import annotations

import json
import sys
from typing import Any

from groupcheck.impl.jsonl import handle


def mutate(request: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """The service's answer to ``request`` given groupcheck's own (changed in place)."""
    if "assignment" in answer:
        answer["ms"] = 0
        shares = list(answer["assignment"].values())
        if len(shares) == 2 and shares[-1]:
            shares[-1].pop()
    return answer


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        answer = mutate(request, dict(handle(request)))
        if "id" in request:
            answer["id"] = request["id"]
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
