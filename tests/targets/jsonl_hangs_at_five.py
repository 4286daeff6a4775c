"""A JSON-lines assignor service (``python tests/targets/jsonl_hangs_at_five.py``) that answers
as groupcheck's own, except that it never answers an ``assign`` for five members or more."""

from __future__ import annotations

import json
import sys
import time

from groupcheck.impl.jsonl import handle


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "assign" and len(request.get("members", {})) >= 5:
            time.sleep(3600)
        print(json.dumps(handle(request)), flush=True)


if __name__ == "__main__":
    main()
