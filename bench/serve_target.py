"""One target's assign function served over the JSON-lines contract, ids echoed, every other
op answered by groupcheck's own service: ``python bench/serve_target.py TARGET``. It puts an
in-process target (a ``python:`` assignor) behind a ``jsonl:`` target for bench/prove_process.py.
"""

from __future__ import annotations

import json
import sys

from groupcheck.impl.jsonl import error_text, handle
from groupcheck.targets.registry import resolve


def main() -> None:
    target = resolve(sys.argv[1])
    assign = target.assign
    assert assign is not None, f"{sys.argv[1]} has no assign function"
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = dict(assign(request) if request.get("op") == "assign" else handle(request))
        except Exception as exc:  # noqa: BLE001 - every failure is an error answer
            answer = {"error": error_text(exc)}
        if "id" in request:
            answer["id"] = request["id"]
        sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
