"""What a SyncGroup answer that steering kept from its member does to the coordinator's round
(`broker.rounds`): the round completes, but the member has not got its assignment while the
answer is held back, and never does when the connection closes first, by steering or by its
client; an answer that goes out says how long its member waited. The harness reads a claim
against what its member last got (`round_records.given_before`, I6)."""

from __future__ import annotations

import socket
import time

import pytest

pytest.importorskip("kio")

from groupcheck.broker import Broker  # noqa: E402

from helpers.broker_wire import form_pair, sync_both  # noqa: E402

GROUP, TOPIC = "g", "t"
pytestmark = pytest.mark.broker_config(topics={TOPIC: 4})


def test_a_sync_answer_withheld_by_a_closed_connection_completes_the_round_but_is_not_got(
        broker: Broker) -> None:
    """The coordinator answered b's SyncGroup (the round is complete), but steering closed
    b's connection instead: b never got generation 2's assignment, so it is withheld (a
    claim b makes later comes from its generation 1, not from what 2 would have given)."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.close_before_answer("b", "SyncGroup")
    sync_both(p, GROUP, TOPIC)
    assert p.a.receive().error_code == 0
    with pytest.raises((ConnectionError, OSError)):
        p.b.receive()
    second = broker.rounds(GROUP)[-1]
    assert second.complete and second.synced == {p.a_id, p.b_id}
    assert second.withheld == {p.b_id}


def test_a_sync_answer_held_back_records_how_long_its_member_waited(broker: Broker) -> None:
    """A delayed SyncGroup answer is got only by a client whose request outlives the wait:
    while it is held, b has not got it (withheld); once out, the round says how long b
    waited, so the harness can tell (`round_records`)."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.delay("b", "SyncGroup", 0.3)
    sync_both(p, GROUP, TOPIC)
    assert p.a.receive().error_code == 0
    assert broker.rounds(GROUP)[-1].withheld == {p.b_id}
    assert p.b.receive().error_code == 0
    second = broker.rounds(GROUP)[-1]
    assert second.synced == {p.a_id, p.b_id} and set(second.waited_ms) == {p.b_id}
    assert second.waited_ms[p.b_id] >= 300 and second.withheld == set()


def test_a_sync_answer_held_back_past_its_client_s_hang_up_is_never_got(
        broker: Broker) -> None:
    """b gives its held SyncGroup up and closes the connection (as Kafka's Java consumer
    does when its session runs out on its own side): the answer that goes out later is
    never read, and generation 2's assignment stays withheld from b."""
    p = form_pair(broker.bootstrap, GROUP, TOPIC)
    broker.delay("b", "SyncGroup", 0.3)
    sync_both(p, GROUP, TOPIC)
    assert p.a.receive().error_code == 0
    p.b.sock.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not broker.rounds(GROUP)[-1].waited_ms:
        time.sleep(0.05)
    assert broker.rounds(GROUP)[-1].withheld == {p.b_id}
