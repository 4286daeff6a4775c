"""Delivery in the reports: each story's last delivery log is judged once when it ends, and
``check``, ``upgrade`` and ``matrix`` print the delivery line when a story was judged, and
carry it as data in their ``--json``."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from groupcheck.engines.battery.check_report import check_json, check_text
from groupcheck.engines.battery.results import BatteryResult, EngineResult
from groupcheck.engines.delivery_line import delivery_json, delivery_line
from groupcheck.engines.releases.matrix import Cell, MatrixRun
from groupcheck.engines.releases.matrix_report import matrix_json, matrix_text
from groupcheck.engines.upgrades.plan import parse_side, plans_for
from groupcheck.engines.upgrades.play import UpgradeOutcome
from groupcheck.engines.upgrades.table import UpgradeTable, table_text
from groupcheck.model.fuzz import fuzz
from groupcheck.model.machine import config_for
from groupcheck.model.replay import Outcome
from groupcheck.model.stats import Stats
from groupcheck.properties.delivery import Commit, DeliveryLog, Handed, Tenure
from groupcheck.properties.group import GroupView
from groupcheck.targets.offers import Offer
from groupcheck.targets.registry import group_target_factory
from groupcheck.targets.target import Target

from helpers.logged_group import LoggedGroup

TARGET = "builtin:range"


def _moved_log() -> DeliveryLog:
    """c1 reads t0-0 up to 3 and commits 2 (sync); the partition moves to c2 (auto), which
    reads from the commit: offsets 2 and 3 are handed again, within the window."""
    handed = [Handed(10 + o, "c1", "t0", 0, o, 1) for o in range(4)]
    handed += [Handed(50 + o, "c2", "t0", 0, o, 2) for o in range(2, 6)]
    return DeliveryLog(tuple(handed), (Commit(30, "c1", 1, (("t0", 0, 2),), None, "sync"),),
                       (Tenure("c1", "t0", 0, 0, 40, 1), Tenure("c2", "t0", 0, 40, None, 2)),
                       {("t0", 0): 6}, {"c1": "sync", "c2": "auto"}, caught_up=True)


def _view(log: DeliveryLog | None) -> GroupView:
    return GroupView(2, "Stable", "c2", {"t0": 1}, {}, True, delivery=log)


def _judged() -> Stats:
    stats = Stats()
    stats.delivered(_moved_log())
    return stats


def test_a_story_ending_with_a_delivery_log_is_judged_once_with_its_styles() -> None:
    stats = _judged()
    stats.delivered(None)  # a target without a delivery log adds nothing
    (verdict,) = stats.delivery
    assert verdict.held and [(w.first, w.last, w.style) for w in verdict.duplicates] == [
        (2, 3, "sync")]
    assert list(stats.commit_styles) == ["sync", "auto"]


def test_a_replay_outcome_hands_over_the_last_delivery_log_its_views_showed() -> None:
    log = _moved_log()
    assert Outcome([], views=[_view(log), _view(None), None]).delivery is log
    assert Outcome([], views=[_view(None), None]).delivery is None


def test_the_state_machine_judges_each_examples_last_delivery_log() -> None:
    make = group_target_factory(TARGET)
    result = fuzz(lambda: LoggedGroup(make(), _moved_log), config_for("range"),  # type: ignore[arg-type]
                  max_examples=4, seed_value=1)
    assert result.stats.delivery == [_judged().delivery[0]] * result.examples


def _engine(delivered: bool) -> EngineResult:
    engine = EngineResult("fuzz", ("I1",), runs=3, judged=Counter({"I1": 3}))
    if delivered:
        stats = _judged()
        engine.delivery, engine.commit_styles = stats.delivery, stats.commit_styles
    return engine


def test_check_prints_the_delivery_line_under_the_assignor_judged_for_delivery() -> None:
    stats = _judged()
    line = delivery_line(stats.delivery, stats.commit_styles)
    assert line == ("delivery: held in 1 story; duplicate window ≤ 2 records (sync), "
                    "0 (auto)")
    offers = [Offer("range", Target(TARGET, "range")), Offer("sticky", Target(TARGET, "sticky"))]
    results = [BatteryResult(TARGET, [_engine(True)], assignor="range"),
               BatteryResult(TARGET, [_engine(False)], assignor="sticky")]
    summary = check_text(TARGET, offers, results).splitlines()
    at = next(i for i, text in enumerate(summary) if text.strip().startswith("range"))
    assert summary[at + 1].strip() == line
    assert sum("delivery:" in text for text in summary) == 1


def test_check_without_a_delivery_log_prints_no_delivery_line() -> None:
    offers = [Offer("range", Target(TARGET, "range"))]
    text = check_text(TARGET, offers, [BatteryResult(TARGET, [_engine(False)])])
    assert "delivery" not in text


def test_matrix_prints_one_delivery_line_over_its_cells() -> None:
    cells = [Cell(TARGET, a, 1.0, BatteryResult(TARGET, [_engine(a == "range")], assignor=a))
             for a in ("range", "sticky")]
    lines = matrix_text(MatrixRun(cells, budget=1.0, seed=0, jobs=1)).splitlines()
    stats = _judged()
    assert lines.count(delivery_line(stats.delivery, stats.commit_styles)) == 1


def test_upgrade_prints_the_delivery_line_over_its_paths() -> None:
    two, one = plans_for(parse_side("wire:librdkafka@2.3.0:range"),
                         parse_side("wire:librdkafka@2.16.1:cooperative-sticky"))
    stats = _judged()
    table = UpgradeTable([UpgradeOutcome(two, "certified", delivery=stats.delivery,
                                         commit_styles=stats.commit_styles),
                          UpgradeOutcome(one, "certified")])
    assert table_text(table).splitlines()[-2] == delivery_line(stats.delivery,
                                                               stats.commit_styles)
    assert "delivery" not in table_text(UpgradeTable([UpgradeOutcome(one, "certified")]))


def test_the_json_reports_carry_the_delivery_verdict_beside_the_line() -> None:
    stats = _judged()
    line = delivery_line(stats.delivery, stats.commit_styles)
    expected = {"stories": 1, "broken": 0, "rules": {}, "windows": {"sync": 2, "auto": 0},
                "line": line}
    assert delivery_json(stats.delivery, stats.commit_styles) == expected
    offers = [Offer("range", Target(TARGET, "range")), Offer("sticky", Target(TARGET, "sticky"))]
    results = [BatteryResult(TARGET, [_engine(True)], assignor="range"),
               BatteryResult(TARGET, [_engine(False)], assignor="sticky")]
    body = check_json(TARGET, offers, results)
    assert body["delivery"] == expected
    assert body["assignors"]["range"].get("delivery") == expected
    assert body["assignors"]["sticky"].get("delivery") is None
    two, one = plans_for(parse_side("wire:librdkafka@2.3.0:range"),
                         parse_side("wire:librdkafka@2.16.1:cooperative-sticky"))
    rows = [UpgradeOutcome(two, "certified", delivery=stats.delivery,
                           commit_styles=stats.commit_styles).to_json(),
            UpgradeOutcome(one, "certified").to_json()]
    assert [r["delivery"] for r in rows] == [expected, None]
    cells = [Cell(TARGET, a, 1.0, BatteryResult(TARGET, [_engine(a == "range")], assignor=a))
             for a in ("range", "sticky")]
    assert matrix_json(MatrixRun(cells, budget=1.0, seed=0, jobs=1),
                       [TARGET])["delivery"] == expected


def test_a_broken_story_counts_its_rules_in_the_json() -> None:
    log = _moved_log()
    skipped = replace(log, handed=tuple(h for h in log.handed if (h.member, h.offset)
                                        != ("c2", 4)))
    stats = Stats()
    stats.delivered(skipped)
    body = delivery_json(stats.delivery, stats.commit_styles)
    # c2 skips offset 4, which no one else was handed either: skipped, and lost
    assert body is not None and body["broken"] == 1
    assert body["rules"] == {"lost": 1, "skipped": 1}
    assert body["line"].startswith("delivery: broken in 1 of 1 story (lost ×1, skipped ×1)")
