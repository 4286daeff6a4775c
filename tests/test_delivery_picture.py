"""The delivery drawing of ``replay --out``: a row per partition, each offset coloured by
the member it was handed to, a duplicate and a gap marked, a tenure's first record marked."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from groupcheck.audit.delivery_picture import MAX_OFFSETS, delivery_rows, delivery_svg
from groupcheck.engines.saved.files import delivery_pictures
from groupcheck.properties.group import GroupView


@dataclass(frozen=True)
class Handed:
    ts: int
    member: str
    topic: str
    partition: int
    offset: int
    generation: int | None = None


@dataclass(frozen=True)
class Tenure:
    member: str
    topic: str
    partition: int
    start: int
    end: int | None


@dataclass(frozen=True)
class Log:
    handed: tuple[Handed, ...]
    tenures: tuple[Tenure, ...]
    high_watermarks: Mapping[tuple[str, int], int]
    log_start: Mapping[tuple[str, int], int] = field(default_factory=dict)


def _rebalanced_log() -> Log:
    """t0-0: c1 reads 0..3, the partition moves to c2, which reads 3..5 again from 3 (one
    duplicate); t0-1: c1 reads 0 and 2 (offset 1 never handed); t1-0: nothing produced."""
    handed = [Handed(10 + o, "c1", "t0", 0, o) for o in range(4)]
    handed += [Handed(50 + o, "c2", "t0", 0, o) for o in range(3, 6)]
    handed += [Handed(20, "c1", "t0", 1, 0), Handed(21, "c1", "t0", 1, 2)]
    tenures = (Tenure("c1", "t0", 0, 0, 40), Tenure("c2", "t0", 0, 40, None),
               Tenure("c1", "t0", 1, 0, None))
    return Log(tuple(handed), tenures, {("t0", 0): 6, ("t0", 1): 3, ("t1", 0): 0})


def test_each_partition_is_one_row_with_the_members_each_offset_was_handed_to() -> None:
    rows = {r.partition: r for r in delivery_rows(_rebalanced_log())}
    assert sorted(rows) == [("t0", 0), ("t0", 1), ("t1", 0)]
    moved = rows[("t0", 0)]
    assert (moved.first, moved.end) == (0, 6)
    assert moved.handed_to[3] == ("c1", "c2") and moved.handed_to[5] == ("c2",)
    assert moved.duplicates() == [3] and moved.gaps() == []
    assert moved.tenure_starts == frozenset({0, 3})
    assert rows[("t0", 1)].gaps() == [1] and rows[("t0", 1)].duplicates() == []
    assert rows[("t1", 0)].first == rows[("t1", 0)].end == 0


def test_the_drawing_marks_the_duplicate_and_the_gap_once_each_beside_a_legend() -> None:
    drawn = delivery_svg(_rebalanced_log())
    labels = re.findall(r">(t\d-\d)</text>", drawn)
    assert labels == ["t0-0", "t0-1", "t1-0"]
    # one of each in the grid, one of each in the legend
    assert drawn.count('class="duplicate"') == 2 and drawn.count('class="gap"') == 2
    assert drawn.count('class="tenure"') == 3 + 1
    assert "handed again (duplicate)" in drawn and "never handed (gap)" in drawn
    assert ">×2</text>" in drawn


def test_a_long_partition_is_cut_at_the_widest_row_drawn_and_says_how_many_more() -> None:
    handed = tuple(Handed(o, "c1", "t0", 0, o) for o in range(MAX_OFFSETS + 7))
    log = Log(handed, (Tenure("c1", "t0", 0, 0, None),), {("t0", 0): MAX_OFFSETS + 7})
    (row,) = delivery_rows(log)
    assert row.end - row.first == MAX_OFFSETS and row.hidden == 7
    assert "… 7 more" in delivery_svg(log)


def test_a_replay_draws_the_last_delivery_log_and_nothing_for_a_target_without_one() -> None:
    view = GroupView(1, "Stable", None, {"t0": 1}, {}, True)
    assert delivery_pictures([view, None]) == []
    logged = _Viewed(_rebalanced_log())
    assert delivery_pictures([None, logged, None]) == [delivery_svg(_rebalanced_log())]


@dataclass(frozen=True)
class _Viewed:
    """A view as the replay hands it over, with a delivery log (a wire target's)."""

    delivery: Log
