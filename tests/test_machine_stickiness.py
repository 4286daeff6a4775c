"""The state machine judges stickiness (I4a) and user-data hygiene (I12), reaches groups of
four to six members with one subscription, and counts what it judged."""

from __future__ import annotations

from groupcheck.engines.battery.runner import machine_config, run_fuzz
from groupcheck.model.event_shrink import invariant_of
from groupcheck.model.event_types import DomainEvent, Join, Rejoin
from groupcheck.model.fuzz import fuzz
from groupcheck.model.group_events import Partitions, Settle
from groupcheck.model.replay import replay_events
from groupcheck.targets.adapters.builtin import BuiltinGroup
from groupcheck.targets.registry import resolve


def _fuzz(target_name: str, examples: int = 120):
    target = resolve(target_name)
    return fuzz(target.group, machine_config(target), max_examples=examples), target


def test_the_machine_forms_equal_groups_of_four_to_six_and_judges_i4a_there() -> None:
    result, _ = _fuzz("builtin:sticky", 80)
    assert not result.failed, result.violations
    stats = result.stats
    assert max(stats.equal_groups) >= 4 and sum(
        n for size, n in stats.equal_groups.items() if size >= 4) >= 5
    assert stats.judged["I4a"] > 0 and stats.judged["I12"] > 0 and stats.judged["I3"] > 0


def test_a_sticky_assignor_that_shuffles_groups_of_four_is_caught_on_i4a() -> None:
    """Out of the prover's scope (three members at most), in the machine's."""
    result, target = _fuzz("mutant:sticky-shuffles-large-groups")
    assert result.failed and invariant_of(result.violations[0]) == "I4a", result.violations
    joined = {e.member for e in result.events if isinstance(e, Join)}
    assert len(joined) >= 4 and any(isinstance(e, Rejoin) for e in result.events)
    again = replay_events(target.group(), result.events, machine_config(target).promises)
    assert again.violations and invariant_of(again.violations[0]) == "I4a"


def test_state_shared_by_the_consumers_of_a_process_is_caught_on_i12() -> None:
    result, _ = _fuzz("mutant:sticky-shared-state")
    assert result.failed and invariant_of(result.violations[0]) == "I12", result.violations
    assert "sticky user data claims" in result.violations[0]


def test_user_data_without_the_generation_is_caught_without_parity(tmp_path) -> None:
    """The state machine catches it on the subscriptions the leader receives."""
    result = run_fuzz(resolve("mutant:sticky-drops-generation"), 60.0, str(tmp_path))
    assert "I12" in result.findings, result.findings
    assert "carries no generation" in result.findings["I12"].violation


def test_an_old_client_speaking_the_v0_layout_on_purpose_is_not_an_i12_breach() -> None:
    """Pre-KIP-341 members in a mixed group write v0 by design: judged on partitions only."""
    events: list[DomainEvent] = [Partitions("t0", 4)]
    events += [Join(m, ("t0",), ("sticky",), user_data_version=0) for m in ("c1", "c2")]
    events += [Settle(), Rejoin("c1"), Settle()]
    outcome = replay_events(BuiltinGroup("builtin:sticky"), events)
    assert outcome.violations == [], outcome.story


def test_the_leaders_rejoin_rebalances_and_a_sticky_group_keeps_its_partitions() -> None:
    """KIP-568's enforceRebalance on the leader: a new generation, every partition where it
    was (the I4a premise: same members, balanced, one generation)."""
    events: list[DomainEvent] = [Partitions("t0", 6)]
    events += [Join(m, ("t0",), ("sticky",)) for m in ("c1", "c2", "c3", "c4")]
    events.append(Settle())
    group = BuiltinGroup("builtin:sticky")
    first = replay_events(group, events)
    assert first.violations == []
    group = BuiltinGroup("builtin:sticky")
    from groupcheck.model.events import apply_event
    from groupcheck.model.spec import ReferenceModel
    from groupcheck.model.stats import Stats

    model = ReferenceModel(stats=Stats())
    for event in events:
        assert apply_event(event, group, model) == []
    before = model.last_view
    leader = before.leader
    assert apply_event(Rejoin(leader), group, model) == []
    assert apply_event(Settle(), group, model) == []
    after = model.last_view
    assert after.generation == before.generation + 1
    assert {n: m.owned for n, m in after.members.items()} == \
        {n: m.owned for n, m in before.members.items()}
    assert model.stats.judged["I4a"] == 1


def test_a_user_assignor_without_a_contract_is_held_to_isbalanced_by_the_machine() -> None:
    result, target = _fuzz("mutant:custom-whole-topic")
    assert target.balance == "sticky" and not target.sticky
    assert result.failed and invariant_of(result.violations[0]) == "I3", result.violations


def test_kafkas_own_withheld_revocation_is_labelled_k2_and_fails_only_when_strict() -> None:
    """Rule K2: cooperative-sticky with a member subscribed to nothing revokes a partition of
    a balanced assignment and withholds it for a follow-up; labelled, not failed."""
    from groupcheck.model.promises import Promises, judge_i4a
    from groupcheck.model.stats import Stats
    from groupcheck.properties.group import Claim, RebalanceRecord

    record = RebalanceRecord(
        2, "COOPERATIVE", "cooperative-sticky",
        {"m0": Claim((), (), 1), "m1": Claim(("t1",), (("t1", 0), ("t1", 1)), 1)},
        {"m0": (), "m1": (("t1", 0), ("t1", 1))}, {"m0": (), "m1": (("t1", 0),)})
    stats = Stats()
    found, labelled = judge_i4a(record, {"t1": 2}, Promises(), stats)
    assert found == [] and labelled and labelled[0].endswith("(Kafka's own, rule K2)")
    assert stats.judged["I4a"] == 1
    found, labelled = judge_i4a(record, {"t1": 2}, Promises(strict=True), None)
    assert found and not labelled
    moved = RebalanceRecord(2, "COOPERATIVE", "cooperative-sticky", record.claims,
                            record.owned, {"m0": (("t1", 1),), "m1": (("t1", 0),)})
    found, labelled = judge_i4a(moved, {"t1": 2}, Promises(), None)
    assert found and not labelled  # a move to another member is never Kafka's own
