"""An injected fencing error counts from the moment it lands, not from the moment the harness
asked for it: on groupcheck's broker the error waits for the member's next request of its
API, which may come in a later generation (a member still joining heartbeats only once it
has its assignment). The wire group tells the model when and in which generation it landed
(`GroupView.told`); a member told in generation 3 may then report its partitions lost in
generation 3, after an assignment of generation 3 that came first. A target that does not
tell (the builtin group, the mock) keeps the old reading: told at once, until the next
assignment.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kio.schema.heartbeat.v4.request import HeartbeatRequest
from kio.schema.offset_commit.v9.request import OffsetCommitRequest
from kio.schema.offset_fetch.v9.request import OffsetFetchRequest
from kio.static.primitive import i32

from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.group import CallbackRecord, GroupView, MemberSpec, MemberView
from groupcheck.targets.wire.backends.groupcheck_broker import request_generation

T0 = (("t0", 0), ("t0", 1))


def _view(*callbacks: CallbackRecord, told: tuple[tuple[str, str, int], ...] = ()
          ) -> GroupView:
    member = MemberView("c3", "c3-id", callbacks[-1].generation, frozenset(), frozenset(),
                        frozenset({"t0"}), "EAGER", "java", True, True)
    return GroupView(3, "Stable", "c3", {"t0": 2}, {"c3": member}, False, callbacks,
                     told=told)


def _assigned(seq: int, generation: int) -> CallbackRecord:
    return CallbackRecord(seq, "c3", "assigned", T0, (), generation, "c3-id")


def _lost(seq: int, generation: int) -> CallbackRecord:
    return CallbackRecord(seq, "c3", "lost", T0, T0, generation, "c3-id")


def _model() -> ReferenceModel:
    model = ReferenceModel()
    model.joined("c3", MemberSpec(topics=("t0",), assignors=("range",), profile="java"))
    return model


def test_an_error_that_lands_after_the_assignment_of_its_generation_excuses_the_loss() -> None:
    model = _model()
    model.error_answered({"c3"}, "ILLEGAL_GENERATION", lands_later=True)
    assert model.told_fenced == {}  # not yet: it has not landed
    assert model.observe(_view(_assigned(1, 3), told=(("c3", "ILLEGAL_GENERATION", 3),))) == []
    assert model.observe(_view(_lost(2, 3))) == []


def test_an_assignment_of_a_later_generation_ends_the_excuse() -> None:
    model = _model()
    model.observe(_view(_assigned(1, 3), told=(("c3", "UNKNOWN_MEMBER_ID", 3),)))
    model.observe(_view(_assigned(2, 4)))
    assert model.observe(_view(_lost(3, 4))) == [
        "c3: I7: lost [t0-0, t0-1] while its generation 4 was valid"]


def test_a_target_that_does_not_tell_is_told_at_once_until_its_next_assignment() -> None:
    model = _model()
    model.error_answered({"c3"}, "ILLEGAL_GENERATION")
    assert model.observe(_view(_lost(1, 3))) == []
    model.error_answered({"c3"}, "ILLEGAL_GENERATION")
    model.observe(_view(_assigned(2, 3)))
    assert model.observe(_view(_lost(3, 3))) == [
        "c3: I7: lost [t0-0, t0-1] while its generation 3 was valid"]


@pytest.fixture
def backend() -> Iterator[object]:
    pytest.importorskip("kio")
    from groupcheck.broker import Broker, BrokerConfig
    from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend

    with Broker(BrokerConfig(topics={"t": 4})) as broker:
        made = GroupcheckBackend(frozenset(), 10_000, broker, "g")
        yield made
        made.close()


def test_the_broker_backend_tells_each_injected_error_once_with_its_generation(
        backend: object) -> None:
    from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend

    from helpers.broker_wire import form_pair, sync_both

    assert isinstance(backend, GroupcheckBackend)
    p = form_pair(backend.bootstrap, "g", "t")
    sync_both(p, "g", "t")
    p.a.receive(), p.b.receive()
    backend.inject_error("heartbeat", "ILLEGAL_GENERATION", "b")
    assert backend.told() == []  # armed, not landed
    assert p.b.heartbeat("g", p.b_id, 2).error_code == 22
    assert p.a.heartbeat("g", p.a_id, 2).error_code == 0
    assert backend.told() == [("b", "ILLEGAL_GENERATION", 2)]
    assert backend.told() == []


def test_the_broker_backend_tells_the_coordinators_own_fencing_answers_too(
        backend: object) -> None:
    """A member the coordinator expired learns so from its next request's UNKNOWN_MEMBER_ID,
    not an injected one: that is told as well, so the lost callback that follows is
    excused even from a client (Kafka's Java consumer) whose ``groupMetadata()`` still shows
    the generation it had. An answer without error is not told."""
    from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend

    from helpers.broker_wire import form_pair, sync_both

    assert isinstance(backend, GroupcheckBackend)
    p = form_pair(backend.bootstrap, "g", "t")
    sync_both(p, "g", "t")
    p.a.receive(), p.b.receive()
    assert p.a.heartbeat("g", p.a_id, 2).error_code == 0
    backend.broker.drop_session("g", p.b_id)
    assert p.b.heartbeat("g", p.b_id, 2).error_code == 25
    assert backend.told() == [("b", "UNKNOWN_MEMBER_ID", 2)]
    assert backend.told() == []


def test_an_injected_error_answered_after_its_client_hung_up_is_not_told(
        backend: object) -> None:
    """b sends an OffsetFetch (its answer delayed 0.3 s) and a heartbeat behind it, and
    closes its end: the broker still answers the heartbeat ILLEGAL_GENERATION, which b never
    reads, so nobody was told."""
    import socket
    import time

    from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend

    from helpers.broker_wire import form_pair, sync_both

    assert isinstance(backend, GroupcheckBackend)
    p = form_pair(backend.bootstrap, "g", "t")
    sync_both(p, "g", "t")
    p.a.receive(), p.b.receive()
    backend.inject_error("heartbeat", "ILLEGAL_GENERATION", "b")
    backend.broker.delay("b", "OffsetFetch", 0.3)
    p.b.send(9, 7, {"group_id": "g", "topics": None, "require_stable": False})
    p.b.send(12, 4, {"group_id": "g", "generation_id": 2, "member_id": p.b_id,
                     "group_instance_id": None})
    p.b.sock.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + 10
    while not any(e.api == "Heartbeat" and e.who.client_id == "b" and e.answered_ms
                  is not None for e in backend.broker.exchanges()):
        assert time.monotonic() < deadline, "the heartbeat was never answered"
        time.sleep(0.05)
    answered = [e for e in backend.broker.exchanges() if e.api == "Heartbeat"][-1]
    assert (answered.error_code, answered.unread) == (22, True)
    assert backend.told() == []


def test_an_error_told_on_an_offset_commit_carries_the_commits_generation() -> None:
    """OffsetCommit names its generation ``generation_id_or_member_epoch``: a member told
    ILLEGAL_GENERATION on its commit in generation 6 is told in generation 6 (it was read
    as -1, so the member's next assignment of any generation ended the excuse)."""
    commit = OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=i32(6),
                                 member_id="m", group_instance_id=None, topics=())
    heartbeat = HeartbeatRequest(group_id="g", generation_id=i32(3), member_id="m",
                                 group_instance_id=None)
    fetch = OffsetFetchRequest(groups=(), require_stable=False)
    assert [request_generation(r) for r in (commit, heartbeat, fetch)] == [6, 3, -1]
