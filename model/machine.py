"""The Hypothesis state machine: domain events against a target, judged by the model.

`GroupMachine` is a `RuleBasedStateMachine` whose rules (model/machine_rules.py) are named
after what happens to a group (`member_joins`, `member_stalls`, …); each draws one event,
applies it through `run` (so a failure is exactly a replayable list of events), and the
invariants — one small named method per invariant id — fail when the model saw a violation
of theirs in that step. Hypothesis then shrinks the list. Two rules exist to reach what
chance rarely does: `members_join_together` forms groups of up to six members with one
subscription, and `leader_enforces_rebalance` rebalances such a group with unchanged
membership, where a sticky assignor must move nothing (I4a).

`make_machine` binds a target factory and a `MachineConfig` to a subclass of
`EmptyStart` (topics only) or `SettledStart` (topics and a settled group).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant

from ..properties.group import GroupTarget
from .event_types import DomainEvent
from .events import apply_event
from .group_events import Partitions, Settle
from .machine_config import UPGRADE_PATH, MachineConfig, config_for, wire_config
from .machine_connections import ConnectionRules, MoveRules
from .machine_rules import GroupRules
from .machine_state import HarnessAbort, carried
from .stats import Stats

__all__ = ["UPGRADE_PATH", "EmptyStart", "GroupMachine", "HarnessAbort", "MachineConfig",
           "SettledStart", "ViolationFound", "config_for", "make_machine", "wire_config"]


class ViolationFound(AssertionError):
    """The model objected; ``events`` replays it, ``violations`` says what broke."""

    def __init__(self, violations: list[str], events: list[DomainEvent]) -> None:
        self.violations = violations
        self.events = list(events)
        super().__init__(f"{violations[0]} (after {len(events)} events)")


class GroupMachine(GroupRules):
    """The rules, applied through `run`, and the invariants that judge each step."""

    def run(self, event: DomainEvent) -> None:
        if self.on_event is not None:
            self.on_event()
        self.events.append(event)
        try:
            with carried():
                self.last = apply_event(event, self.target, self.model)
        except Exception as exc:
            self._met(exc)
            raise
        if self.model.last_view is not None and self.model.last_view.settled:
            self.resubscribed.clear()  # the coordinator has taken every new subscription
        if self.inherited is not None:
            for text in self.model.labelled:
                self.inherited.setdefault(text.split(": ")[1].split()[0], list(self.events))
        self.model.labelled.clear()

    # --- invariants: one per id ----------------------------------------------------------

    def _fail_on(self, *ids: str) -> None:
        hits = [v for v in self.last if any(f"{i}:" in v for i in ids)]
        if hits:
            if self.stats is not None:
                self.stats.violation_seen()
            found = ViolationFound(hits, self.events)
            self._met(found)
            raise found

    def _met(self, failure: Exception) -> None:
        if self.met is not None:
            self.met.append(failure)

    @invariant()
    def exclusive_ownership(self) -> None:
        self._fail_on("I1")

    @invariant()
    def complete_and_balanced_when_settled(self) -> None:
        self._fail_on("I2", "I3")

    @invariant()
    def stickiness(self) -> None:
        self._fail_on("I4a")

    @invariant()
    def revoke_before_reassign(self) -> None:
        self._fail_on("I5")

    @invariant()
    def generation_hygiene(self) -> None:
        self._fail_on("I6")

    @invariant()
    def listener_contract(self) -> None:
        self._fail_on("I7")

    @invariant()
    def pause_retention(self) -> None:
        self._fail_on("I8")

    @invariant()
    def subscription_change(self) -> None:
        self._fail_on("I9")

    @invariant()
    def convergence(self) -> None:
        self._fail_on("I11")

    @invariant()
    def user_data_hygiene(self) -> None:
        self._fail_on("I12")


class EmptyStart(GroupMachine):
    """Every example starts with the configured topics and no members."""

    @initialize()
    def topics_exist(self) -> None:
        for topic, count in sorted(self.config.topics.items()):
            self.run(Partitions(topic, count))


class SettledStart(GroupMachine):
    """Slow targets (the wire) start every example from a settled group, so each example
    spends its events on what happens to a group."""

    @initialize(data=st.data())
    def topics_and_members_exist(self, data: st.DataObject) -> None:
        for topic, count in sorted(self.config.topics.items()):
            self.run(Partitions(topic, count))
        for _ in range(self.config.initial_members):
            self.member_joins(data, settle=False)
        self.run(Settle())


def make_machine(target_factory: Callable[[], GroupTarget], config: MachineConfig,
                 on_event: Callable[[], None] | None = None,
                 stats: Stats | None = None,
                 inherited: dict[str, list[DomainEvent]] | None = None,
                 met: list[Exception] | None = None) -> type[RuleBasedStateMachine]:
    """A state-machine class driving fresh targets from ``target_factory``;
    ``on_event`` is told of every event applied (for progress counters); ``stats`` collects
    judgements and figures over every example, ``inherited`` for each invariant the events
    of the first example where Kafka's own behaviour broke it; ``met`` gets every failure an
    example met, in order. Each call binds a fresh subclass."""
    start = SettledStart if config.initial_members else EmptyStart
    bases: tuple[type, ...] = (*((ConnectionRules,) if config.closes else ()),
                               *((MoveRules,) if config.moves else ()), start)
    return cast(type[GroupMachine], type("GroupMachine", bases, {
        "target_factory": staticmethod(target_factory), "config": config,
        "on_event": None if on_event is None else staticmethod(on_event), "stats": stats,
        "inherited": inherited, "met": met, "__doc__": start.__doc__,
        "__qualname__": "GroupMachine"}))
