"""Steering aimed at one member on groupcheck's broker (the default wire backend), and the
mock's group-wide stand-ins.

On the broker an injected error, a late answer and the order of the SyncGroup answers reach
the member they name and no other; the state machine gets those rules only where the
backend can aim them. After each rebalance the wire layer reads the group with a real
DescribeGroups and judges those bytes. None of the mock's defect handling is active on the
broker, even for Kafka's Java client, which meets most of the mock's defects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from groupcheck.model.event_types import Leave
from groupcheck.model.events import apply_event
from groupcheck.model.group_events import Delay, Settle, SyncAnswerOrder
from groupcheck.model.spec import ReferenceModel
from groupcheck.targets import registry

from helpers.environment import missing, on_broker, resolve
from helpers.wire_cases import join, topics

pytest.importorskip("kio")
pytestmark = pytest.mark.skipif(bool(missing("librdkafka")), reason=missing("librdkafka"))


def _group(target: str, broker: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    resolved = resolve(target, settings=on_broker(broker))
    assert resolved.group is not None
    return resolved.group()


def _play(group: Any, events: list[dict[str, Any]],
          model: ReferenceModel | None = None) -> list[str]:
    """The events on the group, judged by ``model`` (a fresh one when none is given)."""
    model = model or ReferenceModel()
    found: list[str] = []
    for event in events:
        found += apply_event(event, group, model)
    return found


def _wait_for(found: Callable[[], list[Any]], timeout: float = 20.0) -> list[Any]:
    deadline = time.monotonic() + timeout
    while not (items := found()):
        assert time.monotonic() < deadline, "the broker never saw it"
        time.sleep(0.05)
    return items


def test_the_state_machine_aims_delays_and_orders_only_where_the_backend_can(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from groupcheck.engines.battery.runner import machine_config

    on_ours = machine_config(resolve("librdkafka:range", settings=on_broker("groupcheck")))
    on_mock = machine_config(resolve("librdkafka:range", settings=on_broker("mock")))
    assert on_ours.faults and on_ours.delays and on_ours.sync_orders
    assert on_mock.faults and not on_mock.delays and not on_mock.sync_orders
    assert registry.resolve("wire:librdkafka:range").hints.steering  # type: ignore[union-attr]


def test_a_late_answer_aimed_at_one_member_reaches_that_member_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group("librdkafka:range", "groupcheck", monkeypatch)
    broker = group.backend.broker
    model = ReferenceModel()
    try:
        found = _play(group, [*topics(), join("c1", "range"), join("c2", "range"),
                              Settle(), Delay("c2", "heartbeat", 800)],
                      model)
        late = _wait_for(lambda: [e for e in broker.exchanges() if e.steering
                                  and e.answered_ms is not None])
        found += _play(group, [Settle()], model)
    finally:
        group.close()
    assert found == []
    assert [(e.who.client_id, e.api) for e in late] == [("c2", "Heartbeat")]
    assert late[0].answered_ms - late[0].received_ms >= 800


@pytest.mark.parametrize("leader_first", [True, False])
def test_sync_answers_go_out_in_the_order_the_machine_chose_and_the_group_settles(
        leader_first: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """c1 leads (it joined first); the ordering names c2: the next rebalance (c3 joins)
    answers the leader's SyncGroup before or after c2's, and every invariant holds."""
    group = _group("librdkafka:range", "groupcheck", monkeypatch)
    try:
        found = _play(group, [*topics(), join("c1", "range"), Settle(),
                              join("c2", "range"), Settle(), SyncAnswerOrder("c2", leader_first),
                              join("c3", "range"), Settle()])
        ordering = group.backend.orderings[0]
        ordering.join(timeout=30)
        rounds = group.backend.rounds()
    finally:
        group.close()
    assert found == []
    leader = rounds[-1].names[rounds[-1].leader]
    released = ordering.released
    assert set(released) >= {"c2", leader} and leader != "c2"
    assert (released.index(leader) < released.index("c2")) == leader_first


def test_each_rebalance_is_judged_on_the_group_as_describe_groups_gives_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On the broker the wire layer asks DescribeGroups after each completed generation;
    on the mock (no DescribeGroups) the recording proxy's rounds stand in."""
    events = [*topics(), join("c1", "range"), Settle(), join("c2", "range"), Settle(),
              Leave("c1"), Settle()]
    counts = {}
    for broker in ("groupcheck", "mock"):
        group = _group("librdkafka:range", broker, monkeypatch)
        try:
            assert _play(group, events) == []
        finally:
            group.close()
        counts[broker] = (group.described, len(group.shown_rounds))
    described, shown = counts["groupcheck"]
    assert shown >= 3 and described >= 1
    assert counts["mock"][0] == 0


def test_the_mock_aims_at_no_one_and_cannot_order(monkeypatch: pytest.MonkeyPatch) -> None:
    group = _group("librdkafka:range", "mock", monkeypatch)
    try:
        assert group.backend.aims_errors_at_members is False
        with pytest.raises(ValueError, match="sync-order"):
            group.order_sync_answers("c1", True)
        found = _play(group, [*topics(), join("c1", "range"), Settle(),
                              Delay("c1", "heartbeat", 300), join("c2", "range"), Settle()])
    finally:
        group.close()
    assert found == []


SNIFF = """
import json, os, sys
from groupcheck.model.events import apply_event, read_events
from groupcheck.model.spec import ReferenceModel
from groupcheck.targets.registry import resolve
from groupcheck.targets.settings import Settings
group = resolve(sys.argv[1], settings=Settings.from_environ(os.environ)).group()
model = ReferenceModel()
found = []
for event in read_events([{"op": "partitions", "topic": "t0", "count": 3},
              {"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["range"]},
              {"op": "join", "member": "c2", "topics": ["t0"], "assignors": ["range"]},
              {"op": "settle"}]):
    found += apply_event(event, group, model)
backend = group.backend
joins = sorted({e.api_version for e in backend.broker.exchanges() if e.api == "JoinGroup"})
direct = backend.bootstrap == backend.broker.bootstrap
group.close()
print(json.dumps({"found": found, "direct": direct,
                  "joins": joins, "loaded": sorted(
                      m for m in sys.modules
                      if m.startswith("groupcheck.targets.wire.backends."))}))
"""


@pytest.mark.skipif(bool(missing("java")), reason=missing("java") or "java")
def test_no_mock_defect_handling_is_active_on_the_broker_even_for_java() -> None:
    """Kafka's Java consumer meets four of the mock's defects; on the broker it talks to the
    coordinator directly (no proxy), at the flexible JoinGroup versions the mock cannot
    parse, and nothing of the mock's handling (wire_mock, wire_proxy, the mock) is loaded."""
    from groupcheck.targets.wire.backends.mock import MOCK_PARSES

    done = subprocess.run([sys.executable, "-c", SNIFF, "wire:java:range"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GROUPCHECK_BROKER": "groupcheck"})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["found"] == [] and seen["direct"]
    assert "groupcheck.targets.wire.backends.groupcheck_broker" in seen["loaded"]
    assert not {"groupcheck.targets.wire.backends.mock",
                "groupcheck.targets.wire.backends.mock_proxy",
                "groupcheck.targets.wire.backends.mock_binding"} & set(seen["loaded"])
    assert max(seen["joins"]) > MOCK_PARSES[11]  # JoinGroup: flexible versions, uncapped


def test_a_generation_is_judged_on_describe_groups_only_while_it_is_the_newest() -> None:
    """DescribeGroups names no generation: a cooperative rebalance forms two generations
    with the same members, and the second's bytes must never be judged as the first's
    (they give the first's withheld partitions away, which would read as I5)."""
    from groupcheck.broker import GroupDescription, MemberDescription
    from groupcheck.targets.wire.backends.backend import GroupRound
    from groupcheck.targets.wire.described import as_described

    def round_(generation: int, assignment: bytes) -> GroupRound:
        return GroupRound(generation, "cooperative-sticky", "m1", {"m1": b"s1", "m2": b"s2"},
                          {"m1": b"a1", "m2": assignment}, {"m1": "c1", "m2": "c2"}, True)

    class TwoRoundsBackend:
        rounds_now = [round_(2, b"empty"), round_(3, b"handed-over")]

        def rounds(self) -> list[GroupRound]:
            return self.rounds_now

        def describe(self, group: str) -> GroupDescription:
            members = (MemberDescription("m1", "c1", None, b"s1", b"a1"),
                       MemberDescription("m2", "c2", None, b"s2", b"handed-over"))
            return GroupDescription(group, "Stable", -1, "consumer", "cooperative-sticky",
                                    None, members)

    errors: list[str] = []
    older, newest = TwoRoundsBackend.rounds_now
    backend: Any = TwoRoundsBackend()
    assert as_described(backend, "g", older, errors.append) == (older, False)
    judged, described = as_described(backend, "g", newest, errors.append)
    assert judged.assignments["m2"] == b"handed-over" and described and not errors


def test_a_members_repeated_error_is_shown_once_until_it_does_something_else() -> None:
    """A client that fails every poll the same way (a member the coordinator keeps refusing)
    shows its error once: the settle then waits on the clock (STEP_WAIT), not on a count of
    steps a busy client burns in a second."""
    from types import SimpleNamespace

    from groupcheck.targets.wire.log import Entry
    from groupcheck.targets.wire.shown import Shown
    from groupcheck.targets.wire.wire_group import WireGroup

    group = WireGroup.__new__(WireGroup)
    group.members = {"m1": SimpleNamespace(source=1, client=SimpleNamespace(name="java"), read={})}  # type: ignore[dict-item]
    group._said, group.shown = {}, Shown()

    def entry(kind: str, text: str = "") -> Entry:
        return Entry(0, 0, "m1", 1, kind, (("t0", 0),), text=text)

    shown = [group._apply(e) for e in (entry("error", "refused"), entry("error", "refused"),
                                       entry("record"), entry("error", "refused"),
                                       entry("error", "other"))]
    assert shown == [True, False, True, True, True]
    assert [text for _, text in group.shown.errors] == [
        "java: refused", "java: refused", "java: other"]
