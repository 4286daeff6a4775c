"""Wire mode, the short version kept in the default run: real librdkafka consumers
(confluent-kafka) on librdkafka's mock cluster, judged by the model under the
``librdkafka`` client profile. The long runs are in tests/test_wire_long.py (tox -e wire)."""

from __future__ import annotations

import pytest

from groupcheck.model.events import apply_event
from groupcheck.model.spec import ReferenceModel
from groupcheck.properties import membership as M
from groupcheck.targets.registry import TargetError, resolve

from wire_cases import pause_outlives_the_assignment, smoke

pytest.importorskip("confluent_kafka")


def test_librdkafka_target_names_are_checked() -> None:
    with pytest.raises(TargetError, match="librdkafka:<range"):
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


def test_wire_smoke_cooperative_sticky_holds_librdkafka_profile() -> None:
    """A join, a subscription change and a leave on a fresh mock cluster: every invariant
    holds after every logged callback end and record, and the log shows the profile's
    cooperative order (in a round, a member's revokes end before its assign starts)."""
    target = resolve("librdkafka:cooperative-sticky")
    assert target.group is not None
    group = target.group()
    model = ReferenceModel()
    try:
        for event in smoke("cooperative-sticky"):
            assert apply_event(event, group, model) == [], event
        assert model.last_view is not None and model.last_view.generation >= 3
        ends = [e for e in group.log.entries if e.phase == "end"]  # type: ignore[attr-defined]
    finally:
        group.close()
    kinds = [(e.member, e.kind, bool(e.partitions)) for e in ends]
    assert ("c1", "revoked", True) in kinds and ("c2", "assigned", True) in kinds
    assert any(not p for _, k, p in kinds if k == "assigned")  # empty on_assign rounds
    rounds = 0
    for i, e in enumerate(ends):
        later = [x for x in ends[i + 1:] if x.member == e.member]
        if e.kind == "revoked" and later:  # (a member's last revoke may be its close)
            assert later[0].kind == "assigned" and later[0].started > e.seq  # then assign
            rounds += 1
    assert rounds >= 1


@pytest.mark.parametrize("assignor", ("range", "cooperative-sticky"))
def test_pause_outlives_revoke_and_reassign_under_librdkafka(assignor: str) -> None:
    """librdkafka profile, I8 on real records: c1's pause of t0 survives the rebalances that
    move part of t0 to c2 and back, so records produced then are not returned to c1; after
    c1 resumes, they are (the records were there to be fetched)."""
    group = resolve(f"librdkafka:{assignor}").group()  # type: ignore[misc]
    model = ReferenceModel()
    try:
        for event in pause_outlives_the_assignment(assignor):
            assert apply_event(event, group, model) == [], event
        moved = [e for e in group.log.entries if e.member == "c2" and e.kind == "assigned"
                 and e.phase == "end" and e.partitions]
        assert moved  # part of t0 really went to c2 and came back
        resume = {"op": "resume", "member": "c1",
                  "partitions": [["t0", 0], ["t0", 1], ["t0", 2]]}
        assert apply_event(resume, group, model) == []
        assert group.log.wait_for(lambda: any(
            e.kind == "record" and e.member == "c1" for e in group.log.entries), 60)
        assert apply_event({"op": "poll", "steps": 3}, group, model) == []
    finally:
        group.close()
    records = [e for e in group.log.entries if e.kind == "record"]
    resumed_at = next(e.seq for e in group.log.entries if e.kind == "resume")
    assert records and all(e.seq > resumed_at for e in records)
