"""Orderings of SyncGroup answers on groupcheck's broker backend, with bare protocol clients
(`broker_wire.RawClient`), so every step is deterministic: two orderings at once each
release their own answers, a member that crashes while an ordering holds its answer is
skipped and the group goes on, and a steering thread that raises is the backend's failure,
which a wire group raises at its next call as a harness error.
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker, BrokerConfig  # noqa: E402
from groupcheck.properties.group import MemberSpec  # noqa: E402
from groupcheck.properties.harness import HarnessError  # noqa: E402
from groupcheck.targets.wire.backends.groupcheck_broker import (  # noqa: E402
    GroupcheckBackend,
    SyncOrder,
)
from groupcheck.targets.wire.wire_group import WireGroup  # noqa: E402

from helpers import TARGETS  # noqa: E402
from helpers.broker_wire import RawClient, form_pair, sync_both  # noqa: E402

GROUP, TOPIC = "g", "t"
REBALANCE_IN_PROGRESS = 27
QUIET = TARGETS / "quiet_driver.py"


@pytest.fixture
def broker() -> Iterator[Broker]:
    with Broker(BrokerConfig(topics={TOPIC: 4})) as b:
        yield b


@pytest.fixture
def backend(broker: Broker) -> Iterator[GroupcheckBackend]:
    made = GroupcheckBackend(frozenset(), 10_000, broker, GROUP)
    yield made
    made.close()


def _holds_armed(broker: Broker, count: int) -> None:
    """``count`` hold rules are armed: an ordering arms its own before it returns."""
    assert sum(r.action == "hold" for r in broker.armed()) == count, broker.armed()


def _crash(client: RawClient) -> None:
    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()


def test_two_orderings_at_once_each_order_their_own_rebalance(
        broker: Broker, backend: GroupcheckBackend) -> None:
    """The first ordering (follower first) takes generation 2, the second (leader first)
    generation 3; neither touches the other's answers, and no steering thread fails."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    backend.order_sync_answers("b", False, ["a", "b"])
    _holds_armed(broker, 2)
    backend.order_sync_answers("b", True, ["a", "b"])
    _holds_armed(broker, 4)
    first, second = backend.orderings
    sync_both(p, GROUP, TOPIC)
    assert p.a.receive().error_code == 0 and p.b.receive().error_code == 0
    first.join(10)
    p.a.send_join(GROUP, p.a_id, [TOPIC])  # the leader rejoins: generation 3
    assert p.b.heartbeat(GROUP, p.b_id, 2).error_code == REBALANCE_IN_PROGRESS
    p.b.send_join(GROUP, p.b_id, [TOPIC])
    assert p.a.receive().generation_id == p.b.receive().generation_id == 3
    p.generation = 3
    sync_both(p, GROUP, TOPIC)
    assert p.a.receive().error_code == 0 and p.b.receive().error_code == 0
    second.join(10)
    assert (first.released, second.released) == (["b", "a"], ["a", "b"])
    assert backend.failure() is None and broker.held() == []


def test_a_member_that_crashes_while_its_answer_is_held_is_skipped_and_the_group_goes_on(
        broker: Broker, backend: GroupcheckBackend) -> None:
    """The follower syncs and crashes while its SyncGroup waits for the leader's; the
    ordering holds both answers, releases them, finds the follower's connection gone and
    skips it: the leader gets its answer and heartbeats on."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    backend.order_sync_answers("b", True, ["a", "b"])
    _holds_armed(broker, 2)
    p.b.send_sync(GROUP, p.b_id, 2)
    deadline = time.monotonic() + 10
    while not any(e.api == "SyncGroup" and e.who.client_id == "b" for e in broker.exchanges()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    _crash(p.b)
    p.a.send_sync(GROUP, p.a_id, 2, {p.a_id: [(TOPIC, 0), (TOPIC, 1)],
                                     p.b_id: [(TOPIC, 2), (TOPIC, 3)]})
    assert p.a.receive().error_code == 0
    backend.orderings[0].join(10)
    assert "a" in backend.orderings[0].released
    assert p.a.heartbeat(GROUP, p.a_id, 2).error_code == 0
    assert backend.failure() is None and broker.held() == []


def test_a_member_forgotten_right_after_an_ordering_was_asked_for_keeps_no_hold_of_it(
        broker: Broker, backend: GroupcheckBackend) -> None:
    """The ordering's holds are armed before ``order_sync_answers`` returns, so that
    forgetting a member at the next event leaves no hold to fire on its name's next
    consumer."""
    backend.order_sync_answers("b", True, ["a", "b"])
    backend.forget("b")
    backend.orderings[0].join(0.2)  # its thread waits for a first hold
    assert [(r.member, r.tag) for r in broker.armed()] == [("a", "order-1")]


def test_an_ordering_waits_for_no_member_that_left_and_never_holds_past_half_a_session(
        broker: Broker, backend: GroupcheckBackend) -> None:
    """The follower left (its holds disarmed): the leader's answer, held, goes out at once
    instead of waiting out the window for an answer that cannot come; and the window is at
    most half the members' session, so a held member never outlives its session."""
    assert backend.order_window == 3.0  # a 10 s session: the window's own bound
    assert GroupcheckBackend(frozenset(), 2000, broker, GROUP).order_window == 1.0
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    backend.order_sync_answers("b", True, ["a", "b"])
    _holds_armed(broker, 2)
    backend.forget("b")
    began = time.monotonic()
    p.a.send_sync(GROUP, p.a_id, 2, {p.a_id: [(TOPIC, 0), (TOPIC, 1)],
                                     p.b_id: [(TOPIC, 2), (TOPIC, 3)]})
    assert p.a.receive().error_code == 0
    assert time.monotonic() - began < backend.order_window / 2
    backend.orderings[0].join(10)
    assert backend.orderings[0].released == ["a"] and backend.failure() is None


def test_a_steering_thread_that_raises_is_raised_by_the_wire_groups_next_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The ordering's thread dies on its first wait: the next call into the group raises a
    HarnessError naming the thread and carrying its traceback; close does not raise it
    again."""
    def broken(self: SyncOrder, *_: object) -> list[object]:
        raise KeyError("no held response 1")

    monkeypatch.setattr(SyncOrder, "_wait", broken)
    group = WireGroup("wire:quiet:range", (f"cmd={sys.executable} {QUIET}",), "range")
    try:
        group.set_partitions("t0", 2)
        group.join("c1", MemberSpec(topics=("t0",), assignors=("range",)))
        group.order_sync_answers("c1", True)
        group.backend.orderings[0].join(10)  # type: ignore[attr-defined]
        with pytest.raises(HarnessError, match="sync-order-c1 thread failed: KeyError") as err:
            group.view()
        assert "no held response 1" in err.value.traceback_text
        assert err.value.thread == "sync-order-c1"
        with pytest.raises(HarnessError):
            group.step()
    finally:
        group.close()
