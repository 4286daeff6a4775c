"""Static members' events (KIP-345) and their judgments (I14), without real clients: the
replay file's form of a restart and a duplicate, their refusal on a target that runs no
static members, and what `properties.static_rules` holds a restart and a fenced member to.
The events on real clients are in tests/test_wire_static.py."""

from __future__ import annotations

import pytest

from groupcheck.model.event_registry import read_event, write_event
from groupcheck.model.event_types import DomainEvent, Join
from groupcheck.model.group_events import Partitions
from groupcheck.model.replay import replay_events
from groupcheck.model.static_events import StaticDuplicate, StaticRestart
from groupcheck.properties.static_rules import fenced_duplicate, static_restart

from helpers.environment import make_group_target

OWNED = frozenset({("t0", 0), ("t0", 1)})


@pytest.mark.parametrize("event", [StaticRestart("a"), StaticRestart("a", ("t0", "t1")),
                                   StaticDuplicate("a", "twin")])
def test_static_events_read_back_from_their_replay_form(event: DomainEvent) -> None:
    written = write_event(event)
    assert written["op"] in ("static_restart", "static_duplicate")
    assert read_event(written) == event


def test_a_static_restart_is_refused_on_a_target_that_runs_no_static_members() -> None:
    target = make_group_target("builtin:range")
    story = [Partitions("t0", 2), Join("a", ("t0",), ("range",), group_instance_id="ia"),
             StaticRestart("a")]
    with pytest.raises(ValueError, match="cannot run static members"):
        replay_events(target, story)


def test_a_static_restart_with_the_generation_and_partitions_kept_holds_i14() -> None:
    assert static_restart("a", OWNED, OWNED, 2, 2) == []


def test_a_static_restart_that_rebalanced_or_lost_partitions_breaks_i14() -> None:
    out = static_restart("a", OWNED, frozenset({("t0", 0)}), 2, 3)
    assert [v.split(":")[0] for v in out] == ["I14", "I14"]
    assert "generation 2 → 3" in out[0] and "[t0-0, t0-1] before" in out[1]


@pytest.mark.parametrize("said", [
    "FencedInstanceIdException: The broker rejected this static consumer since another "
    "consumer with the same group.instance.id has registered with a different member.id.",
    "RuntimeError: Fatal error: Broker: Static consumer fenced by other consumer with same "
    "group.instance.id", "FencedInstanceIdError: [Error 82] FencedInstanceIdError"])
def test_each_clients_wording_of_fenced_instance_id_tells_the_member(said: str) -> None:
    assert fenced_duplicate("a", [said]) == []


def test_a_replaced_member_told_nothing_or_something_else_breaks_i14() -> None:
    assert fenced_duplicate("a", [])[0].endswith("(it reported nothing)")
    assert "UNKNOWN_MEMBER_ID" in fenced_duplicate("a", ["UNKNOWN_MEMBER_ID"])[0]
