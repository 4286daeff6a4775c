"""The delivery drawing of ``replay --out``: a row per partition, each offset coloured by
the member it was handed to, a duplicate and a gap marked, a tenure's first record marked."""

from __future__ import annotations

import re
from dataclasses import replace

from groupcheck.audit.delivery_picture import MAX_OFFSETS, delivery_rows, delivery_svg
from groupcheck.engines.saved.files import delivery_pictures
from groupcheck.model.replay import Outcome
from groupcheck.properties.delivery import DeliveryLog, Handed, Tenure
from groupcheck.properties.group import GroupView


def _rebalanced_log() -> DeliveryLog:
    """t0-0: c1 reads 0..3, the partition moves to c2, which reads 3..5 again from 3 (one
    duplicate); t0-1: c1 reads 0 and 2 (offset 1 never handed); t1-0: nothing produced."""
    handed = [Handed(10 + o, "c1", "t0", 0, o, 1) for o in range(4)]
    handed += [Handed(50 + o, "c2", "t0", 0, o, 2) for o in range(3, 6)]
    handed += [Handed(20, "c1", "t0", 1, 0, 1), Handed(21, "c1", "t0", 1, 2, 1)]
    tenures = (Tenure("c1", "t0", 0, 0, 40), Tenure("c2", "t0", 0, 40, None),
               Tenure("c1", "t0", 1, 0, None))
    return _log(handed, tenures, {("t0", 0): 6, ("t0", 1): 3, ("t1", 0): 0})


def _log(handed: list[Handed], tenures: tuple[Tenure, ...],
         watermarks: dict[tuple[str, int], int]) -> DeliveryLog:
    return DeliveryLog(tuple(handed), (), tenures, watermarks, {}, caught_up=False)


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
    handed = [Handed(o, "c1", "t0", 0, o, 1) for o in range(MAX_OFFSETS + 7)]
    log = _log(handed, (Tenure("c1", "t0", 0, 0, None),), {("t0", 0): MAX_OFFSETS + 7})
    (row,) = delivery_rows(log)
    assert row.end - row.first == MAX_OFFSETS and row.hidden == 7
    assert "… 7 more" in delivery_svg(log)


def test_a_replay_draws_the_last_delivery_log_and_nothing_for_a_target_without_one() -> None:
    bare = GroupView(1, "Stable", None, {"t0": 1}, {}, True)
    assert delivery_pictures(Outcome([], views=[bare, None])) == []
    logged = replace(bare, delivery=_rebalanced_log())
    assert delivery_pictures(Outcome([], views=[None, logged, bare])) == [
        delivery_svg(_rebalanced_log())]
