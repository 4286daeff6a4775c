"""The wire findings under findings/, and whether a violation is one of them: a long or
random run of real clients passes a violation only when a recorded finding of the same client
has the same text but for names and numbers."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from groupcheck.targets.wire.silence import silent_after_sync

from helpers import ROOT

FINDINGS = ROOT / "findings"
WIRE_FINDINGS = sorted(p for p in FINDINGS.glob("*.json")
                       if str(json.loads(p.read_text()).get("target", "")).startswith(
                           ("librdkafka:", "wire:")))


def _shape(violation: str) -> str:
    """A violation without its names and numbers: what a finding's text and a new run's
    text share when they are the same finding. The fault engine numbers its point's
    members and topic (``c1-72``, ``t0-72``, partition ``t0-72-1``) as a story does not; a
    delivery story names its members after their commit styles (``m-none``); a member id is
    a coordinator's draw; I16 judges an error whatever API it answered."""
    text = re.sub(r"\[[^\]]*\]", "[…]", violation.split(": ", 1)[-1])
    text = re.sub(r"\S+-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", "_", text)  # member ids
    if violation.startswith("I16:"):  # a client keeps or drops its id per error, on any API
        text = re.sub(r" on [A-Za-z]+;", " on _;", text)
    text = re.sub(r"t\d+(?:-\d+)+(, t\d+(?:-\d+)+)*", "…", text)
    text = re.sub(r"\bm-[a-z]+\b", "_", text)  # a member named for its commit style
    return re.sub(r"\b(c\d+(?:-\d+)?|\d+)\b", "_", text)


def _clients(target: str) -> frozenset[str]:
    """The clients a finding's target plays: ``wire:mixed:a+b:…`` each of its clients,
    ``wire:<client>:…`` that client, ``librdkafka:…`` librdkafka."""
    if not target.startswith("wire:"):
        return frozenset({"librdkafka"})
    client, spec = target.split(":")[1:3]
    return frozenset(spec.split("+") if client == "mixed" else (client,))


#: (the clients a recorded wire finding played, the shape of a violation it lists). I11's
#: "not settled" says little of its cause: it passes as known only for kafka-python, whose
#: finding (a join answered without error that it never finishes) is exactly that, and
#: shows on plain joins too, more often on a loaded machine, in whichever words the
#: settle's bound gives
KNOWN = {(_clients(str(d["target"])), _shape(v))
         for d in (json.loads(p.read_text()) for p in WIRE_FINDINGS)
         for v in d["violations"] if not v.startswith("I11:")
         } | {(frozenset({"kafka-python"}), "I11")}


#: kafka-python's hang after a SyncGroup answer, on a plain join too (`silence`)
KAFKA_PYTHON_HANG = "findings/wire-kafka-python-range-subscription-change-I11.json"


def heartbeated(exchanges: Any) -> set[str]:
    """The client ids in a broker's log with a Heartbeat answered without error: members that
    completed a generation on their side."""
    return {e.who.client_id for e in exchanges if e.api == "Heartbeat" and e.error_code == 0
            and e.answered_ms is not None}


def silent_story(exchanges: Any, quiet_ms: int) -> list[str]:
    """The members of a broker's log silent since their SyncGroup answer until now, in
    words."""
    return [f"{who} sent nothing since its SyncGroup answer of generation {g}"
            for who, g in silent_after_sync(exchanges, quiet_ms, time.monotonic_ns()).items()]


def kafka_python_hang(silent: list[str], clients: set[str]) -> str | None:
    """A run that failed only because a kafka-python member never finished a join it was
    answered (``silent``: the members that fell silent after their SyncGroup answer) is that
    finding, reproduced: the reason a test expects it, or None."""
    if silent and clients == {"kafka-python"}:
        return f"kafka-python's recorded hang ({KAFKA_PYTHON_HANG}): " + "; ".join(silent)
    return None


def expect_kafka_python_hang(silent: list[str], clients: set[str]) -> None:
    """Expect (xfail, naming the finding) kafka-python's hang when the run shows it."""
    reason = kafka_python_hang(silent, clients)
    if reason is not None:
        pytest.xfail(reason)


#: what a wire group's story says of a member that never finished a join it was answered
#: (`settle.stalled`): kafka-python's recorded hang
HANG = "sent its coordinator nothing since its SyncGroup answer"


def expect_kafka_python_hang_in(story: list[str], violations: list[str],
                                clients: set[str]) -> None:
    """Expect (xfail, naming the finding) kafka-python's hang when a played story's only
    violations are I11 and its lines show members silent since their SyncGroup answer."""
    if violations and all(v.startswith("I11:") for v in violations):
        expect_kafka_python_hang(list(dict.fromkeys(
            line.strip() for line in story if HANG in line)), clients)


#: kafka-python's dropped joins: a join that finished outside ``poll`` is thrown away
KAFKA_PYTHON_DROPPED_JOIN = ("tests/test_wire_kafka_python_rejoin.py (kafka-python drops a "
                             "join that finished between polls)")
#: a leader may rejoin once after a metadata change; more than this is the storm
DROPPED_JOINS = 3


def kafka_python_dropped_join(dropped: dict[str, int], clients: set[str]) -> str | None:
    """A run of kafka-python members one of which rejoined unprompted after its SyncGroup
    answer ``DROPPED_JOINS`` times or more (``dropped``: `silence.rejoined_after_sync`) is
    that finding, reproduced: the reason a test expects it, or None. Callers ask only for a
    run that did not end healthy: a storm that passed leaves the test to judge."""
    storm = {who: n for who, n in dropped.items() if n >= DROPPED_JOINS}
    if storm and clients == {"kafka-python"}:
        return (f"kafka-python's dropped joins ({KAFKA_PYTHON_DROPPED_JOIN}): "
                + "; ".join(f"{who} rejoined {n} times right after its SyncGroup answer"
                            for who, n in sorted(storm.items())))
    return None


def unknown(clients: tuple[str, ...], violations: list[str]) -> list[str]:
    """The violations no recorded finding accounts for whose clients all play here (a
    mixed group's finding needs each of its clients: which of them caused it is its file's
    note)."""
    here = set(clients)
    return [v for v in violations if not any(
        shape in (_shape(v), v.split(":", 1)[0]) and played <= here for played, shape in KNOWN)]
