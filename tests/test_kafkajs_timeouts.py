"""KafkaJS's request timeouts as `targets.wire.timeouts` models them, on real KafkaJS against
groupcheck's broker, a Heartbeat answer held 3 s: KafkaJS 2 gives it up at its 1 s
``requestTimeout`` (its REQUEST_TIMEOUT event; the answer, when it comes, matches nothing);
KafkaJS 1.16.0 enforces no request timeout by default (``enforceRequestTimeout`` is off), so
it waits the answer out, and its delay points are not applicable."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("kio", reason="groupcheck's broker needs kio")

from groupcheck.broker import Broker  # noqa: E402
from groupcheck.targets.wire import release_envs  # noqa: E402
from groupcheck.targets.wire.drivers import kafkajs_member  # noqa: E402
from groupcheck.targets.wire.timeouts import past_request_timeout, request_timeout_ms  # noqa: E402

pytestmark = [pytest.mark.wire, pytest.mark.broker_config(topics={"t": 2})]

SCRIPT = Path(__file__).parent / "targets" / "kafkajs_one_member.js"
TIMEOUT_MS = 1000
CONFIG = {"request_timeout_ms": TIMEOUT_MS, "session_timeout_ms": 6000}
UNMATCHED = "Response without match"  # KafkaJS's warning: an answer to a request given up


class Member:
    """The script's one consumer (client id ``a``) and the JSON lines it printed."""

    def __init__(self, modules: Path, bootstrap: str) -> None:
        self.lines: list[dict[str, object]] = []
        self.process = subprocess.Popen(
            ["env", f"NODE_PATH={modules}", "node", str(SCRIPT), bootstrap, str(TIMEOUT_MS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(json.loads(line))

    def joined(self, seconds: float = 30.0) -> None:
        until = time.monotonic() + seconds
        while not any("joined" in line for line in self.lines):
            assert time.monotonic() < until and self.process.poll() is None, self.lines
            time.sleep(0.05)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _held_heartbeat(broker: Broker, modules: Path, delay: float) -> list[dict[str, object]]:
    """What the member printed until a second after its Heartbeat answer, held ``delay``
    seconds, was sent."""
    member = Member(modules, broker.bootstrap)
    try:
        member.joined()
        broker.delay("a", "Heartbeat", delay)
        until = time.monotonic() + delay + 15  # KafkaJS heartbeats between fetches (5 s)
        while not any(e.steering and e.answered_ms is not None for e in broker.exchanges()):
            assert time.monotonic() < until, "the held Heartbeat was never answered"
            time.sleep(0.05)
        time.sleep(1.0)
        return list(member.lines)
    finally:
        member.close()


def test_kafkajs_gives_a_held_heartbeat_up_at_its_request_timeout(broker: Broker) -> None:
    if kafkajs_member.missing():
        pytest.skip(kafkajs_member.missing())
    assert request_timeout_ms("kafkajs", CONFIG, "Heartbeat") == TIMEOUT_MS
    assert request_timeout_ms("kafkajs@2.2.4", {**CONFIG, "max_poll_interval_ms": 3000},
                              "JoinGroup") == 8000  # its rebalance timeout and 5 s
    delay = past_request_timeout("kafkajs", CONFIG, "Heartbeat", margin_s=2.0)
    lines = _held_heartbeat(broker, kafkajs_member.install() / "node_modules", delay)
    given_up = [line for line in lines if line.get("timeout") == "Heartbeat"]
    assert given_up, lines
    waited = given_up[0]["waited"]
    assert isinstance(waited, int) and TIMEOUT_MS <= waited < delay * 1000, lines
    assert any(line.get("message") == UNMATCHED for line in lines), lines


def test_kafkajs_1_16_0_waits_a_held_heartbeat_out(broker: Broker) -> None:
    reason = release_envs.missing("kafkajs@1.16.0")
    if reason:
        pytest.skip(reason)
    env = release_envs.cached("kafkajs@1.16.0")
    assert env is not None
    with pytest.raises(ValueError, match="enforces no request timeout"):
        request_timeout_ms("kafkajs@1.16.0", CONFIG, "Heartbeat")
    lines = _held_heartbeat(broker, env.folder / "node_modules", 3.0)
    assert not any("timeout" in line for line in lines), lines
    assert not any(line.get("message") == UNMATCHED for line in lines), lines
