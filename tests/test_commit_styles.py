"""Commit styles in stories: the state machine draws one per joining member from the styles
the target offers, a replay file carries it only when it is not ``none``, the readable story
tells it, and a replay hands it to the target's join."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from groupcheck.engines.battery.fuzz import machine_config
from groupcheck.model.event_types import Join
from groupcheck.model.events import read_event, read_events, write_events
from groupcheck.model.fuzz import fuzz
from groupcheck.model.machine import config_for
from groupcheck.model.machine_config import MachineConfig
from groupcheck.model.machine_state import MachineState
from groupcheck.model.replay import replay_events
from groupcheck.properties.group import GroupTarget, MemberSpec
from groupcheck.targets.registry import group_target_factory
from groupcheck.targets.target import MachineHints, Target

BARE = {"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["range"]}


class JoinRecorder:
    """A group target that keeps each member's spec as its join received it."""

    def __init__(self, target: GroupTarget, seen: list[tuple[str, MemberSpec]]) -> None:
        self._target = target
        self._seen = seen

    def join(self, member: str, spec: MemberSpec) -> None:
        self._seen.append((member, spec))
        self._target.join(member, spec)

    def __getattr__(self, name: str) -> object:
        return getattr(self._target, name)


def _recording(seen: list[tuple[str, MemberSpec]]) -> Callable[[], GroupTarget]:
    make = group_target_factory("builtin:range")
    return lambda: JoinRecorder(make(), seen)  # type: ignore[return-value]


def _fuzzed_joins(config: MachineConfig) -> list[tuple[str, MemberSpec]]:
    seen: list[tuple[str, MemberSpec]] = []
    result = fuzz(_recording(seen), config, max_examples=8, seed_value=7)
    assert not result.failed
    return seen


def test_an_old_join_without_a_style_loads_as_none_and_writes_back_without_one() -> None:
    joined = read_event(BARE)
    assert isinstance(joined, Join) and joined.spec().commit_style == "none"
    assert write_events([joined]) == [BARE]


def test_a_join_with_a_style_round_trips_with_the_style_last() -> None:
    styled = {**BARE, "commit_style": "sync"}
    joined = read_event(styled)
    assert isinstance(joined, Join) and joined.spec().commit_style == "sync"
    written = write_events([joined])
    assert written == [styled] and list(written[0])[-1] == "commit_style"


def test_the_story_tells_a_style_and_says_nothing_of_none() -> None:
    assert Join("c2", ("t0",), ("range",), commit_style="sync").describe().endswith(
        "user data v1, commits sync)")
    assert "commits" not in Join("c2", ("t0",), ("range",)).describe()


def test_a_replayed_story_hands_each_members_style_to_the_targets_join() -> None:
    seen: list[tuple[str, MemberSpec]] = []
    events = read_events([{**BARE, "commit_style": "revoke"},
                          {**BARE, "member": "c2"}, {"op": "settle"}])
    replay_events(_recording(seen)(), events)
    assert [(m, s.commit_style) for m, s in seen] == [("c1", "revoke"), ("c2", "none")]


def test_the_machine_draws_a_style_per_join_from_those_the_target_offers() -> None:
    offered = ("none", "auto", "sync")
    seen = _fuzzed_joins(replace(config_for("range"), commit_styles=offered))
    styles = {spec.commit_style for _, spec in seen}
    assert styles <= set(offered) and len(styles) > 1


def test_one_style_is_drawn_without_a_choice_so_a_seed_plays_the_same_story(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeds replay as they did before styles: with one style the draw takes no choice, so
    the joins are those of a machine that never draws one, the style aside."""
    styled = _fuzzed_joins(replace(config_for("range"), commit_styles=("auto",)))
    plain = _fuzzed_joins(config_for("range"))
    monkeypatch.setattr(MachineState, "draw_commit_style", lambda self, data: None)
    before_styles = _fuzzed_joins(config_for("range"))
    assert {s.commit_style for _, s in styled} == {"auto"}
    assert plain == before_styles
    assert [(m, replace(s, commit_style="none")) for m, s in styled] == before_styles


def test_a_wire_targets_machine_draws_from_the_styles_every_client_offers() -> None:
    hints = MachineHints("range", profiles=("librdkafka",), upgrades=False, wire=True)
    hints.commit_styles = ("none", "sync")
    target = Target("wire:x:range", "range", hints=hints)
    assert machine_config(target).commit_styles == ("none", "sync")
    assert machine_config(replace(target, hints=MachineHints("range"))).commit_styles == (
        "none",)
