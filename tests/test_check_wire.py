"""``groupcheck check --target wire:<client>:<assignor>``: the whole battery on real clients.

A wire target has a group and nothing else (no assign function, no codec of its own), so
``check`` runs the state machine on it within the budget and says why the other engines did
not run. The default run checks one client end to end on groupcheck's broker; ``tox -e
wire`` checks every shipped client with every assignor it offers, on both backends: a run
passes when it ends (exit 0 or 1, never a usage error), the state machine ran examples, and
every violation it reports is one a recorded wire finding of that client accounts for.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the default wire backend) needs kio")

from groupcheck.targets.wire.clients import hello  # noqa: E402

from helpers.environment import CLASSPATH, missing  # noqa: E402
from helpers.wire_findings import unknown  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = ("librdkafka", "kafka-python", "aiokafka", "java", "kafkajs")
pytestmark = pytest.mark.wire


def check(target: str, tmp_path: Path, broker: str = "groupcheck",
          budget: float = 20) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "groupcheck", "check", "--target", target, "--budget",
         str(budget), "--broker", broker, "--json", "--failures", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.returncode, json.loads(done.stdout)


def violations_of(result: dict[str, Any]) -> list[str]:
    return [v["violation"] for a in result["assignors"].values()
            for e in a["engines"].values() for v in e["violations"].values()]


def test_check_runs_the_state_machine_on_real_librdkafka_consumers_on_the_broker(
        tmp_path: Path) -> None:
    """A wire target gets the state machine within the budget; the engines that need an
    assign function say so instead of passing silently."""
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    code, result = check("wire:librdkafka:cooperative-sticky", tmp_path)
    (assignor,) = result["assignors"].values()
    engines = assignor["engines"]
    assert engines["fuzz"]["runs"] > 0 and engines["fuzz"]["verdicts"]["I1"] != "-"
    assert engines["prove"]["skipped"] == engines["scenarios"]["skipped"] == \
        "no assign function"
    assert code == (1 if violations_of(result) else 0)
    assert unknown(("librdkafka",), violations_of(result)) == []


def _cases() -> list[Any]:
    """Every client × Kafka's four assignor names × both backends (a client that does not
    offer an assignor is skipped at run time: asking its driver costs a process)."""
    return [pytest.param(client, assignor, broker, id=f"{client}-{assignor}-{broker}")
            for client in CLIENTS
            for assignor in ("range", "roundrobin", "sticky", "cooperative-sticky")
            for broker in ("groupcheck", "mock")]


@pytest.mark.slow  # minutes of real clients (tox -e wire)
@pytest.mark.parametrize(("client", "assignor", "broker"), _cases())
def test_check_runs_on_every_client_and_assignor_on_both_backends(
        client: str, assignor: str, broker: str, tmp_path: Path) -> None:
    if missing(client):
        pytest.skip(missing(client))
    if assignor not in hello(client, CLASSPATH).assignors:
        pytest.skip(f"{client} does not offer {assignor}")
    code, result = check(f"wire:{client}:{assignor}", tmp_path, broker, budget=60)
    (checked,) = result["assignors"].values()
    assert checked["engines"]["fuzz"]["runs"] > 0
    assert unknown((client,), violations_of(result)) == []
