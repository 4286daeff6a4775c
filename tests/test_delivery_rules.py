"""I17's rules on hand-built delivery logs of one partition ``t-0``: each log breaks exactly
one rule (and its counterpart holds), and a log generated from a correct consumption model
(owners change, each new owner starts at the last commit) always holds, its duplicate
windows exactly the ranges handed again."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from groupcheck.properties.delivery import (
    RULES,
    Commit,
    DeliveryLog,
    DeliveryVerdict,
    Handed,
    Tenure,
    judge_delivery,
)

TP = ("t", 0)


def _handed(member: str, first_ts: int, offsets: list[int]) -> list[Handed]:
    return [Handed(first_ts + i, member, "t", 0, o, 1) for i, o in enumerate(offsets)]


def _commit(ts: int, member: str, offset: int, error: str | None = None) -> Commit:
    return Commit(ts, member, 1, (("t", 0, offset),), error, "sync")


def _log(handed: list[Handed], tenures: list[Tenure], commits: tuple[Commit, ...] = (),
         *, watermark: int = 100, caught_up: bool = False,
         styles: dict[str, str] | None = None) -> DeliveryLog:
    return DeliveryLog(tuple(handed), commits, tuple(tenures), {TP: watermark},
                       styles or {}, caught_up)


def _tenure(member: str, start: int, end: int | None) -> Tenure:
    return Tenure(member, "t", 0, start, end)


def _rules(verdict: DeliveryVerdict) -> list[tuple[str, str, tuple[int, ...]]]:
    return [(v.rule, v.member, v.offsets) for v in verdict.violations]


# --- lost ----------------------------------------------------------------------------------

def test_an_offset_below_the_watermark_no_member_was_handed_is_judged_lost() -> None:
    log = _log(_handed("c1", 1, [0, 1, 2]), [_tenure("c1", 0, None)], watermark=5,
               caught_up=True)
    assert _rules(judge_delivery(log)) == [("lost", "c1", (3, 4))]


def test_a_group_that_read_to_the_watermark_lost_nothing() -> None:
    log = _log(_handed("c1", 1, [0, 1, 2, 3, 4]), [_tenure("c1", 0, None)], watermark=5,
               caught_up=True)
    assert judge_delivery(log).violations == ()


def test_lost_is_not_judged_before_the_group_caught_up() -> None:
    log = _log(_handed("c1", 1, [0, 1, 2]), [_tenure("c1", 0, None)], watermark=5)
    assert judge_delivery(log).violations == ()


def test_a_record_handed_outside_every_tenure_still_counts_as_handed() -> None:
    log = _log(_handed("c1", 1, [0, 1]) + _handed("c2", 50, [2]),
               [_tenure("c1", 0, None)], watermark=3, caught_up=True)
    assert judge_delivery(log).violations == ()


# --- skipped -------------------------------------------------------------------------------

def test_a_member_that_skips_an_offset_is_judged_skipped() -> None:
    log = _log(_handed("c1", 1, [0, 1, 3, 4]), [_tenure("c1", 0, None)])
    assert _rules(judge_delivery(log)) == [("skipped", "c1", (2,))]


def test_a_member_handed_an_offset_twice_in_one_tenure_skipped_nothing() -> None:
    log = _log(_handed("c1", 1, [0, 1, 1, 2]), [_tenure("c1", 0, None)])
    assert judge_delivery(log).violations == ()


# --- start-later / start-earlier -----------------------------------------------------------

def _handover(new_first: int, committed: int = 5) -> DeliveryLog:
    """c1 is handed 0-4 and commits ``committed``; c2 takes over at ts 10 from new_first."""
    handed = _handed("c1", 1, [0, 1, 2, 3, 4]) + _handed("c2", 11, [new_first, new_first + 1])
    return _log(handed, [_tenure("c1", 0, 10), _tenure("c2", 10, None)],
                (_commit(6, "c1", committed),))


def test_a_new_owner_that_starts_past_the_committed_offset_is_judged_start_later() -> None:
    assert _rules(judge_delivery(_handover(7))) == [("start-later", "c2", (5, 6))]


def test_a_new_owner_that_starts_at_the_committed_offset_holds() -> None:
    assert judge_delivery(_handover(5)).violations == ()


def test_a_member_that_kept_its_position_across_an_eager_rebalance_holds() -> None:
    handed = _handed("c1", 1, [0, 1, 2, 3, 4]) + _handed("c1", 11, [5, 6])
    log = _log(handed, [_tenure("c1", 0, 10), _tenure("c1", 10, None)], (_commit(6, "c1", 3),))
    assert judge_delivery(log).violations == ()


def test_a_new_owner_that_starts_before_the_committed_offset_is_judged_start_earlier() -> None:
    handed = _handed("c1", 1, [0, 1, 2]) + _handed("c2", 11, [3, 4, 5])
    log = _log(handed, [_tenure("c1", 0, 10), _tenure("c2", 10, None)], (_commit(6, "c1", 5),))
    assert _rules(judge_delivery(log)) == [("start-earlier", "c2", (3, 4))]


def test_a_first_owner_starts_at_the_log_start() -> None:
    later = DeliveryLog(tuple(_handed("c1", 1, [3, 4])), (), (_tenure("c1", 0, None),),
                        {TP: 5}, {}, False, {TP: 2})
    assert _rules(judge_delivery(later)) == [("start-later", "c1", (2,))]


# --- duplicate -----------------------------------------------------------------------------

def test_records_handed_again_from_the_previous_owners_commit_are_an_allowed_window() -> None:
    handed = _handed("c1", 1, list(range(8))) + _handed("c2", 11, [5, 6, 7, 8, 9])
    log = _log(handed, [_tenure("c1", 0, 10), _tenure("c2", 10, None)], (_commit(9, "c1", 5),),
               styles={"c1": "sync", "c2": "sync"})
    verdict = judge_delivery(log)
    assert verdict.violations == ()
    assert [(w.previous, w.member, w.first, w.last, w.length, w.style, w.allowed)
            for w in verdict.duplicates] == [("c1", "c2", 5, 7, 3, "sync", True)]
    assert verdict.widest == 3


def test_a_record_handed_again_below_the_previous_owners_commit_is_judged_duplicate() -> None:
    handed = _handed("c1", 1, [0, 1, 2, 3, 4]) + _handed("c2", 11, [5, 6, 2])
    log = _log(handed, [_tenure("c1", 0, 10), _tenure("c2", 10, None)], (_commit(6, "c1", 5),))
    verdict = judge_delivery(log)
    assert _rules(verdict) == [("duplicate", "c2", (2,))]
    assert [(w.first, w.last, w.allowed) for w in verdict.duplicates] == [(2, 2, False)]


def test_a_duplicate_names_whose_commit_it_fell_below() -> None:
    """The previous owner's own commit, or (when it committed nothing) the partition's
    committed offset, another member's."""
    own = _handed("c1", 1, [0, 1, 2]) + _handed("c2", 11, [1])
    log = _log(own, [_tenure("c1", 0, 10), _tenure("c2", 10, None)], (_commit(6, "c1", 3),))
    assert [v.sentence for v in judge_delivery(log).violations if v.rule == "duplicate"] == [
        "I17: c2 was handed t-0 1 again after c1, which had committed past them (duplicate)"]
    other = _handed("c0", 1, [0, 1, 2]) + _handed("c1", 5, [2]) + _handed("c2", 11, [1])
    log = _log(other, [_tenure("c0", 0, 4), _tenure("c1", 4, 10), _tenure("c2", 10, None)],
               (_commit(3, "c0", 3),))
    assert [v.sentence for v in judge_delivery(log).violations
            if v.rule == "duplicate" and v.member == "c2"] == [
        "I17: c2 was handed t-0 1 again after c1, when the partition's committed offset was "
        "past them (duplicate)"]


def test_a_window_across_the_previous_owners_commit_is_cut_there() -> None:
    handed = _handed("c1", 1, list(range(8))) + _handed("c2", 11, [5, 6, 7, 3, 4])
    log = _log(handed, [_tenure("c1", 0, 10), _tenure("c2", 10, None)], (_commit(9, "c1", 5),))
    assert [(w.first, w.last, w.allowed) for w in judge_delivery(log).duplicates] == [
        (3, 4, False), (5, 7, True)]


# --- commit-unowned ------------------------------------------------------------------------

def test_a_commit_of_a_partition_the_member_does_not_own_is_judged_commit_unowned() -> None:
    log = _log(_handed("c1", 1, [0, 1]), [_tenure("c1", 0, None)], (_commit(5, "c2", 2),))
    assert _rules(judge_delivery(log)) == [("commit-unowned", "c2", (2,))]


def test_a_commit_of_an_owned_and_an_unowned_partition_is_judged_for_the_unowned_one() -> None:
    commit = Commit(5, "c1", 1, (("t", 0, 2), ("t", 1, 7)), None, "revoke")
    log = _log(_handed("c1", 1, [0, 1]), [_tenure("c1", 0, None)], (commit,))
    assert [(v.rule, v.partition, v.offsets) for v in judge_delivery(log).violations] == [
        ("commit-unowned", 1, (7,))]


def test_a_commit_answered_as_the_tenure_ends_is_the_owners() -> None:
    log = _log(_handed("c1", 1, [0, 1]), [_tenure("c1", 0, 10)], (_commit(10, "c1", 2),))
    assert judge_delivery(log).violations == ()


def _at(generation: int, ts: int, offset: int) -> Commit:
    return Commit(ts, "c1", generation, (("t", 0, offset),), None, "auto")


def test_a_commit_at_the_generation_a_cooperative_revoke_came_in_is_the_owners() -> None:
    # assigned at generation 1, revoked in generation 2 (KIP-429): the client's commit at its
    # unassign, answered after the revoke callback returned, is still of generation 2
    revoked = Tenure("c1", "t", 0, 0, 10, 1, True, 2)
    log = _log(_handed("c1", 1, [0, 1]), [revoked], (_at(2, 12, 2),))
    assert judge_delivery(log).violations == ()


def test_a_commit_a_generation_after_the_revoke_is_judged_commit_unowned() -> None:
    revoked = Tenure("c1", "t", 0, 0, 10, 1, True, 2)
    log = _log(_handed("c1", 1, [0, 1]), [revoked], (_at(3, 12, 2),))
    assert _rules(judge_delivery(log)) == [("commit-unowned", "c1", (2,))]


def test_a_rejected_commit_of_an_unowned_partition_is_no_violation() -> None:
    log = _log(_handed("c1", 1, [0, 1]), [_tenure("c1", 0, None)],
               (_commit(5, "c2", 2, "ILLEGAL_GENERATION"),))
    assert judge_delivery(log).violations == ()


# --- commit-backwards ----------------------------------------------------------------------

def test_a_committed_offset_that_goes_down_is_judged_commit_backwards() -> None:
    log = _log(_handed("c1", 1, [0, 1, 2, 3, 4]), [_tenure("c1", 0, None)],
               (_commit(6, "c1", 5), _commit(7, "c1", 3)))
    assert _rules(judge_delivery(log)) == [("commit-backwards", "c1", (5, 3))]


def test_commits_that_only_go_up_hold() -> None:
    log = _log(_handed("c1", 1, [0, 1, 2, 3, 4]), [_tenure("c1", 0, None)],
               (_commit(6, "c1", 3), _commit(7, "c1", 5), _commit(8, "c1", 2, "STALE")))
    assert judge_delivery(log).violations == ()


# --- auto-commit-revoke --------------------------------------------------------------------

def _auto_handover(committed: int) -> DeliveryLog:
    handed = _handed("c1", 1, [0, 1, 2, 3, 4]) + _handed("c2", 11, [committed, 5])
    return _log(handed, [_tenure("c1", 0, 10), _tenure("c2", 10, None)],
                (_commit(6, "c1", committed),), styles={"c1": "auto", "c2": "auto"})


def test_an_auto_commit_member_that_gives_up_uncommitted_records_is_judged() -> None:
    verdict = judge_delivery(_auto_handover(4))
    assert _rules(verdict) == [("auto-commit-revoke", "c1", (4,))]
    assert [(w.first, w.last, w.allowed) for w in verdict.duplicates] == [(4, 4, True)]


def test_an_auto_commit_member_that_committed_everything_before_the_revoke_holds() -> None:
    assert judge_delivery(_auto_handover(5)).violations == ()


def test_an_auto_commit_member_handed_its_partition_back_is_judged_at_its_new_tenure() -> None:
    """An eager member gives everything up and may be handed the same partition back: its
    new tenure starts from the committed offset, so the commit is due by then (a commit
    made later does not undo the record handed again)."""
    handed = _handed("c1", 1, [0, 1, 2]) + _handed("c1", 11, [2])
    tenures = [_tenure("c1", 0, 10), _tenure("c1", 10, None)]
    late = _log(handed, tenures, (_commit(5, "c1", 2), _commit(12, "c1", 3)),
                styles={"c1": "auto"})
    assert _rules(judge_delivery(late)) == [("auto-commit-revoke", "c1", (2,))]
    on_time = _log(handed[:3], tenures, (_commit(9, "c1", 3),), styles={"c1": "auto"})
    assert judge_delivery(on_time).violations == ()


def test_an_auto_commit_member_that_lost_its_partition_is_not_held_to_a_commit() -> None:
    log = _auto_handover(4)
    lost = replace(log, tenures=(replace(log.tenures[0], revoked=False), log.tenures[1]))
    assert judge_delivery(lost).violations == ()


# --- the verdict and the model's sentences -------------------------------------------------

def test_violations_come_in_the_rules_order_with_an_i17_sentence() -> None:
    log = _log(_handed("c1", 1, [0, 2]), [_tenure("c1", 0, None)],
               (_commit(5, "c1", 3), _commit(6, "c1", 1)), watermark=3, caught_up=True)
    rules = [v.rule for v in judge_delivery(log).violations]
    assert rules == sorted(rules, key=RULES.index) == ["lost", "skipped", "commit-backwards"]
    assert judge_delivery(log).violations[1].sentence == (
        "I17: c1 was handed t-0 2 after 0 in one tenure, never 1 (skipped)")


# --- a correct consumption model always holds ----------------------------------------------

@st.composite
def _consumption(draw: st.DrawFn) -> tuple[DeliveryLog, list[tuple[str, str, int, int]]]:
    """Owners take the partition in turn; each starts at the last commit, reads some
    records (the last to the watermark) and may commit up to its position. Returns the log
    and the re-delivered ranges (previous owner, new owner, first, last)."""
    watermark = draw(st.integers(1, 30))
    owners = draw(st.lists(st.sampled_from(["c1", "c2", "c3"]), min_size=1, max_size=6))
    handed: list[Handed] = []
    commits: list[Commit] = []
    tenures: list[Tenure] = []
    expected: list[tuple[str, str, int, int]] = []
    ts, committed, highest = 0, 0, -1
    for i, member in enumerate(owners):
        start, ts = ts, ts + 1
        last = watermark if i == len(owners) - 1 else draw(st.integers(committed, watermark))
        handed += _handed(member, ts, list(range(committed, last)))
        ts += last - committed
        if i and last > committed and highest >= committed:
            expected.append((owners[i - 1], member, committed, min(highest, last - 1)))
        highest = max(highest, last - 1)
        commit = draw(st.none() | st.integers(committed, last))
        if commit is not None:
            commits.append(_commit(ts, member, commit))
            committed, ts = commit, ts + 1
        tenures.append(_tenure(member, start, None if i == len(owners) - 1 else ts))
    log = _log(handed, tenures, tuple(commits), watermark=watermark, caught_up=True,
               styles=dict.fromkeys(owners, "sync"))
    return log, expected


@settings(max_examples=300, deadline=None)
@given(_consumption())
def test_a_log_of_correct_consumption_holds_with_its_redelivered_ranges_as_windows(
        case: tuple[DeliveryLog, list[tuple[str, str, int, int]]]) -> None:
    log, expected = case
    verdict = judge_delivery(log)
    assert verdict.violations == ()
    assert [(w.previous, w.member, w.first, w.last) for w in verdict.duplicates] == expected
    assert all(w.allowed for w in verdict.duplicates)
