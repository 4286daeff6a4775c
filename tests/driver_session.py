"""A small harness for the driver tests: one member driver process spoken to over the
member-driver contract (README, "Driving your own client"), and the ownership its callback
events describe.

`Session.call` sends a command and waits (with a deadline) for its ack; events are kept in
arrival order. `Ownership` replays callback ends into who owns what, checking at every step
that no partition is owned twice (I1, as the callbacks tell it).
"""

from __future__ import annotations

import collections
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

ACK_TIMEOUT = 90.0
Partition = tuple[str, int]


class Session:
    """One running member driver."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.events: list[dict[str, Any]] = []
        self.acks: dict[int, dict[str, Any]] = {}
        self.stderr: collections.deque[str] = collections.deque(maxlen=40)
        self.cond = threading.Condition()
        self.next_id = 0
        for target in (self._read, self._read_stderr):
            threading.Thread(target=target, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.cond:
                if "event" in message:
                    self.events.append(message)
                else:
                    self.acks[int(message["ack"])] = message
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip())

    def call(self, cmd: str, timeout: float = ACK_TIMEOUT, **fields: Any) -> dict[str, Any]:
        with self.cond:
            self.next_id += 1
            number = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"id": number, "cmd": cmd, **fields}) + "\n")
        self.proc.stdin.flush()
        with self.cond:
            if not self.cond.wait_for(lambda: number in self.acks
                                      or self.proc.poll() is not None, timeout):
                raise TimeoutError(f"no ack to {cmd} in {timeout}s; stderr: {list(self.stderr)}")
            if number not in self.acks:
                raise RuntimeError(f"driver exited during {cmd}; stderr: {list(self.stderr)}")
            return self.acks[number]

    def wait_until(self, test: Callable[[list[dict[str, Any]]], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not test(self.events):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(min(left, 0.5))
            return True

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.call("shutdown", timeout=60)
            self.proc.wait(30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)


class Ownership:
    """Who owns what, from callback ends: assigned adds, revoked and lost remove."""

    def __init__(self) -> None:
        self.owned: dict[str, set[Partition]] = collections.defaultdict(set)
        self.overlaps: list[str] = []

    def apply(self, events: Iterable[dict[str, Any]]) -> Ownership:
        for e in events:
            if e["event"] == "closed":
                self.owned.pop(e["member"], None)
            if e["event"] != "callback_end":
                continue
            partitions = {(t, p) for t, p in e["partitions"]}
            mine = self.owned[e["member"]]
            if e["kind"] == "assigned":
                for other, theirs in self.owned.items():
                    if other != e["member"] and theirs & partitions:
                        self.overlaps.append(f"seq {e['seq']}: {e['member']} got "
                                             f"{sorted(theirs & partitions)} of {other}")
                mine |= partitions
            else:
                mine -= partitions
        return self

    def complete(self, partitions: set[Partition], members: Iterable[str]) -> bool:
        """Every partition owned by exactly one of ``members``, no one else owning any."""
        held = [p for m in members for p in self.owned.get(m, set())]
        strays = [p for m, ps in self.owned.items() if m not in set(members) for p in ps]
        return sorted(held) == sorted(partitions) and not strays
