"""Many clients on groupcheck's broker, the long runs (``tox -e wire``): fifty consumers of four
clients in one group, on range and on cooperative-sticky; twenty groups at once on one broker;
members SIGKILLed at seeded moments; and a real driver killed behind the harness's back. Every
group is judged by the model as any wire run is; a violation passes only when a recorded
finding of one of the group's clients accounts for it (tests/helpers/wire_findings.py). Each
scenario takes about ten seconds of real clients (the drivers of the big groups are shared: one
process per client)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from groupcheck.engines.many_clients import (
    COOPERATIVE_CLIENTS,
    RANGE_CLIENTS,
    ScenarioResult,
    run,
    scenarios,
    settle_bound,
)
from groupcheck.model.event_shrink import invariant_of
from groupcheck.properties.group import CallbackRecord, MemberSpec
from groupcheck.targets.registry import client_setup
from groupcheck.targets.wire.driver_process import DriverError
from groupcheck.targets.wire.wire_group import CONFIG, STEP_WAIT, WireGroup

from helpers.environment import SETTINGS, missing
from helpers.wire_findings import unknown

#: minutes of real clients: run by ``tox -e wire`` (``pytest -m wire``), not by default
pytestmark = [pytest.mark.wire, pytest.mark.slow]
pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")

SEED = 0
#: how soon a driver killed behind the harness's back must end the run: a few of the
#: group's ticks, with room for a loaded machine, far inside STEP_WAIT
NOTICED_WITHIN = 5.0


def needs(*clients: str) -> None:
    for client in clients:
        if missing(client):
            pytest.skip(missing(client))


def kafkajs_never_told(clients: tuple[str, ...], verdict: str) -> bool:
    """KafkaJS never tells its application that a partition went away (its recorded I1
    finding, and the idle eviction tested last here): in a group of KafkaJS alone, a
    handover reads as two owners (I1) and a partition handed back as assigned twice (I7)."""
    return set(clients) == {"kafkajs"} and invariant_of(verdict) in ("I1", "I7")


def judged(result: ScenarioResult) -> None:
    """Every group ended with a verdict: it held, or what broke is a finding of one of its
    clients (recorded, or KafkaJS's idle eviction), never a harness error; every settle that
    ended kept within the bound the protocol's timeouts give."""
    for g in result.groups:
        assert not g.verdict.startswith("error"), g.verdict
        if g.verdict != "holds" and not kafkajs_never_told(g.clients, g.plain):
            assert not unknown(g.clients, [g.plain]), (g.group, g.verdict, g.replay)
    assert all(s <= settle_bound() for s in result.settles("kill")), result.settles("kill")
    assert sum(result.requests.values()) > 0


def test_fifty_consumers_of_four_clients_settle_in_one_range_group(tmp_path) -> None:  # type: ignore[no-untyped-def]
    needs(*RANGE_CLIENTS)
    result = run(scenarios(SEED)["one-group-range"], SETTINGS, tmp_path)
    judged(result)
    [group] = result.groups
    assert len(group.clients) == 50 and set(group.clients) == set(RANGE_CLIENTS)
    assert group.verdict != "holds" or group.join_settles  # a held run timed its settle


def test_fifty_consumers_settle_in_one_cooperative_sticky_group(tmp_path) -> None:  # type: ignore[no-untyped-def]
    needs(*COOPERATIVE_CLIENTS)
    result = run(scenarios(SEED)["one-group-cooperative"], SETTINGS, tmp_path)
    judged(result)
    [group] = result.groups
    assert group.verdict == "holds", (group.verdict, group.replay)


def test_twenty_groups_at_once_on_one_broker_each_judged_on_its_own(tmp_path) -> None:  # type: ignore[no-untyped-def]
    needs(*RANGE_CLIENTS, "kafkajs")
    result = run(scenarios(SEED)["many-groups"], SETTINGS, tmp_path)
    judged(result)
    assert len(result.groups) == 20
    kafkajs = [g for g in result.groups if set(g.clients) == {"kafkajs"}]
    assert len(kafkajs) == 4
    # KafkaJS has no revoke or lost callback: once a partition moves, its groups show I1
    # (a finding), or I7 where a member sat idle long enough to be evicted first
    assert all(kafkajs_never_told(g.clients, g.verdict) for g in kafkajs), \
        [g.verdict for g in kafkajs]
    held = [g for g in result.groups if g.verdict == "holds"]
    assert len(held) >= 12, result.verdict()  # the mixed groups, but for a finding now and then


def test_members_sigkilled_at_seeded_moments_leave_every_group_with_a_verdict(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two members of each of four groups are SIGKILLed (their drivers, each alone in a
    process) among the joins or once the group settled; the group sees each at the session
    timeout and settles without it, within the bound."""
    needs(*RANGE_CLIENTS)
    began = time.monotonic()
    result = run(scenarios(SEED)["sigkill"], SETTINGS, tmp_path)
    judged(result)
    settles = len(result.settles("join")) + len(result.settles("kill"))
    assert settles >= len(result.groups)
    # each settle bounded, each join and crash a command: the run cannot take longer
    assert time.monotonic() - began < settles * settle_bound() + 60


def test_a_real_driver_killed_behind_the_harness_s_back_ends_the_run_at_once() -> None:
    """A Java member's JVM is SIGKILLed while the group rebalances for a librdkafka join; the
    harness notices the dead driver at its pipe's EOF and ends the step with a driver error,
    instead of waiting STEP_WAIT for a group that cannot settle."""
    needs("java", "librdkafka")
    classpath = client_setup("java", SETTINGS)[0]
    group = WireGroup("wire:mixed:java+librdkafka:range", ("java", "librdkafka"), "range",
                      classpaths={"java": classpath})
    spec = MemberSpec(topics=("t0",), assignors=("range",))
    try:
        _first_member_settled(group, spec, 4)
        group.join("c2", spec)
        jvm = group.members["c1"].driver
        threading.Timer(0.2, os.killpg, (jvm.proc.pid, signal.SIGKILL)).start()
        began = time.monotonic()
        with pytest.raises(DriverError, match="died under c1"):
            while group.step():
                pass
        assert time.monotonic() - began < min(NOTICED_WITHIN, STEP_WAIT)
    finally:
        group.close()


def test_finding_an_idle_kafkajs_member_outlives_its_session_and_is_never_told() -> None:
    """KafkaJS heartbeats from its fetch loop, between fetches, and a fetch waits up to its
    ``maxWaitTimeInMs`` (5 s by default): a member that sits idle for longer than the
    session timeout (2 s here) is evicted, rejoins under a new member id and is handed the
    same partitions — and its application hears nothing in between (no lost callback), so
    it is "assigned what it already owned" (I7). Seen first in the twenty groups run on a
    loaded machine, where a KafkaJS group's second member took seconds to start; the replay
    file is findings/wire-kafkajs-roundrobin-idle-I7.json."""
    needs("kafkajs")
    group = WireGroup("wire:kafkajs:roundrobin", ("kafkajs",), "roundrobin")
    spec = MemberSpec(topics=("t0",), assignors=("roundrobin",))
    try:
        _first_member_settled(group, spec, 2)
        first = group.view()
        time.sleep(3 * int(CONFIG["session_timeout_ms"]) / 1000)  # idle, as a quiet topic is
        assigned: list[CallbackRecord] = []
        deadline = time.monotonic() + STEP_WAIT
        while not assigned and time.monotonic() < deadline and group.step():
            assigned = [cb for cb in group.view().callbacks if cb.member == "c1"]
            time.sleep(0.05)
    finally:
        group.close()
    assert first.members["c1"].owned == {("t0", 0), ("t0", 1)}
    assert assigned and assigned[0].kind == "assigned"  # again, with no lost before it
    again = assigned[0]
    assert set(again.partitions) & set(again.owned_before)  # what it already owned
    assert again.member_id != first.members["c1"].member_id  # a new member: it was evicted


def _first_member_settled(group: WireGroup, spec: MemberSpec, partitions: int) -> None:
    """t0 with ``partitions`` partitions, c1 joined, and the group settled (bounded: a step
    that finds nothing ends the wait)."""
    group.set_partitions("t0", partitions)
    group.join("c1", spec)
    while group.view().settled is False and group.step():
        pass
