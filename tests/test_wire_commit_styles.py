"""A wire member's commit style: the settings its driver is sent, the refusal of a style its
client's driver does not offer, the styles a group of several clients offers; the merged log
keeps each record's offset and generation and each commit a driver reports; and a group is
settled only once every polling member has been handed what it owns up to the high watermark
(unless an accepted commit already reaches it)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from groupcheck.properties.group import MemberSpec
from groupcheck.targets.wire.clients import ClientInfo
from groupcheck.targets.wire.log import WireLog
from groupcheck.targets.wire.members import (
    AUTO_COMMIT_INTERVAL_MS,
    CommitStyleRefused,
    member_config,
    offered_styles,
)
from groupcheck.targets.wire.settle import NOBODY, accepted_commits, read_to, unread

from helpers.delivery_wire import librdkafka_group, settle

CLIENT = ClientInfo("librdkafka", "librdkafka", "2.3.0", ("range",), "librdkafka", "kill",
                    commit_styles=("none", "auto", "sync", "async", "revoke"))
SPEC = MemberSpec(topics=("t0",), assignors=("range",))


def test_auto_alone_turns_auto_commit_on_with_its_interval() -> None:
    auto = member_config({}, CLIENT, "c1", replace(SPEC, commit_style="auto"))
    assert auto == {"client_id": "c1", "commit_style": "auto", "enable_auto_commit": True,
                    "auto_commit_interval_ms": AUTO_COMMIT_INTERVAL_MS}
    for style in ("sync", "async", "revoke"):
        config = member_config({}, CLIENT, "c1", replace(SPEC, commit_style=style))
        assert config == {"client_id": "c1", "commit_style": style,
                          "enable_auto_commit": False}
    assert member_config({}, CLIENT, "c1", SPEC) == {"client_id": "c1"}  # none: as before


def test_a_style_the_driver_does_not_offer_is_refused_before_the_member_starts() -> None:
    plain = replace(CLIENT, commit_styles=("none", "sync"))
    with pytest.raises(CommitStyleRefused, match="'revoke'.*offers none, sync"):
        member_config({}, plain, "c1", replace(SPEC, commit_style="revoke"))
    assert member_config({}, replace(CLIENT, commit_styles=("none",)), "c1", SPEC) == {
        "client_id": "c1"}


def test_a_group_of_several_clients_offers_the_styles_every_one_offers() -> None:
    kafkajs = replace(CLIENT, name="kafkajs", commit_styles=("sync", "none", "auto"))
    silent = ClientInfo("cmd", "cmd", "?", ("range",), "kip", "command")
    assert offered_styles([CLIENT, kafkajs]) == ("none", "auto", "sync")
    assert offered_styles([CLIENT, kafkajs, silent]) == ("none",)


def test_the_log_keeps_each_records_offset_and_generation_and_each_commit() -> None:
    log = WireLog(lambda _horizon: True)
    log.receive(1, {"event": "records", "member": "c1", "seq": 0, "ts": 10,
                    "records": [["t0", 1, 4], ["t0", 1, 5]], "generation": 3})
    log.receive(1, {"event": "commit", "member": "c1", "seq": 1, "ts": 20, "style": "sync",
                    "offsets": [["t0", 1, 6]], "outcome": "ok", "generation": None})
    log.release()
    [first, second, commit] = log.entries
    assert [(e.kind, e.partitions, e.offset, e.generation) for e in (first, second)] == [
        ("record", (("t0", 1),), 4, 3), ("record", (("t0", 1),), 5, 3)]
    assert (commit.kind, commit.style, commit.offsets, commit.text, commit.generation) == (
        "commit", "sync", (("t0", 1, 6),), "ok", -1)


def _member(owned: set[tuple[str, int]], read: dict[tuple[str, int], int], **kw: Any) -> Any:
    return SimpleNamespace(polling=True, subscription=frozenset({"t0"}), owned=owned,
                           marks=kw.get("marks", set()), read=read,
                           member_id=kw.get("member_id", "id-1"))


def _backend(ends: dict[tuple[str, int], tuple[int, int]], commits: list[Any],
             keeps_commits: bool = True) -> Any:
    return SimpleNamespace(log_ends=lambda _topics=None: ends, commits=lambda: commits,
                           keeps_commits=keeps_commits)


def _read_to(backend: Any, produced: dict[tuple[str, int], int],
             entries: tuple[Any, ...] = ()) -> Any:
    return read_to(backend, produced, accepted_commits(backend, entries))


def test_settled_waits_until_each_owner_was_handed_its_partition_to_the_high_watermark() -> None:
    ends = _read_to(_backend({("t0", 0): (0, 5), ("t0", 1): (0, 2)}, []), {})
    assert ends == {("t0", 0): (5, NOBODY), ("t0", 1): (2, NOBODY)}
    members = {"c1": _member({("t0", 0)}, {("t0", 0): 4}),
               "c2": _member({("t0", 1)}, {("t0", 1): 2})}
    assert unread(members, ends) == "c1 has not read t0-0 to 5"
    members["c1"].read[("t0", 0)] = 5
    assert unread(members, ends) == ""


def test_a_paused_or_stalled_owner_or_a_partition_another_member_committed_is_not_waited_for(
        ) -> None:
    accepted = SimpleNamespace(offsets=(("t0", 0, 5), ("t0", 1, 1)), errors=(0, 0),
                               client_id="c9", member_id="id-1")
    refused = SimpleNamespace(offsets=(("t0", 1, 2),), errors=(22,), client_id="c9",
                              member_id="id-1")
    ends = _read_to(_backend({("t0", 0): (0, 5), ("t0", 1): (0, 2)}, [accepted, refused]), {})
    assert ends == {("t0", 0): (5, ("c9", "id-1")), ("t0", 1): (2, NOBODY)}
    assert unread({"c1": _member({("t0", 0)}, {})}, ends) == ""  # c9 committed it all
    assert unread({"c9": _member({("t0", 0)}, {})}, ends) == "c9 has not read t0-0 to 5"
    # c9 restarted: its earlier incarnation (another member id) committed it all
    assert unread({"c9": _member({("t0", 0)}, {}, member_id="id-2")}, ends) == ""
    paused = _member({("t0", 1)}, {}, marks={("t0", 1)})
    assert unread({"c1": paused}, ends) == ""
    stalled = _member({("t0", 1)}, {})
    stalled.polling = False
    assert unread({"c1": stalled}, ends) == ""
    assert unread({"c1": _member({("t0", 1)}, {})}, ends) == "c1 has not read t0-1 to 2"


def test_a_new_owner_that_commits_the_offset_it_started_at_is_not_waited_for() -> None:
    """Java's commitSync() commits every position: a restarted member (new member id) that
    fetched t0-0's committed 5 commits 5 again; the commit that set 5 stays the old one's, so
    the new owner, handed nothing, has nothing to read. A commit that moves the offset back
    and up again is the owner's own: it waits for what it re-reads."""
    old = SimpleNamespace(offsets=(("t0", 0, 5),), errors=(0,), client_id="c1",
                          member_id="id-1")
    again = SimpleNamespace(offsets=(("t0", 0, 5),), errors=(0,), client_id="c1",
                            member_id="id-2")
    ends = _read_to(_backend({("t0", 0): (0, 5)}, [old, again]), {})
    assert ends == {("t0", 0): (5, ("c1", "id-1"))}
    assert unread({"c1": _member({("t0", 0)}, {}, member_id="id-2")}, ends) == ""
    back = SimpleNamespace(offsets=(("t0", 0, 2),), errors=(0,), client_id="c1",
                           member_id="id-2")
    ends = _read_to(_backend({("t0", 0): (0, 5)}, [old, back, again]), {})
    assert unread({"c1": _member({("t0", 0)}, {("t0", 0): 2}, member_id="id-2")},
                  ends) == "c1 has not read t0-0 to 5"


def test_on_a_backend_without_a_commit_log_the_commits_members_reported_done_stand_in(
        ) -> None:
    """librdkafka's mock keeps no OffsetCommit log: c9's reported commit of t0-0 up to its
    end excuses the new owner c1, handed nothing; a commit that failed excuses nobody."""
    log = WireLog(lambda _horizon: True)
    for seq, (offset, outcome) in enumerate([(5, "ok"), (2, "KafkaError: failed")]):
        log.receive(1, {"event": "commit", "member": "c9", "seq": seq, "ts": 10 + seq,
                        "style": "sync", "offsets": [["t0", seq, offset]],
                        "outcome": outcome, "generation": 1})
    log.release()
    backend = _backend({("t0", 0): (0, 5), ("t0", 1): (0, 2)}, [], keeps_commits=False)
    ends = _read_to(backend, {}, tuple(log.entries))
    assert ends == {("t0", 0): (5, ("c9", "")), ("t0", 1): (2, NOBODY)}
    assert unread({"c1": _member({("t0", 0)}, {})}, ends) == ""
    assert unread({"c1": _member({("t0", 1)}, {})}, ends) == "c1 has not read t0-1 to 2"


def test_a_backend_that_cannot_tell_its_high_watermarks_counts_what_the_group_produced(
        ) -> None:
    assert _read_to(_backend({}, []), {("t0", 0): 3}) == {("t0", 0): (3, NOBODY)}


@pytest.mark.wire
def test_a_settled_group_was_handed_every_record_up_to_the_high_watermarks() -> None:
    group = librdkafka_group()
    try:
        group.set_partitions("t0", 2)
        for member in ("c1", "c2"):
            group.join(member, SPEC)
        for partition in (0, 1, 1):
            group.produce("t0", partition)
        delivery = settle(group)[-1].delivery
        ends = group.backend.log_ends()
        assert ends == {("t0", 0): (0, 1), ("t0", 1): (0, 2)}
        owners = {tp: m for m in group.members.values() for tp in m.owned}
        assert {tp: owners[tp].read.get(tp, 0) for tp in ends} == {("t0", 0): 1, ("t0", 1): 2}
        assert delivery is not None and delivery.caught_up
        assert {(h.topic, h.partition, h.offset) for h in delivery.handed} == {
            ("t0", 0, 0), ("t0", 1, 0), ("t0", 1, 1)}  # some twice, after a rebalance
    finally:
        group.close()



def test_a_paused_or_stalled_owner_behind_its_high_watermark_has_not_caught_up() -> None:
    ends = {("t0", 0): (2, NOBODY)}
    paused = _member({("t0", 0)}, {}, marks={("t0", 0)})
    assert unread({"c1": paused}, ends) == ""  # settled: no wait would change it
    assert unread({"c1": paused}, ends, every=True) == "c1 has not read t0-0 to 2"
    stalled = _member({("t0", 0)}, {("t0", 0): 1})
    stalled.polling = False
    assert unread({"c1": stalled}, ends, every=True) == "c1 has not read t0-0 to 2"

