"""I17 in the reference model: a settled view whose target keeps a delivery log is judged on
it (each breach reported once, however often the cumulative log shows it); a view without
one leaves I17 unjudged; the table lists I17 as judged on the wire."""

from __future__ import annotations

from groupcheck.model.spec import ReferenceModel
from groupcheck.model.stats import Stats
from groupcheck.properties.delivery import DeliveryLog, Handed, Tenure
from groupcheck.properties.group import GroupView
from groupcheck.properties.invariants import NUMBERED, by_id


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


def test_a_breach_the_growing_log_shows_again_is_reported_once() -> None:
    model = ReferenceModel()
    assert len(model.observe(_view(_log([0, 1, 3])))) == 1
    assert model.observe(_view(_log([0, 1, 3, 4, 5]))) == []
    assert model.observe(_view(_log([0, 1, 3, 4, 5, 7]))) == [
        "I17: c1 was handed t-0 7 after 5 in one tenure, never 6 (skipped)"]


def test_i17_is_the_last_numbered_invariant_judged_on_the_wire() -> None:
    assert NUMBERED[-1] == by_id("I17")
    assert by_id("I17").name == "delivery" and by_id("I17").judges == ("wire",)
