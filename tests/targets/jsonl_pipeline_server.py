"""A JSON-lines server for the transport's tests (``python tests/targets/jsonl_pipeline_server.py
MODE [K]``): it answers each request ``{"n": i, ...}`` with ``{"echo": i}`` and misbehaves on
request ``n == K`` as MODE says.

Modes: ``ids`` (echoes ids, in order), ``noid`` (ignores ids, in order), ``reorder`` (echoes
ids, answers each block of K requests in reverse), ``hang``, ``crash``, ``error``,
``garbage``, ``partial`` (on request K: never answers, exits, answers an error, answers a
line that is not JSON, writes half a line and exits), ``window`` (reads for half a second
before answering anything; each answer says how many lines it had read by then).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any


def _answer(request: dict[str, Any], with_id: bool = True) -> str:
    answer: dict[str, Any] = {"echo": request.get("n")}
    if with_id and "id" in request:
        answer["id"] = request["id"]
    return json.dumps(answer)


def _write(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _misbehave(mode: str, request: dict[str, Any]) -> None:
    if mode == "hang":
        time.sleep(3600)
    if mode == "crash":
        sys.exit(3)
    if mode == "error":
        _write(json.dumps({"error": "Boom: request K", "id": request.get("id")}))
    if mode == "garbage":
        _write("this is not JSON")
    if mode == "partial":
        sys.stdout.write('{"echo": ')
        sys.stdout.flush()
        sys.exit(0)


def _window() -> None:
    read: list[str] = []

    def reader() -> None:
        for line in sys.stdin:
            read.append(line)
        read.append("")

    threading.Thread(target=reader, daemon=True).start()
    time.sleep(0.5)
    done = 0
    while True:
        while done >= len(read):
            time.sleep(0.01)
        if read[done] == "":
            return
        answer = json.loads(_answer(json.loads(read[done])))
        answer["seen"] = len(read)
        _write(json.dumps(answer))
        done += 1


def main() -> None:
    mode = sys.argv[1]
    k = int(sys.argv[2]) if len(sys.argv) > 2 else -1
    if mode == "window":
        _window()
        return
    block: list[dict[str, Any]] = []
    for line in sys.stdin:
        request = json.loads(line)
        if mode == "reorder":
            block.append(request)
            if len(block) == k:
                for held in reversed(block):
                    _write(_answer(held))
                block.clear()
            continue
        if request.get("n") == k:
            _misbehave(mode, request)
            continue
        _write(_answer(request, with_id=mode != "noid"))
    for held in reversed(block):
        _write(_answer(held))


if __name__ == "__main__":
    main()
