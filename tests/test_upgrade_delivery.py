"""A rolling upgrade is judged for delivery: its members commit (`plan.STYLES` in turn,
kept across restarts), and a story whose delivery log breaks I17 fails certification like any
other invariant, with the delivery verdict on its row."""

from __future__ import annotations

import pytest

from groupcheck.engines.upgrades import play as play_module
from groupcheck.engines.upgrades.plan import STYLES, parse_side, plans_for, story
from groupcheck.model.event_types import Join
from groupcheck.properties.delivery import DeliveryLog, Handed, Tenure
from groupcheck.targets.registry import resolve
from groupcheck.targets.settings import Settings

from helpers.logged_group import LoggedGroup

SOURCE, DEST = "wire:librdkafka@2.3.0:range", "wire:librdkafka@2.16.1:range"


def test_every_member_commits_in_its_style_across_its_restarts() -> None:
    [plan] = plans_for(parse_side(SOURCE), parse_side(DEST))
    joins = [e for e in story(plan, members=4, seed=0, faults=0.0) if isinstance(e, Join)]
    styles: dict[str, set[str | None]] = {}
    for join in joins:
        styles.setdefault(join.member, set()).add(join.commit_style)
    assert [styles[m] for m in sorted(styles)] == [{STYLES[i % len(STYLES)]}
                                                   for i in range(4)]


def _skipping_log() -> DeliveryLog:
    """m1 owns t0-0 and is handed offsets 0 and 2 of 3: offset 1 skipped, and lost."""
    handed = tuple(Handed(10 + o, "m1", "t0", 0, o, 1) for o in (0, 2))
    return DeliveryLog(handed, (), (Tenure("m1", "t0", 0, 0, None, 1),), {("t0", 0): 3},
                       {"m1": "auto"}, caught_up=True)


def test_an_upgrade_that_loses_a_record_fails_certification(
        monkeypatch: pytest.MonkeyPatch) -> None:
    [plan] = plans_for(parse_side(SOURCE), parse_side(DEST))
    builtin = resolve("builtin:range")
    assert builtin.group is not None
    monkeypatch.setattr(play_module, "_checked", lambda _plan, _settings: ({}, ""))
    monkeypatch.setattr(play_module, "resolve", lambda _text, settings: builtin)
    monkeypatch.setattr(play_module, "_group", lambda target: LoggedGroup(target.group(),
                                                                       _skipping_log))
    outcome = play_module.play(plan, Settings(), members=2, seed=0, faults=0.0,
                               shrink_seconds=0.0)
    assert outcome.verdict == "fails"
    # offset 1, handed to no member, is lost; m1's own records skip it
    assert outcome.violations[0].startswith("I17:") and "(lost)" in outcome.violations[0]
    assert outcome.broke_at is not None and outcome.broke_at["bounce"] == 0
    row = outcome.to_json()
    assert row["delivery"] is not None
    assert {"lost", "skipped"} <= set(row["delivery"]["rules"])
