"""The broker fuzzer's witnesses: the broker as a child process, and a live group of three
members the hostile frames must not disturb.

What lives here: `BrokerChild` (``groupcheck broker`` in a subprocess; its stdout and stderr read
on threads, counting tracebacks, unhandled exceptions and ``internal error`` lines; its RSS
from /proc) and `LiveGroup` (three members on groupcheck's own wire client: JoinGroup, SyncGroup,
then a heartbeat each every 500 ms on a thread; `check` heartbeats all three at once).

Theory of operation: the group forms in one round — the broker delays the first
rebalance by 300 ms (``--initial-rebalance-delay-ms``), the three JoinGroups (KIP-394's
member id first) go out back to back and are answered together at generation 1; the
followers' SyncGroups are sent before the leader's. From then on every heartbeat carries
that generation: an answer other than 0 means the group rebalanced (REBALANCE_IN_PROGRESS,
ILLEGAL_GENERATION) or a member was lost (UNKNOWN_MEMBER_ID) — the generation moved.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from groupcheck.broker.client import KafkaConnection

__all__ = ["GROUP", "BrokerChild", "LiveGroup"]

GROUP = "live"
_JOIN, _SYNC, _HEARTBEAT = 5, 3, 3
_MARKS = ("Traceback", "Unhandled exception", "internal error")


class BrokerChild:
    """``python -m groupcheck broker`` on a free loopback port, until `stop`."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "groupcheck", "broker", "--port", "0", "--quiet",
             "--no-auto-create", "--topic", "fz-topic:1", "--topic", "live-topic:3",
             "--min-session-timeout-ms", "100", "--initial-rebalance-delay-ms", "300"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=Path(__file__).resolve().parent.parent)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().split()
        if first[:1] != ["bootstrap"]:
            raise RuntimeError(f"the broker did not start: {first}")
        self.bootstrap = first[1]
        self.lines = self.verdicts = 0
        self.bad: list[str] = []  # the first lines with a traceback or an internal error
        # Both pipes are read all along: a full pipe would stop the broker in a print.
        self._readers = [threading.Thread(target=self._drain, daemon=True),
                         threading.Thread(target=self._drain_out, daemon=True)]
        for reader in self._readers:
            reader.start()

    def _drain_out(self) -> None:
        """stdout: with --quiet, a VIOLATION line per broker-side verdict that fails (the
        hostile group requests break the group rules the broker judges)."""
        assert self.proc.stdout is not None
        for _ in self.proc.stdout:
            self.verdicts += 1

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines += 1
            if any(mark in line for mark in _MARKS) and len(self.bad) < 20:
                self.bad.append(line.rstrip())

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS for the broker")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        for reader in self._readers:
            reader.join(timeout=10)


class LiveGroup:
    """Three members of group ``live``, kept alive by heartbeats until `close`."""

    def __init__(self, bootstrap: str) -> None:
        self.members = [KafkaConnection(bootstrap, f"live-{i}", timeout=10) for i in range(3)]
        self.ids: list[str] = []
        self.generation = -1
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._form()
        self._keeper = threading.Thread(target=self._keep, daemon=True)
        self._keeper.start()

    def _join(self, member: KafkaConnection, member_id: str) -> None:
        member.send(11, _JOIN, {"group_id": GROUP, "session_timeout": 10_000,
                                "rebalance_timeout": 10_000, "member_id": member_id,
                                "protocol_type": "consumer", "group_instance_id": None,
                                "protocols": [{"name": "range", "metadata": b"\x00\x01"}]})

    def _form(self) -> None:
        for m in self.members:
            self._join(m, "")
        self.ids = [str(m.receive().member_id) for m in self.members]
        for m, member_id in zip(self.members, self.ids, strict=True):
            self._join(m, member_id)
        answers = [m.receive() for m in self.members]
        if any(int(a.error_code) for a in answers):
            raise RuntimeError(f"the live group did not form: {answers}")
        self.generation = int(answers[0].generation_id)
        leader = str(answers[0].leader)
        order = sorted(range(3), key=lambda i: self.ids[i] == leader)  # the leader last
        for i in order:
            plan = [{"member_id": mid, "assignment": b""} for mid in self.ids] \
                if self.ids[i] == leader else []
            self.members[i].send(14, _SYNC, {
                "group_id": GROUP, "generation_id": self.generation, "member_id": self.ids[i],
                "group_instance_id": None, "assignments": plan})
        synced = [self.members[i].receive() for i in order]
        if any(int(a.error_code) for a in synced):
            raise RuntimeError(f"the live group did not sync: {synced}")

    def heartbeat(self) -> list[str]:
        """Heartbeat every member now; what went wrong (nothing: each answered 0)."""
        wrong = []
        with self._lock:
            for m, member_id in zip(self.members, self.ids, strict=True):
                try:
                    answer: Any = m.call(12, _HEARTBEAT, {
                        "group_id": GROUP, "generation_id": self.generation,
                        "member_id": member_id, "group_instance_id": None})
                    code = int(answer.error_code)
                except (OSError, ConnectionError) as e:
                    wrong.append(f"{member_id}: heartbeat failed: {e}")
                    continue
                if code:
                    wrong.append(f"{member_id}: heartbeat at generation {self.generation} "
                                 f"answered error {code}")
        return wrong

    def _keep(self) -> None:
        while not self._stop.wait(0.5):
            self.failures += self.heartbeat()

    def close(self) -> None:
        self._stop.set()
        self._keeper.join(timeout=10)
        for m in self.members:
            m.close()
