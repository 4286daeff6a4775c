"""Wire mode, the short version kept in the default run: real consumers of each shipped
client in member drivers on groupcheck's broker (the default backend: rebalances complete
as soon as every member has rejoined, so a smoke takes seconds), judged by the model under
each client's own profile, and one mixed group. The long runs are in tests/test_wire_long.py
(tox -e wire). A test skips only where its client's library (or kio) is not installed."""

from __future__ import annotations

import pytest

from groupcheck.model.event_types import Resume, Subscribe
from groupcheck.model.events import apply_event
from groupcheck.model.group_events import Poll, Settle
from groupcheck.model.replay import ownership_line
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties import membership as M
from groupcheck.targets.registry import wire_clients
from groupcheck.targets.settings import Settings
from groupcheck.targets.target import TargetError
from groupcheck.targets.wire.silence import COORDINATOR_APIS

from helpers.environment import SETTINGS, missing, resolve
from helpers.wire_cases import smoke, without_pauses
from helpers.wire_findings import expect_kafka_python_hang

pytest.importorskip("kio", reason="groupcheck's broker (the default wire backend) needs kio")
pytestmark = [pytest.mark.wire,
              pytest.mark.skipif(bool(missing("librdkafka")), reason=missing("librdkafka"))]


def needs(*clients: str) -> None:
    for client in clients:
        reason = missing(client)
        if reason:
            pytest.skip(reason)


def run(target: str, events: list[dict[str, object]],
        settings: Settings = SETTINGS) -> tuple[list[str], object]:
    resolved = resolve(target, settings=settings)
    assert resolved.group is not None
    group = resolved.group()
    model = ReferenceModel()
    found: list[str] = []
    story: list[str] = []
    try:
        for i, event in enumerate(events, 1):
            found += apply_event(event, group, model)
            story.append(f"{i:>3}. {event}")
            if model.last_view is not None:
                story.append(f"     {ownership_line(model.last_view)}")
    finally:  # the group's requests, read while its broker runs
        broker = getattr(getattr(group, "backend", None), "broker", None)
        requests = [e.line() for e in broker.exchanges() if e.api in COORDINATOR_APIS] \
            if broker is not None and found else []
        group.close()
    if found:  # a failure's story (captured output): events, ownership, the group's requests
        print("\n".join(story + requests + found))
    for who, text in model.reported if found else ():
        print(f"said by {who}: {text}")
    silent = [text for _, text in model.reported if "nothing since its SyncGroup" in text]
    if found and all(v.startswith("I11:") for v in found):
        turns = group.turns  # type: ignore[attr-defined]
        expect_kafka_python_hang(silent, {turns[m] for m in turns if any(
            f"{m} sent its coordinator nothing" in t for t in silent)})
    return found, group


def test_wire_target_strings_name_clients_assignor_and_mode() -> None:
    assert wire_clients("kafka-python:range") == (("kafka-python",), "range", False)
    assert wire_clients("mixed:librdkafka+aiokafka:range:adversarial") == (
        ("librdkafka", "aiokafka"), "range", True)
    assert wire_clients("cmd=node drv.js --x=1:y:roundrobin") == (
        ("cmd=node drv.js --x=1:y",), "roundrobin", False)
    with pytest.raises(TargetError):
        wire_clients("range")
    with pytest.raises(TargetError, match="at least two"):
        wire_clients("mixed:librdkafka:range")


def test_unknown_clients_and_unsupported_assignors_are_refused_in_one_line() -> None:
    with pytest.raises(TargetError, match="unknown client"):
        resolve("wire:nosuchclient:range")
    with pytest.raises(TargetError, match="not sticky"):
        resolve("librdkafka:sticky")
    with pytest.raises(TargetError):
        resolve("librdkafka:range:sometimes")
    target = resolve("librdkafka:cooperative-sticky")
    assert target.engines() == ["fuzz"] and target.hints is not None and target.hints.wire


def test_librdkafka_profile_keeps_every_pause_mark_and_allows_empty_callbacks() -> None:
    marks = {("t", 0), ("t", 1)}
    for protocol in ("EAGER", "COOPERATIVE"):
        assert M.pause_marks("librdkafka", protocol, marks, {("t", 1)}) == marks
    assert M.pause_marks("java", "EAGER", marks, marks) == set()
    assert M.pause_marks("kip", "EAGER", marks, {("t", 1)}) == {("t", 1)}
    assert M.listener_call("assigned", set(), set(), 3, "m", "librdkafka") == []
    assert M.listener_call("assigned", set(), set(), 3, "m", "kip") != []


def test_librdkafka_smoke_cooperative_sticky_holds_its_profile_and_the_coordinators_side() -> None:
    """A join, a subscription change and a leave: every invariant holds after every logged
    callback end, record and completed generation (decoded from the coordinator's bytes), and
    the log shows librdkafka's cooperative order (a member's revokes end before its next
    assign starts)."""
    found, group = run("librdkafka:cooperative-sticky", smoke("cooperative-sticky"))
    assert found == []
    ends = [e for e in group.log.entries if e.phase == "end"]  # type: ignore[attr-defined]
    kinds = [(e.member, e.kind, bool(e.partitions)) for e in ends]
    assert ("c1", "revoked", True) in kinds and ("c2", "assigned", True) in kinds
    assert any(not p for _, k, p in kinds if k == "assigned")  # empty on_assign rounds
    for i, e in enumerate(ends):
        later = [x for x in ends[i + 1:] if x.member == e.member]
        if e.kind == "revoked" and later:
            assert later[0].kind == "assigned" and later[0].started > e.seq
    assert len(group.shown_rounds) >= 3  # type: ignore[attr-defined]


def test_kafka_python_smoke_range_holds_the_java_profile() -> None:
    """kafka-python's KafkaConsumer, two members in their own drivers: joins, records and a
    leave break nothing (its pause retention is a finding, replayed in tox -e wire)."""
    needs("kafka-python")
    events = [e for e in without_pauses(smoke("range")) if not isinstance(e, Subscribe)]
    found, group = run("wire:kafka-python:range", events)
    assert found == []
    assert any(e.kind == "record" for e in group.log.entries)  # type: ignore[attr-defined]


def test_aiokafka_smoke_roundrobin_holds_the_java_profile_without_subscription_changes() -> None:
    """Two AIOKafkaConsumers in one driver process: joins, records and a leave break nothing
    (aiokafka's subscribe is a finding)."""
    needs("aiokafka")
    events = [e for e in without_pauses(smoke("roundrobin")) if not isinstance(e, Subscribe)]
    found, group = run("wire:aiokafka:roundrobin", events)
    assert found == []
    assert len(group.shown_rounds) >= 3  # type: ignore[attr-defined]


def test_mixed_group_of_librdkafka_and_kafka_python_reads_each_others_bytes() -> None:
    """c1 on librdkafka, c2 on kafka-python, range: each leader decodes the other's
    subscription, and every generation's bytes read as every older version (I10)."""
    needs("kafka-python")
    events = [e for e in without_pauses(smoke("range")) if not isinstance(e, Subscribe)]
    found, group = run("wire:mixed:librdkafka+kafka-python:range", events)
    assert found == []
    turns = group.turns  # type: ignore[attr-defined]
    assert turns["c1"] == "librdkafka" and turns["c2"] == "kafka-python"


@pytest.mark.parametrize("assignor", ("range", "cooperative-sticky"))
def test_pause_outlives_revoke_and_reassign_under_librdkafka(assignor: str) -> None:
    """librdkafka profile, I8 on real records: c1's pause of t0 survives the rebalances that
    move part of t0 to c2 and back, so records produced then are not returned to c1; after
    c1 resumes, they are (the records were there to be fetched)."""
    from helpers.wire_cases import pause_outlives_the_assignment

    group = resolve(f"librdkafka:{assignor}").group()  # type: ignore[misc]
    model = ReferenceModel()
    try:
        for event in pause_outlives_the_assignment(assignor):
            assert apply_event(event, group, model) == [], event
        log = group.log  # type: ignore[attr-defined]
        assert any(e.member == "c2" and e.kind == "assigned" and e.phase == "end"
                   and e.partitions for e in log.entries)  # part of t0 went to c2 and back
        resume = Resume("c1", (("t0", 0), ("t0", 1), ("t0", 2)))
        assert apply_event(resume, group, model) == []
        assert log.wait_for(lambda: any(e.kind == "record" and e.member == "c1"
                                        for e in log.entries), 60)
        assert apply_event(Poll(3), group, model) == []
    finally:
        group.close()
    records = [e for e in log.entries if e.kind == "record"]
    resumed_at = next(e.seq for e in log.entries if e.kind == "resume")
    assert records and all(e.seq > resumed_at for e in records)


def test_a_users_own_driver_runs_through_cmd() -> None:
    """``wire:cmd=<command>:<assignor>`` starts any command as a member driver; here the
    shipped librdkafka driver, started as a user would start theirs."""
    import sys

    from helpers.wire_cases import join, topics

    target = f"wire:cmd={sys.executable} -m groupcheck.targets.wire.drivers.librdkafka_member:range"
    events = [*topics(), join("c1", "range"), Settle(), join("c2", "range"), Settle()]
    found, group = run(target, events)
    assert found == []
    assert group.infos[group.order[0]].client == "librdkafka"  # type: ignore[attr-defined]
