"""Static members' events on a group that never goes quiet (a fake target), and the wait
they rely on, `event_steps.until`: a wait for something only the target's clients can end
(a fenced static member saying so, KIP-345) ends at its condition or at the time a settle
would be given (past any violation it sees), never after a step count that a busy group can take
for hours (each wire step waits up to a minute); a static restart starts its new consumer
with the subscription the member has now, and the state machine restarts a static member only
once the group has settled on that subscription."""

from __future__ import annotations

from dataclasses import dataclass, field

from groupcheck.model.event_steps import SETTLE_BUDGET, until
from groupcheck.model.event_types import Join
from groupcheck.model.group_events import Partitions, Settle
from groupcheck.model.machine import MachineConfig, make_machine
from groupcheck.model.machine_rules import GroupRules
from groupcheck.model.spec import ReferenceModel
from groupcheck.model.static_events import StaticDuplicate, StaticRestart
from groupcheck.properties.group import GroupView, MemberSpec, MemberView
from groupcheck.properties.settle_bound import GroupTimeouts
from groupcheck.targets.registry import group_target_factory

from helpers.environment import make_group_target

TIMEOUTS = GroupTimeouts(session_timeout_ms=2000, rebalance_timeout_ms=3000,
                         heartbeat_interval_ms=300)


@dataclass
class Busy:
    """A group that always has something to show and never settles what is waited for:
    each step takes ``tick_ms`` of its clock; ``timeouts`` as a wire group states them."""

    timeouts: GroupTimeouts | None
    tick_ms: int = 100
    clock_ms: int = 0
    steps: int = 0
    shown: GroupView = field(default_factory=lambda: make_group_target("builtin:range").view())

    def step(self, within_ms: int | None = None) -> bool:
        self.steps += 1
        self.clock_ms += self.tick_ms
        return True

    def view(self) -> GroupView:
        return self.shown


def test_a_wait_on_a_target_with_timeouts_ends_at_the_settle_bound() -> None:
    target, model = Busy(TIMEOUTS), ReferenceModel()
    assert until(model, target, lambda: False) == []  # type: ignore[arg-type]
    bound_ms = 4 * (300 + 3000)  # MAX_SETTLE_GENERATIONS rebalances of the bound
    assert bound_ms <= target.clock_ms <= bound_ms + target.tick_ms


def test_a_wait_on_a_target_without_timeouts_ends_after_the_settle_budget() -> None:
    target = Busy(None)
    assert until(ReferenceModel(), target, lambda: False) == []  # type: ignore[arg-type]
    assert target.steps == SETTLE_BUDGET


def test_a_wait_ends_when_its_condition_holds() -> None:
    target = Busy(TIMEOUTS)
    assert until(ReferenceModel(), target, lambda: target.steps == 3) == []  # type: ignore[arg-type]
    assert target.steps == 3


class ViolatingOnce(ReferenceModel):
    """A model that sees one violation, at its first look."""

    looked = 0

    def observe(self, view: GroupView) -> list[str]:
        self.looked += 1
        return ["I1: t0-0 went to b while a still owned it"] if self.looked == 1 else []


def test_a_wait_goes_on_past_a_violation_and_returns_it() -> None:
    """A replay looks past a violation for the one its file saved (finding 21's twins show
    I1 after finding 5's I6): the wait ends at its condition or its bound, not there."""
    target = Busy(TIMEOUTS)
    assert until(ViolatingOnce(), target, lambda: target.steps == 5) == [  # type: ignore[arg-type]
        "I1: t0-0 went to b while a still owned it"]
    assert target.steps == 5


@dataclass
class BusyStatic(Busy):
    """`Busy`, running static members (their joins and leaves change nothing it shows)."""

    name: str = "busy"
    static_membership: bool = True
    joined: list[MemberSpec] = field(default_factory=list)

    def join(self, member: str, spec: MemberSpec) -> None:
        self.joined.append(spec)

    def leave(self, member: str) -> None:
        pass


def test_a_replaced_member_that_never_says_it_is_fenced_is_judged_within_the_bound() -> None:
    """KIP-345's fenced duplicate on a group that stays busy: the twin's event judges I14
    once a settle's time has passed, rather than stepping on for ``SETTLE_BUDGET`` steps
    (four hundred minutes at most on the wire)."""
    target, model = BusyStatic(TIMEOUTS), ReferenceModel()
    model.joined("a", MemberSpec(("t0",), ("range",), group_instance_id="ia"))
    out = StaticDuplicate("a", "c").apply(target, model)  # type: ignore[arg-type]
    assert out and out[0].startswith("I14: a") and out[0].endswith("(it reported nothing)")
    assert target.steps < SETTLE_BUDGET


def test_a_static_restart_keeps_the_subscription_the_member_has_now() -> None:
    """A member that joined with t0 and t1 and then subscribed to t1 alone restarts
    subscribed to t1: its join's topics would be a changed subscription, which Kafka's
    coordinator takes without a rebalance (KAFKA-12759), leaving t0 to nobody."""
    target, model = BusyStatic(TIMEOUTS), ReferenceModel()
    model.joined("a", MemberSpec(("t0", "t1"), ("range",), group_instance_id="ia"))
    model.subscribed("a", ("t1",))
    StaticRestart("a").apply(target, model)  # type: ignore[arg-type]
    assert [spec.topics for spec in target.joined] == [("t1",)]


def _group(generation: int, settled: bool) -> GroupView:
    a = MemberView("a", "a-id", generation, frozenset({("t0", 0)}), frozenset(),
                   frozenset({"t0"}), "EAGER", "java", True, True)
    return GroupView(generation, "Stable" if settled else "PreparingRebalance", "a",
                     {"t0": 1}, {"a": a}, settled)


def test_a_static_restart_into_a_rebalance_under_way_is_not_held_to_kip_345() -> None:
    """A subscribe started generation 3 and the restart comes before it completes: the
    rebalance is the subscribe's, not the restart's (I14 promises nothing here)."""
    target, model = BusyStatic(TIMEOUTS, shown=_group(3, True)), ReferenceModel()
    model.metadata("t0", 1)
    model.joined("a", MemberSpec(("t0",), ("range",), group_instance_id="ia"))
    model.last_view = _group(2, False)
    assert StaticRestart("a").apply(target, model) == []  # type: ignore[arg-type]
    model.last_view = _group(2, True)
    assert StaticRestart("a").apply(target, model)[0].startswith(  # type: ignore[arg-type]
        "I14: a's static restart rebalanced the group (generation 2 → 3)")


class _Drawn:
    """A rule's draws, given in order (as Hypothesis's ``data`` would draw them)."""

    def __init__(self, *values: object) -> None:
        self.values = list(values)

    def draw(self, strategy: object, label: str | None = None) -> object:
        return self.values.pop(0)


def _static_rules_may_run(machine: GroupRules) -> list[bool]:
    """Whether the restart and the twin rules' preconditions let them run now."""
    rules = (GroupRules.static_member_restarts, GroupRules.static_instance_started_twice)
    return [all(p(machine) for p in r.hypothesis_stateful_rule.preconditions)  # type: ignore[attr-defined]
            for r in rules]


def test_the_machine_restarts_no_static_member_whose_new_subscription_is_not_settled() -> None:
    """A static member restarted, or started twice, before the coordinator took its new
    subscription would rejoin with a changed one, which Kafka takes without a rebalance
    (KAFKA-12759): the machine waits until the group has settled after a ``subscribe``."""
    config = MachineConfig(strategies=(("range",),), statics=True)
    machine = make_machine(group_target_factory("builtin:range"), config)()
    try:
        for event in (Partitions("t0", 2), Partitions("t1", 1),
                      Join("c1", ("t0",), ("range",), group_instance_id="i-c1"), Settle()):
            machine.run(event)
        assert machine.restartable() == ["c1"] and all(_static_rules_may_run(machine))
        machine.member_changes_subscription(_Drawn("c1", ["t0", "t1"]))
        assert machine.restartable() == [] and not any(_static_rules_may_run(machine))
        machine.run(Settle())
        assert machine.restartable() == ["c1"] and all(_static_rules_may_run(machine))
    finally:
        machine.teardown()
