"""The delivery line ``check``, ``upgrade`` and ``matrix`` print: the verdict over every story
judged for delivery and the widest duplicate window of each commit style."""

from __future__ import annotations

from groupcheck.engines.delivery_line import delivery_line
from groupcheck.properties.delivery import DeliveryVerdict, DeliveryViolation, DuplicateWindow


def _window(style: str | None, first: int, last: int) -> DuplicateWindow:
    return DuplicateWindow("c1", "c2", "t0", 0, first, last, style, allowed=True)


def _breach(rule: str) -> DeliveryViolation:
    return DeliveryViolation(rule, "c2", "t0", 0, (1,), f"broke {rule}")


def test_no_story_judged_for_delivery_prints_no_line() -> None:
    assert delivery_line([], styles=("sync",)) is None


def test_the_widest_window_of_each_style_across_stories_and_zero_for_a_style_without_one(
        ) -> None:
    verdicts = [DeliveryVerdict((), (_window("auto", 4, 5), _window("auto", 10, 12))),
                DeliveryVerdict((), (_window("auto", 0, 1),))]
    assert delivery_line(verdicts, styles=("auto", "sync")) == (
        "delivery: held in 2 stories; duplicate window ≤ 3 records (auto), 0 (sync)")


def test_a_window_of_a_style_not_listed_or_not_known_still_shows() -> None:
    verdicts = [DeliveryVerdict((), (_window(None, 7, 7), _window("revoke", 2, 3)))]
    assert delivery_line(verdicts) == (
        "delivery: held in 1 story; duplicate window ≤ 1 records (style unknown), 2 (revoke)")


def test_a_broken_story_says_how_many_broke_and_the_rules_they_broke() -> None:
    verdicts = [DeliveryVerdict((_breach("lost"), _breach("duplicate"), _breach("lost")), ()),
                DeliveryVerdict((), ()), DeliveryVerdict((_breach("commit-unowned"),), ())]
    assert delivery_line(verdicts) == (
        "delivery: broken in 2 of 3 stories (lost ×2, duplicate ×1, commit-unowned ×1)")
