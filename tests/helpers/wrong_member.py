"""A member driver with one deliberate delivery fault, for the I17 tests: ``python
tests/helpers/wrong_member.py <fault> <member>`` (a ``wire:cmd=…`` client).

It is the librdkafka driver (`LibrdkafkaClient`, eager assignors only) with commit styles
``none``, ``sync`` (a synchronous commit of the current positions after each poll that returned
records, made at the next poll: once the driver has written the records) and ``revoke`` (a
synchronous commit of the revoked partitions' positions in the revoke callback, before it gives
them up), and one fault for ``<member>`` alone:

* ``skip``: drops the first record at offset 1 that member's poll returns — it never
  reaches the application (``skipped``);
* ``late-commit``: commits the revoked partitions' positions after the revoke callback
  returned, once its next assignment is applied (``commit-unowned``);
* ``seek-past``: on its first assignment of partitions with a committed offset, starts
  each of them one past it (``start-later``);
* ``correct``: no fault (the same story then holds I17).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's groupcheck

from groupcheck.targets.wire.drivers.host import Listener, ThreadedHost, serve  # noqa: E402
from groupcheck.targets.wire.drivers.librdkafka_member import LibrdkafkaClient  # noqa: E402
from groupcheck.targets.wire.drivers.messages import Command, Hello  # noqa: E402

FAULTS = ("skip", "late-commit", "seek-past", "correct")


class WrongClient(LibrdkafkaClient):
    """`LibrdkafkaClient` with commit styles and one fault for one member."""

    def __init__(self, fault: str, member: str) -> None:
        super().__init__()
        self.fault, self.member = fault, member
        self.styles: dict[int, str] = {}
        self.faulty: dict[int, bool] = {}
        self.pending: dict[int, list[Any]] = {}  # late-commit: positions taken at a revoke
        self.uncommitted: set[int] = set()  # sync: consumers whose last poll returned records
        self.dropped = False  # the fault happened (skip, seek-past: once)

    def hello(self) -> Hello:
        return {**super().hello(), "commit_styles": ["none", "sync", "revoke"]}

    def create(self, command: Command, listener: Listener) -> Any:
        self._next = (str((command.get("config") or {}).get("commit_style", "none")),
                      command["member"] == self.member)
        return super().create(command, listener)

    def subscribe(self, consumer: Any, topics: list[str], listener: Listener) -> None:
        if id(consumer) not in self.styles:
            self.styles[id(consumer)], self.faulty[id(consumer)] = self._next

        def on_assign(c: Any, ps: list[Any]) -> None:
            listener.callback("assigned", _tps(ps), lambda: c.assign(self._starts(c, ps)))

        def on_revoke(c: Any, ps: list[Any]) -> None:
            taken = [p for p in c.position(ps) if p.offset >= 0] if ps else []
            if self.styles[id(c)] == "revoke" and taken:
                c.commit(offsets=taken, asynchronous=False)
            if self._wrong(c, "late-commit") and taken:
                self.pending[id(c)] = taken
            listener.callback("revoked", _tps(ps), c.unassign)

        consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke)

    def _wrong(self, consumer: Any, fault: str) -> bool:
        return self.faulty[id(consumer)] and self.fault == fault

    def _starts(self, consumer: Any, ps: list[Any]) -> list[Any]:
        if not (self._wrong(consumer, "seek-past") and ps) or self.dropped:
            return ps
        committed = consumer.committed(ps, timeout=10)
        self.dropped = any(p.offset >= 0 for p in committed)  # once
        return [_past(p) for p in committed] if self.dropped else ps

    def poll(self, consumer: Any) -> list[Any]:
        if id(consumer) in self.uncommitted and consumer.assignment():
            self.uncommitted.discard(id(consumer))
            consumer.commit(asynchronous=False)
        records = super().poll(consumer)
        if self.pending.get(id(consumer)) and consumer.assignment():
            consumer.commit(offsets=self.pending.pop(id(consumer)), asynchronous=False)
        if records and self._wrong(consumer, "skip") and not self.dropped \
                and records[0][2] == 1:
            self.dropped = True
            return []
        if records and self.styles[id(consumer)] == "sync":
            self.uncommitted.add(id(consumer))
        return records


def _tps(parts: list[Any]) -> list[tuple[str, int]]:
    return sorted((p.topic, p.partition) for p in parts)


def _past(partition: Any) -> Any:
    """One past the committed offset, where there is one."""
    if partition.offset >= 0:
        partition.offset += 1
    return partition


def main() -> None:
    fault, member = sys.argv[1], sys.argv[2]
    if fault not in FAULTS:
        raise SystemExit(f"wrong_member: fault {fault!r}; one of {', '.join(FAULTS)}")
    serve(ThreadedHost(WrongClient(fault, member)).handle)


if __name__ == "__main__":
    main()
