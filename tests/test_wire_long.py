"""Wire mode, the long runs (``tox -e wire``): the state machine drives real consumers of
every shipped client (and a mixed group of three) on a fresh mock cluster per example; every
finding under findings/ that names a wire target replays; the adversarial behaviours
librdkafka documents — a member past ``max.poll.interval.ms`` and a revoke callback slower
than the rebalance — are caught (an ownership overlap, I1) and reported by librdkafka
afterwards."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from groupcheck.engines.battery.runner import machine_config
from groupcheck.engines.resolving import story_settings
from groupcheck.model import saved_files
from groupcheck.model.event_shrink import invariant_of
from groupcheck.model.event_types import SlowRevoke, Stall, Wake
from groupcheck.model.events import apply_event, read_events
from groupcheck.model.fuzz import fuzz
from groupcheck.model.replay import load, replay_events, replay_file
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.group import GroupTarget
from groupcheck.targets.registry import wire_clients

from helpers.environment import make_group_target, missing, on_broker, resolve
from helpers.kafka_releases import producer_needs_native_zstd
from helpers.wire_cases import five_members, slow_revoke, stall_past_max_poll, subscription_switch
from helpers.wire_findings import WIRE_FINDINGS, expect_kafka_python_hang_in, unknown

#: minutes of real clients: run by ``tox -e wire`` (``pytest -m wire``), not by default
pytestmark = [pytest.mark.wire, pytest.mark.slow]

FINDINGS = Path(__file__).resolve().parent.parent / "findings"
#: timing-dependent findings are replayed up to this many times until their invariant shows
ATTEMPTS = 5
#: each shipped client with every assignor it supports
CLIENT_ASSIGNORS = [("librdkafka", a) for a in ("range", "roundrobin", "cooperative-sticky")] + [
    ("kafka-python", a) for a in ("range", "roundrobin", "sticky", "cooperative-sticky")] + [
    ("aiokafka", a) for a in ("range", "roundrobin", "sticky")]


def needs(*clients: str) -> None:
    for client in clients:
        if missing(client):
            pytest.skip(missing(client))


def _run_on(target: GroupTarget, events: list[dict[str, object]],
            model: ReferenceModel) -> list[str]:
    found: list[str] = []
    for event in events:
        found += apply_event(event, target, model)
    return found


#: (finding, backend) for every backend a finding says it was confirmed on: groupcheck's
#: broker for every finding that is a client's (a real coordinator's behaviour), the mock
#: where it also shows there
REPLAYS = [(p, b) for p in WIRE_FINDINGS
           for b in json.loads(p.read_text()).get("confirmed_on", ["groupcheck"])]


def test_every_wire_finding_is_confirmed_on_groupcheck_s_broker() -> None:
    assert WIRE_FINDINGS and all((p, "groupcheck") in REPLAYS for p in WIRE_FINDINGS)


@pytest.mark.parametrize("path,broker", REPLAYS, ids=lambda x: getattr(x, "name", x))
def test_finding_reproduces_on_a_fresh_cluster(path: Path, broker: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Each wire finding shows its invariant (or one its ``reproduces`` field counts: the
    other face of one moment) again on each backend it names (within a few attempts: real
    clients on real sockets do not always interleave the same way); a file whose
    ``frequency`` says its race shows only now and then is an expected failure when it
    misses, never a pass; so is a replay cut short by kafka-python's recorded hang after a
    join (findings/wire-kafka-python-range-subscription-change-I11.json), named."""
    data = load(path)
    kind, _, spec = data["target"].partition(":")
    clients = ("librdkafka",) if kind == "librdkafka" else wire_clients(spec)[0]
    needs(*clients)
    for client in clients:
        if client.startswith("java@"):
            producer_needs_native_zstd(client.removeprefix("java@"))
    counted = {data["invariant"], *data.get("reproduces", [])}
    settings = story_settings(on_broker(broker), [saved_files.read(path)])  # as `replay` does

    def shows(violations: list[str]) -> bool:
        return any(invariant_of(v) in counted for v in violations)

    seen = []
    for _ in range(ATTEMPTS):
        _, outcome = replay_file(  # past another invariant's violation to the saved one
            path, lambda t: make_group_target(t, settings), wanted=shows)
        seen.append(outcome.violations[:1])
        if shows(outcome.violations):
            return
        # the story never got to its moment: kafka-python hung after a join (its own
        # recorded finding, frequent on the mock), named as such
        expect_kafka_python_hang_in(outcome.story, outcome.violations, set(clients))
    missed = f"{path.name}: {sorted(counted)} did not show in {ATTEMPTS} replays: {seen}"
    if data.get("frequency"):  # a race the file says shows only now and then
        pytest.xfail(f"{missed}; it shows {data['frequency']}")
    pytest.fail(missed)


def test_aiokafka_sticky_consumers_of_one_process_share_their_claims() -> None:
    """The shared-state finding names the foreign claim, not only the missing generation."""
    needs("aiokafka")
    data = load(FINDINGS / "wire-aiokafka-sticky-shared-state-I6.json")
    outcome = replay_events(make_group_target(data["target"]), read_events(data["events"]))
    assert any("c2 claims t0-0, t0-1, t0-2, which its last completed generation did not "
               "give it" in v for v in outcome.violations), outcome.violations


@pytest.mark.parametrize("client,assignor", CLIENT_ASSIGNORS)
def test_five_members_settle_and_hold_on_the_coordinators_side(client: str,
                                                              assignor: str) -> None:
    """Five consumers of one client join a 10-partition topic, settling after each join;
    every generation's bytes (claims, assignment, every reader version) are judged, and the
    members own exactly what the last generation assigned. Findings about the client's own
    bytes are allowed only where a findings/ file records them."""
    needs(client)
    target = make_group_target(f"wire:{client}:{assignor}")
    model = ReferenceModel()
    try:
        found = _run_on(target, five_members(assignor), model)
    finally:
        target.close()
    assert not unknown((client,), found), found
    view = model.last_view
    assert view is not None and (view.settled or found)  # a finding stops the settle early
    assert found or len(view.members) == 5


@pytest.mark.parametrize("client,assignor", [("librdkafka", "range"),
                                             ("librdkafka", "cooperative-sticky"),
                                             ("kafka-python", "range"), ("aiokafka", "range")])
def test_normal_operation_holds_each_clients_profile(client: str, assignor: str) -> None:
    """Joins, leaves, crashes, records and injected coordinator errors on real clients; pauses
    and subscription changes are left to the findings that cover them (kafka-python keeps
    pauses, aiokafka's subscribe, kafka-python's stuck rejoin) so that anything else shows. A
    violation passes only when it is a recorded finding of this client (same text but for
    names and numbers); the machine stops at its first violation, so a run that meets a known
    finding checks less than one that does not (an expected failure naming that finding when
    it stops the machine before twelve steps)."""
    needs(client)
    target = resolve(f"wire:{client}:{assignor}")
    assert target.group is not None
    config = dataclasses.replace(machine_config(target), pauses=client == "librdkafka",
                                 subscriptions=client == "librdkafka")
    result = fuzz(target.group, config, profile="wire", max_examples=4, seed_value=1,
                  shrink_seconds=120)
    assert not unknown((client,), result.violations), (result.violations, result.events)
    if result.violations and result.steps < 12:  # stopped early at a recorded finding
        pytest.xfail(f"stopped after {result.steps} steps at a recorded finding of {client}: "
                     f"{result.violations[0]}")
    assert result.steps >= 12


def test_state_machine_runs_a_mixed_group_of_three_clients() -> None:
    """librdkafka, kafka-python and aiokafka consumers in one range group under the state
    machine: each leader decodes the others' subscriptions; nothing breaks outside the
    recorded findings (pauses and subscription changes, which they cover, are off)."""
    needs("kafka-python", "aiokafka")
    target = resolve("wire:mixed:librdkafka+kafka-python+aiokafka:range")
    assert target.group is not None
    config = dataclasses.replace(machine_config(target), pauses=False, subscriptions=False,
                                 initial_members=3)
    result = fuzz(target.group, config, profile="wire", max_examples=3, seed_value=2,
                  shrink_seconds=120)
    clients = ("librdkafka", "kafka-python", "aiokafka")
    assert not unknown(clients, result.violations), (result.violations, result.events)
    assert result.steps >= 9


@pytest.mark.parametrize("assignor", ("range", "cooperative-sticky"))
def test_member_past_max_poll_interval_overlaps_then_learns_through_on_lost(
        assignor: str) -> None:
    target = make_group_target(f"librdkafka:{assignor}:adversarial")
    model = ReferenceModel()
    try:
        found = _run_on(target, stall_past_max_poll(assignor), model)
        assert any(v.startswith("I1:") and "c2" in v for v in found), found
        apply_event(Wake("c2"), target, model)  # still overlapping
        log = target.log  # type: ignore[attr-defined]
        assert log.wait_for(lambda: any(e.member == "c2" and e.kind == "lost" and
                                        e.phase == "end" for e in log.entries), 60)
        entries = list(log.entries)
    finally:
        target.close()
    lost = next(e for e in entries if e.member == "c2" and e.kind == "lost" and e.phase == "end")
    assert lost.generation < 0 or not lost.member_id  # reported as fenced: I7 holds
    assert any(e.member == "c2" and e.kind == "error" and "maximum poll interval" in e.text
               and e.seq < lost.seq for e in entries)


def test_eager_revoke_callback_slower_than_the_rebalance_overlaps() -> None:
    """range: c1 revokes before it rejoins, so a revoke callback that sleeps past the
    rebalance timeout keeps it out of the round; the group goes on without it and c2 owns
    the partitions while c1's callback still runs."""
    target = make_group_target("librdkafka:range:adversarial")
    model = ReferenceModel()
    try:
        found = _run_on(target, slow_revoke("range"), model)
        log = target.log  # type: ignore[attr-defined]
        assert log.wait_for(lambda: any(e.member == "c1" and e.kind == "revoked" and
                                        e.phase == "end" and e.partitions
                                        for e in log.entries), 60)
        entries = list(log.entries)
    finally:
        target.close()
    assert any(v.startswith("I1:") and "c1" in v and "c2" in v for v in found), found
    revoke_end = next(e for e in entries if e.member == "c1" and e.kind == "revoked"
                      and e.phase == "end" and e.partitions)
    taken = next(e for e in entries if e.member == "c2" and e.kind == "assigned"
                 and e.phase == "end" and set(e.partitions) & set(revoke_end.partitions))
    assert taken.seq < revoke_end.seq


def test_librdkafka_cooperative_switch_is_a_finding_and_range_is_the_control() -> None:
    """Under range the subscription switch of the cooperative finding revokes and
    rebalances: nothing breaks."""
    control = replay_events(make_group_target("librdkafka:range"), subscription_switch("range"))
    assert control.violations == [], control.story


def test_same_events_without_the_adversary_hold() -> None:
    events = [e for e in slow_revoke("range") if not isinstance(e, SlowRevoke)]
    outcome = replay_events(make_group_target("librdkafka:range"), events)
    assert outcome.violations == [], outcome.story


def test_adversarial_machine_finds_the_overlap() -> None:
    """The state machine, allowed to stall members and slow revoke callbacks, finds an
    ownership overlap and shrinks it to a short story."""
    target = resolve("librdkafka:range:adversarial")
    assert target.group is not None
    result = fuzz(target.group, machine_config(target), profile="wire", max_examples=10,
                  seed_value=0, shrink_seconds=180)
    assert result.failed and result.violations[0].startswith("I1:"), result.violations
    assert any(isinstance(e, (Stall, SlowRevoke)) for e in result.events)
