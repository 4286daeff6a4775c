"""The ``faults`` engine (`engines.faults.engine`) on real librdkafka consumers: a tiny scope
is played point by point with its coverage line — a late answer, a connection closed before
its answer and a moved coordinator each played, none not applicable — every point is judged
for delivery, and a target that is not a wire target is skipped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("kio", reason="groupcheck's broker (the default wire backend) needs kio")

from groupcheck.engines.battery.faults import play_scope, run_faults  # noqa: E402
from groupcheck.engines.faults.points import FaultScope, fault_points  # noqa: E402
from groupcheck.engines.faults.stories import PARTITIONS, member_styles, story  # noqa: E402
from groupcheck.model.event_types import Join  # noqa: E402
from groupcheck.model.group_events import Produce  # noqa: E402
from groupcheck.model.replay import load  # noqa: E402
from groupcheck.targets.registry import resolve  # noqa: E402

from helpers.environment import missing  # noqa: E402

#: a delayed Heartbeat answer, a connection closed before it and the coordinator moved on it
TINY = FaultScope(steps=("first_join",), apis=("Heartbeat",), kinds=("delay", "close", "move"))


@pytest.mark.wire
def test_a_tiny_scope_of_every_wire_kind_is_played_on_librdkafka_with_its_coverage_line(
        tmp_path: Path) -> None:
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    result, tally = play_scope(resolve("wire:librdkafka:range"), 60, str(tmp_path),
                               scope=TINY)
    points = fault_points(TINY)
    assert {p.kind for p in points} == {"delay", "close", "move"}
    assert tally.played == points and tally.not_applicable == {}
    assert result.runs == len(points)
    assert result.note == f"{len(points)} of {len(points)} fault points played (0 not applicable)"
    for finding in result.findings.values():  # a finding is a replay file
        assert finding.file is not None and load(finding.file)["events"]


#: every error the coordinator may answer an OffsetCommit with, at the second join
COMMIT_ERRORS = FaultScope(steps=("second_join",), protocols=("eager",), apis=("OffsetCommit",),
                           kinds=("error",))


@pytest.mark.wire
def test_every_point_is_judged_for_delivery_with_its_members_committing(tmp_path: Path) -> None:
    """An OffsetCommit error meets a commit (the aimed member commits after every poll), and
    each point's story (records before and after the fault) ends judged for delivery."""
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    result, tally = play_scope(resolve("wire:librdkafka:range"), 120, str(tmp_path),
                               scope=COMMIT_ERRORS)
    assert tally.played == fault_points(COMMIT_ERRORS)
    assert len(result.delivery) == len(tally.played)
    # at the second join the group has two members: c1 commits after every poll, c2 auto
    assert list(result.commit_styles) == ["sync", "auto"]
    assert member_styles(("none", "sync", "auto")) == ("sync", "auto", "none")
    for story_events in (story(p, "librdkafka", "range", styles=("sync", "auto"))
                         for p in tally.played):
        assert not isinstance(story_events, str)
        assert [e.commit_style for e in story_events if isinstance(e, Join)] == ["sync", "auto"]
        assert sum(isinstance(e, Produce) for e in story_events) == 2 * PARTITIONS
    leave = replace(tally.played[0], step="leave")  # three members: a style not offered → none
    leave_events = story(leave, "librdkafka", "range", styles=("sync", "auto"))
    assert not isinstance(leave_events, str)
    assert [e.commit_style for e in leave_events if isinstance(e, Join)] == [
        "sync", "auto", "none"]


def test_a_target_that_is_not_a_wire_target_is_skipped_with_the_reason() -> None:
    result = run_faults(resolve("builtin:range"), 10, "unused")
    assert result.runs == 0 and "not a wire target" in result.skipped
