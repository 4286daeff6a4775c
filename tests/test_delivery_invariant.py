"""I17 in the reference model: a settled view whose target keeps a delivery log is judged on
it (each breach reported once, however often the cumulative log shows it); a view without
one leaves I17 unjudged; a story that ends before its group settles is judged on its last
view, in the model and in a replay; the table lists I17 as judged on the wire."""

from __future__ import annotations

from dataclasses import replace

from groupcheck.model.group_events import Partitions
from groupcheck.model.replay import replay_events
from groupcheck.model.spec import ReferenceModel
from groupcheck.model.stats import Stats
from groupcheck.properties.delivery import DeliveryLog, Handed, Tenure
from groupcheck.properties.group import GroupView
from groupcheck.properties.invariants import NUMBERED, by_id
from groupcheck.targets.adapters.builtin import BuiltinGroup

from helpers.logged_group import LoggedGroup


def _log(offsets: list[int]) -> DeliveryLog:
    handed = tuple(Handed(i + 1, "c1", "t", 0, o, 1) for i, o in enumerate(offsets))
    return DeliveryLog(handed, (), (Tenure("c1", "t", 0, 0, None),), {("t", 0): 10}, {}, False)


def _view(delivery: DeliveryLog | None, *, settled: bool = True) -> GroupView:
    return GroupView(1, "Stable", None, {}, {}, settled, delivery=delivery)


def test_a_settled_view_with_a_skipping_delivery_log_is_an_i17_finding() -> None:
    stats = Stats()
    out = ReferenceModel(stats=stats).observe(_view(_log([0, 1, 3])))
    assert out == ["I17: c1 was handed t-0 3 after 1 in one tenure, never 2 (skipped)"]
    assert stats.judged["I17"] == 1


def test_a_correct_delivery_log_holds_i17() -> None:
    stats = Stats()
    assert ReferenceModel(stats=stats).observe(_view(_log([0, 1, 2, 3]))) == []
    assert stats.judged["I17"] == 1


def test_a_view_without_a_delivery_log_leaves_i17_unjudged() -> None:
    stats = Stats()
    assert ReferenceModel(stats=stats).observe(_view(None)) == []
    assert "I17" not in stats.judged


def test_i17_waits_for_a_settled_view() -> None:
    stats = Stats()
    assert ReferenceModel(stats=stats).observe(_view(_log([0, 2]), settled=False)) == []
    assert "I17" not in stats.judged


def test_a_story_that_ends_unsettled_is_judged_for_i17_on_its_last_view() -> None:
    stats = Stats()
    model = ReferenceModel(stats=stats)
    assert model.observe(_view(_log([0, 2]), settled=False)) == []
    assert model.story_ended() == ["I17: c1 was handed t-0 2 after 0 in one tenure, never 1 "
                                   "(skipped)"]
    assert stats.judged["I17"] == 1


def test_a_story_that_ends_settled_is_not_judged_again_at_its_end() -> None:
    model = ReferenceModel()
    assert len(model.observe(_view(_log([0, 2])))) == 1
    assert model.story_ended() == []


class _NeverSettles(LoggedGroup):
    """A builtin group whose every view is unsettled and shows one skipping delivery log."""

    def view(self) -> GroupView:
        return replace(super().view(), state="Rebalancing", settled=False)


def test_a_replay_seeking_i17_finds_it_at_the_end_of_a_story_that_never_settles() -> None:
    group = _NeverSettles(BuiltinGroup("builtin:range"), lambda: _log([0, 2]))
    outcome = replay_events(group, [Partitions("t", 1)],
                            wanted=lambda found: any(v.startswith("I17") for v in found))
    assert outcome.violations == ["I17: c1 was handed t-0 2 after 0 in one tenure, never 1 "
                                  "(skipped)"]
    assert outcome.story[-1].endswith("(at the story's end, the group not settled)")


def test_a_breach_the_growing_log_shows_again_is_reported_once() -> None:
    model = ReferenceModel()
    assert len(model.observe(_view(_log([0, 1, 3])))) == 1
    assert model.observe(_view(_log([0, 1, 3, 4, 5]))) == []
    assert model.observe(_view(_log([0, 1, 3, 4, 5, 7]))) == [
        "I17: c1 was handed t-0 7 after 5 in one tenure, never 6 (skipped)"]


def test_i17_is_the_last_numbered_invariant_judged_on_the_wire() -> None:
    assert NUMBERED[-1] == by_id("I17")
    assert by_id("I17").name == "delivery" and by_id("I17").judges == ("wire",)
