"""The Hypothesis state machine: domain events against a target, judged by the model.

Rules are named after what happens to a group (`member_joins`, `member_stalls`, …); each
draws one event, applies it through `apply_event` (so a failure is exactly a replayable
list of events), and the invariants — one small named function per invariant id — fail
when the model saw a violation of theirs in that step. Hypothesis then shrinks the list.
Two rules exist to reach what chance rarely does: `members_join_together` forms groups of
up to six members with one subscription, and `leader_enforces_rebalance` rebalances such a
group with unchanged membership, where a sticky assignor must move nothing (I4a).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from ..properties.group import GroupTarget, MemberView
from .events import Event, apply_event
from .machine_config import UPGRADE_PATH, MachineConfig, config_for, wire_config
from .spec import ReferenceModel
from .stats import Stats

__all__ = ["UPGRADE_PATH", "MachineConfig", "ViolationFound", "config_for", "make_machine",
           "wire_config"]

NAMES = ("c1", "c2", "c3", "c4", "c5", "c6")
ERRORS = {"sync": ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS"),
          "heartbeat": ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS")}
#: answers the coordinator may send late, and how late (ms): below the wire targets'
#: session timeout, so a late answer is a slow coordinator, not a lost member
DELAYS = {"join": (300, 1500), "sync": (300, 1500), "heartbeat": (300, 1500)}


class ViolationFound(AssertionError):
    """The model objected; ``events`` replays it, ``violations`` says what broke."""

    def __init__(self, violations: list[str], events: list[Event]) -> None:
        self.violations = violations
        self.events = [dict(e) for e in events]
        super().__init__(f"{violations[0]} (after {len(events)} events)")


def make_machine(target_factory: Callable[[], GroupTarget], config: MachineConfig,
                 on_event: Callable[[], None] | None = None,
                 stats: Stats | None = None) -> type[RuleBasedStateMachine]:
    """A state-machine class driving fresh targets from ``target_factory``;
    ``on_event`` is told of every event applied (for progress counters); ``stats`` collects
    judgements and figures over every example."""
    names = NAMES[:max(config.max_members, 1)]

    class GroupMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.target = target_factory()
            self.model = ReferenceModel(promises=config.promises, stats=stats)
            self.events: list[Event] = []
            self.last: list[str] = []
            self.stalled: set[str] = set()

        def teardown(self) -> None:
            self.target.close()

        def then_maybe_settle(self, data: st.DataObject) -> None:
            """Half the time the group settles right after an event: rebalances complete
            often enough to matter, and the shrinker can still drop the settle."""
            if data.draw(st.booleans(), label="then settle"):
                self.run({"op": "settle"})

        def run(self, event: Event) -> None:
            if on_event is not None:
                on_event()
            self.events.append(event)
            self.last = apply_event(event, self.target, self.model)
            if stats is not None:
                for text in self.model.labelled:
                    stats.inherited_events.setdefault(text.split(": ")[1].split()[0],
                                                      [dict(e) for e in self.events])
            self.model.labelled.clear()

        def present(self) -> list[str]:
            return [n for n in names if n in self.model.members]

        def free(self) -> list[str]:
            return [n for n in names if n not in self.model.members]

        def leader(self) -> str | None:
            last = self.model.last_view
            return last.leader if last and last.leader in self.model.members else None

        def join_event(self, data: st.DataObject, member: str, topics: list[str],
                       assignors: tuple[str, ...]) -> dict[str, Any]:
            return {"op": "join", "member": member, "topics": topics,
                    "assignors": list(assignors),
                    "profile": data.draw(st.sampled_from(config.profiles), label="profile"),
                    "subscription_version": data.draw(
                        st.sampled_from(config.subscription_versions), label="sv"),
                    "user_data_version": data.draw(
                        st.sampled_from(config.user_data_versions), label="uv")}

        def draw_topics(self, data: st.DataObject) -> list[str]:
            return data.draw(st.lists(st.sampled_from(sorted(self.model.partitions)),
                                      min_size=1, unique=True).map(sorted), label="topics")

        def compatible(self, moving: str | None) -> list[tuple[str, ...]]:
            """Assignor lists within one upgrade step of every other member's list: a
            direct [range] → [cooperative-sticky] mix is fatal (INCONSISTENT_GROUP_PROTOCOL)."""
            if not config.upgrades:
                return list(config.strategies)
            others = [self.model.members[n].spec.assignors for n in self.present()
                      if n != moving] + [spec.assignors for spec in self.model.crashed]
            return [a for a in config.strategies if all(
                abs(config.upgrades.index(a) - config.upgrades.index(o)) <= 1 for o in others)]

        def member_view(self, member: str) -> MemberView | None:
            """The member as the last observed view showed it (views are not re-read: a
            view hands over the callbacks and rebalances since the previous one)."""
            last = self.model.last_view
            return last.members.get(member) if last else None

        def owned(self, member: str) -> list[tuple[str, int]]:
            view = self.member_view(member)
            return sorted(view.owned) if view else []

        if not config.initial_members:
            @initialize()
            def topics_exist(self) -> None:
                for topic, count in sorted(config.topics.items()):
                    self.run({"op": "partitions", "topic": topic, "count": count})
        else:
            @initialize(data=st.data())
            def topics_and_members_exist(self, data: st.DataObject) -> None:
                """Slow targets (the wire) start every example from a settled group, so
                each example spends its events on what happens to a group."""
                for topic, count in sorted(config.topics.items()):
                    self.run({"op": "partitions", "topic": topic, "count": count})
                for _ in range(config.initial_members):
                    self.member_joins(data, settle=False)
                self.run({"op": "settle"})

        # --- membership ------------------------------------------------------------------

        @precondition(lambda self: len(self.present()) < config.max_members)
        @rule(data=st.data())
        def member_joins(self, data: st.DataObject, settle: bool = True) -> None:
            choices = self.compatible(None) or list(config.strategies)
            assignors = data.draw(st.sampled_from(choices), label="as")
            self.run(self.join_event(data, self.free()[0], self.draw_topics(data), assignors))
            if settle:
                self.then_maybe_settle(data)

        @precondition(lambda self: config.group_forms
                      and len(self.present()) <= config.max_members - 2)
        @rule(data=st.data())
        def members_join_together(self, data: st.DataObject) -> None:
            """Several consumers with one subscription and one assignor list start at once
            (a deployment scales out), then the group settles; half the time its leader
            then asks for a rebalance (a rebalance of a balanced group, I4a's premise)."""
            free = self.free()
            count = data.draw(st.integers(2, len(free)), label="joiners")
            topics = self.draw_topics(data)
            assignors = data.draw(st.sampled_from(self.compatible(None)
                                                  or list(config.strategies)), label="as")
            for member in free[:count]:
                self.run(self.join_event(data, member, topics, assignors))
            self.run({"op": "settle"})
            leader = self.leader()
            if config.rejoins and leader and data.draw(st.booleans(), label="then rejoin"):
                self.run({"op": "rejoin", "member": leader})
                self.run({"op": "settle"})

        @precondition(lambda self: config.rejoins and self.leader() is not None)
        @rule(data=st.data())
        def leader_enforces_rebalance(self, data: st.DataObject) -> None:
            """The leader asks for a rebalance (KIP-568): the group rebalances with unchanged
            membership, so a balanced assignment stays where it is (I4a)."""
            self.run({"op": "rejoin", "member": self.leader()})
            self.then_maybe_settle(data)

        @precondition(lambda self: bool(self.present()))
        @rule(data=st.data())
        def member_leaves(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(self.present()), label="member")
            self.stalled.discard(member)
            self.run({"op": "leave", "member": member})
            self.then_maybe_settle(data)


        @precondition(lambda self: config.faults and config.crashes and bool(self.present()))
        @rule(data=st.data())
        def member_crashes(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(self.present()), label="member")
            self.stalled.discard(member)
            self.run({"op": "crash", "member": member})
            self.then_maybe_settle(data)


        @precondition(lambda self: config.faults and config.stalls
                      and bool(set(self.present()) - self.stalled))
        @rule(data=st.data())
        def member_stalls(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(sorted(set(self.present()) - self.stalled)))
            self.stalled.add(member)
            self.run({"op": "stall", "member": member})
            self.then_maybe_settle(data)


        @precondition(lambda self: bool(self.stalled))
        @rule(data=st.data())
        def member_wakes(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(sorted(self.stalled)), label="member")
            self.stalled.discard(member)
            self.run({"op": "wake", "member": member})
            self.then_maybe_settle(data)


        @precondition(lambda self: bool(config.upgrades) and bool(self.present()))
        @rule(data=st.data())
        def member_bounces(self, data: st.DataObject) -> None:
            """A rolling restart moves one member to another assignor list (KIP-429)."""
            member = data.draw(st.sampled_from(self.present()), label="member")
            spec = self.model.members[member].spec
            choices = [a for a in self.compatible(member) if a != spec.assignors
                       and abs(config.upgrades.index(a) - config.upgrades.index(
                           spec.assignors)) == 1]
            if not choices:
                return
            self.stalled.discard(member)
            self.run({"op": "leave", "member": member})
            self.run({"op": "join", "member": member, "topics": sorted(spec.topics),
                      "assignors": list(data.draw(st.sampled_from(choices), label="as")),
                      "profile": spec.profile,
                      "subscription_version": spec.subscription_version,
                      "user_data_version": spec.user_data_version})

        @precondition(lambda self: config.subscriptions and bool(self.present()))
        @rule(data=st.data())
        def member_changes_subscription(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(self.present()), label="member")
            topics = data.draw(st.lists(st.sampled_from(sorted(self.model.partitions)),
                                        min_size=1, unique=True).map(sorted), label="topics")
            self.run({"op": "subscribe", "member": member, "topics": topics})

        @precondition(lambda self: config.unsubscribes and bool(self.present()))
        @rule(data=st.data())
        def member_unsubscribes(self, data: st.DataObject) -> None:
            """KIP-70: commit, release every owned partition through the listener, leave."""
            member = data.draw(st.sampled_from(self.present()), label="member")
            self.run({"op": "unsubscribe", "member": member})
            self.then_maybe_settle(data)

        # --- metadata --------------------------------------------------------------------
            self.then_maybe_settle(data)


        @precondition(lambda self: config.metadata and bool(self.model.partitions))
        @rule(data=st.data())
        def topic_grows(self, data: st.DataObject) -> None:
            topic = data.draw(st.sampled_from(sorted(self.model.partitions)), label="topic")
            count = self.model.partitions[topic] + data.draw(st.integers(1, 2), label="more")
            self.run({"op": "partitions", "topic": topic, "count": count})
            self.then_maybe_settle(data)


        @precondition(lambda self: config.metadata and len(self.model.partitions) > 1)
        @rule(data=st.data())
        def topic_is_deleted(self, data: st.DataObject) -> None:
            topic = data.draw(st.sampled_from(sorted(self.model.partitions)), label="topic")
            self.run({"op": "delete_topic", "topic": topic})

        # --- pause, records, faults ------------------------------------------------------
            self.then_maybe_settle(data)


        @precondition(lambda self: config.pauses and bool(self.present()))
        @rule(data=st.data())
        def member_pauses(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(self.present()), label="member")
            owned = self.owned(member)
            if owned:
                parts = data.draw(st.lists(st.sampled_from(owned), min_size=1, unique=True))
                self.run({"op": "pause", "member": member, "partitions": sorted(parts)})

        @precondition(lambda self: config.pauses and bool(self.present()))
        @rule(data=st.data())
        def member_resumes(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(self.present()), label="member")
            view = self.member_view(member)
            marks = sorted(view.paused) if view else []
            if marks:
                parts = data.draw(st.lists(st.sampled_from(marks), min_size=1, unique=True))
                self.run({"op": "resume", "member": member, "partitions": sorted(parts)})

        @precondition(lambda self: bool(self.model.partitions))
        @rule(data=st.data())
        def records_arrive(self, data: st.DataObject) -> None:
            topic = data.draw(st.sampled_from(sorted(self.model.partitions)), label="topic")
            partition = data.draw(st.integers(0, self.model.partitions[topic] - 1))
            self.run({"op": "produce", "topic": topic, "partition": partition})

        @precondition(lambda self: config.faults and bool(self.present()))
        @rule(data=st.data())
        def coordinator_answers_with_error(self, data: st.DataObject) -> None:
            member = data.draw(st.sampled_from(self.present()), label="member")
            api = data.draw(st.sampled_from(sorted(ERRORS)), label="api")
            error = data.draw(st.sampled_from(ERRORS[api]), label="error")
            self.run({"op": "error", "member": member, "api": api, "error": error})

        @precondition(lambda self: config.faults and config.delays and bool(self.present()))
        @rule(data=st.data())
        def coordinator_answers_late(self, data: st.DataObject) -> None:
            """The coordinator's next answer of one API to one member goes out late."""
            member = data.draw(st.sampled_from(self.present()), label="member")
            api = data.draw(st.sampled_from(sorted(DELAYS)), label="api")
            ms = data.draw(st.sampled_from(DELAYS[api]), label="ms")
            self.run({"op": "delay", "member": member, "api": api, "ms": ms})

        @precondition(lambda self: config.sync_orders and len(self.present()) > 1)
        @rule(data=st.data())
        def coordinator_orders_sync_answers(self, data: st.DataObject) -> None:
            """The next rebalance's SyncGroup answers go out with the leader's before or
            after one member's (a real coordinator answers in whatever order its network
            does); it waits for the next rebalance the story brings."""
            member = data.draw(st.sampled_from(self.present()), label="member")
            leader_first = data.draw(st.booleans(), label="leader_first")
            self.run({"op": "sync_order", "member": member, "leader_first": leader_first})

        @precondition(lambda self: config.slow_revokes and bool(self.present()))
        @rule(data=st.data())
        def member_revokes_slowly(self, data: st.DataObject) -> None:
            """The member's next revoke callback outlasts the rebalance (wire targets)."""
            member = data.draw(st.sampled_from(self.present()), label="member")
            self.run({"op": "slow_revoke", "member": member})
            self.then_maybe_settle(data)

        # --- time ------------------------------------------------------------------------

        @rule(steps=st.integers(1, 12))
        def protocol_steps(self, steps: int) -> None:
            self.run({"op": "poll", "steps": steps})

        @rule()
        def group_settles(self) -> None:
            self.run({"op": "settle"})

        # --- invariants: one per id --------------------------------------------------------

        def _fail_on(self, *ids: str) -> None:
            hits = [v for v in self.last if any(f"{i}:" in v for i in ids)]
            if hits:
                if stats is not None:
                    stats.violation_seen()
                raise ViolationFound(hits, self.events)

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

    GroupMachine.__name__ = "GroupMachine"
    return GroupMachine
