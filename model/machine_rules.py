"""The state machine's rules: one method per thing that happens to a group.

Each rule draws one event (or a few) and applies it through `run`, so a failure is exactly
a replayable list of events. Hypothesis orders the rules by name (`inspect.getmembers`), so
a renamed rule changes the examples a seed gives; replay files hold events, not rule names.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .event_types import (
    Crash,
    Join,
    Leave,
    Pause,
    Rejoin,
    Resume,
    SlowRevoke,
    Stall,
    Subscribe,
    Unsubscribe,
    Wake,
)
from .group_events import (
    CoordinatorError,
    Delay,
    DeleteTopic,
    Partitions,
    Poll,
    Produce,
    Settle,
    SyncAnswerOrder,
)
from .machine_config import ERRORS
from .machine_state import MachineState
from .static_events import StaticDuplicate, StaticRestart

__all__ = ["ERRORS", "GroupRules"]

#: answers the coordinator may send late, and how late (ms): below the wire targets'
#: session timeout, so a late answer is a slow coordinator, not a lost member
DELAYS = {"join": (300, 1500), "sync": (300, 1500), "heartbeat": (300, 1500)}


class GroupRules(MachineState):
    """Membership, metadata, pauses, records, coordinator faults and time, each gated by
    what the machine's `config` allows."""

    # --- membership ----------------------------------------------------------------------

    @precondition(lambda self: len(self.present()) < self.config.max_members)
    @rule(data=st.data())
    def member_joins(self, data: st.DataObject, settle: bool = True) -> None:
        choices = self.compatible(None) or list(self.config.strategies)
        assignors = data.draw(st.sampled_from(choices), label="as")
        self.run(self.join_event(data, self.free()[0], self.draw_topics(data), assignors))
        if settle:
            self.then_maybe_settle(data)

    @precondition(lambda self: self.config.group_forms
                  and len(self.present()) <= self.config.max_members - 2)
    @rule(data=st.data())
    def members_join_together(self, data: st.DataObject) -> None:
        """Several consumers with one subscription and one assignor list start at once
        (a deployment scales out), then the group settles; half the time its leader
        then asks for a rebalance (a rebalance of a balanced group, I4a's premise)."""
        free = self.free()
        count = data.draw(st.integers(2, len(free)), label="joiners")
        topics = self.draw_topics(data)
        assignors = data.draw(st.sampled_from(self.compatible(None)
                                              or list(self.config.strategies)), label="as")
        for member in free[:count]:
            self.run(self.join_event(data, member, topics, assignors))
        self.run(Settle())
        leader = self.leader()
        if self.config.rejoins and leader and data.draw(st.booleans(), label="then rejoin"):
            self.run(Rejoin(leader))
            self.run(Settle())

    @precondition(lambda self: self.config.rejoins and self.leader() is not None)
    @rule(data=st.data())
    def leader_enforces_rebalance(self, data: st.DataObject) -> None:
        """The leader asks for a rebalance (KIP-568): the group rebalances with unchanged
        membership, so a balanced assignment stays where it is (I4a)."""
        leader = self.leader()
        if leader is not None:  # the precondition holds: it always is
            self.run(Rejoin(leader))
        self.then_maybe_settle(data)

    @precondition(lambda self: bool(self.present()))
    @rule(data=st.data())
    def member_leaves(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(self.present()), label="member")
        self.stalled.discard(member)
        self.run(Leave(member))
        self.then_maybe_settle(data)

    @precondition(lambda self: self.config.faults and self.config.crashes
                  and bool(self.present()))
    @rule(data=st.data())
    def member_crashes(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(self.present()), label="member")
        self.stalled.discard(member)
        self.run(Crash(member))
        self.then_maybe_settle(data)

    @precondition(lambda self: self.config.faults and self.config.stalls
                  and bool(set(self.present()) - self.stalled))
    @rule(data=st.data())
    def member_stalls(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(sorted(set(self.present()) - self.stalled)))
        self.stalled.add(member)
        self.run(Stall(member))
        self.then_maybe_settle(data)

    @precondition(lambda self: bool(self.stalled))
    @rule(data=st.data())
    def member_wakes(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(sorted(self.stalled)), label="member")
        self.stalled.discard(member)
        self.run(Wake(member))
        self.then_maybe_settle(data)

    @precondition(lambda self: bool(self.config.upgrades) and bool(self.present()))
    @rule(data=st.data())
    def member_bounces(self, data: st.DataObject) -> None:
        """A rolling restart moves one member to another assignor list (KIP-429)."""
        upgrades = self.config.upgrades
        member = data.draw(st.sampled_from(self.present()), label="member")
        spec = self.model.members[member].spec
        choices = [a for a in self.compatible(member) if a != spec.assignors
                   and abs(upgrades.index(a) - upgrades.index(spec.assignors)) == 1]
        if not choices:
            return
        self.stalled.discard(member)
        self.run(Leave(member))
        self.run(Join(member, tuple(sorted(spec.topics)),
                      tuple(data.draw(st.sampled_from(choices), label="as")),
                      profile=spec.profile,
                      subscription_version=spec.subscription_version,
                      user_data_version=spec.user_data_version,
                      commit_style=None if spec.commit_style == "none" else spec.commit_style))

    @precondition(lambda self: self.config.subscriptions and bool(self.present()))
    @rule(data=st.data())
    def member_changes_subscription(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(self.present()), label="member")
        topics = data.draw(st.lists(st.sampled_from(sorted(self.model.partitions)),
                                    min_size=1, unique=True).map(sorted), label="topics")
        self.run(Subscribe(member, tuple(topics)))
        self.resubscribed.add(member)

    @precondition(lambda self: self.config.unsubscribes and bool(self.present()))
    @rule(data=st.data())
    def member_unsubscribes(self, data: st.DataObject) -> None:
        """KIP-70: commit, release every owned partition through the listener, leave."""
        member = data.draw(st.sampled_from(self.present()), label="member")
        self.run(Unsubscribe(member))
        self.then_maybe_settle(data)
        # A second chance to settle, kept so seeds give the same examples as before: the
        # closure this class replaced had this call stranded here by an edit (39dbf84).
        self.then_maybe_settle(data)

    # --- metadata ------------------------------------------------------------------------

    @precondition(lambda self: self.config.metadata and bool(self.model.partitions))
    @rule(data=st.data())
    def topic_grows(self, data: st.DataObject) -> None:
        topic = data.draw(st.sampled_from(sorted(self.model.partitions)), label="topic")
        count = self.model.partitions[topic] + data.draw(st.integers(1, 2), label="more")
        self.run(Partitions(topic, count))
        self.then_maybe_settle(data)

    @precondition(lambda self: self.config.metadata and len(self.model.partitions) > 1)
    @rule(data=st.data())
    def topic_is_deleted(self, data: st.DataObject) -> None:
        topic = data.draw(st.sampled_from(sorted(self.model.partitions)), label="topic")
        self.run(DeleteTopic(topic))
        self.then_maybe_settle(data)

    # --- pause, records, faults ----------------------------------------------------------

    @precondition(lambda self: self.config.pauses and bool(self.present()))
    @rule(data=st.data())
    def member_pauses(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(self.present()), label="member")
        owned = self.owned(member)
        if owned:
            parts = data.draw(st.lists(st.sampled_from(owned), min_size=1, unique=True))
            self.run(Pause(member, tuple(sorted(parts))))

    @precondition(lambda self: self.config.pauses and bool(self.present()))
    @rule(data=st.data())
    def member_resumes(self, data: st.DataObject) -> None:
        member = data.draw(st.sampled_from(self.present()), label="member")
        view = self.member_view(member)
        marks = sorted(view.paused) if view else []
        if marks:
            parts = data.draw(st.lists(st.sampled_from(marks), min_size=1, unique=True))
            self.run(Resume(member, tuple(sorted(parts))))

    @precondition(lambda self: bool(self.model.partitions))
    @rule(data=st.data())
    def records_arrive(self, data: st.DataObject) -> None:
        topic = data.draw(st.sampled_from(sorted(self.model.partitions)), label="topic")
        partition = data.draw(st.integers(0, self.model.partitions[topic] - 1))
        self.run(Produce(topic, partition))

    @precondition(lambda self: self.config.faults and bool(self.config.fault_table)
                  and bool(self.present()))
    @rule(data=st.data())
    def coordinator_answers_with_error(self, data: st.DataObject) -> None:
        """The coordinator answers one member's next request of one API with one of the
        errors the config's table lets that API carry."""
        table = self.config.fault_table
        member = data.draw(st.sampled_from(self.present()), label="member")
        api = data.draw(st.sampled_from(sorted(table)), label="api")
        error = data.draw(st.sampled_from(table[api]), label="error")
        self.run(CoordinatorError(member, api, error))

    @precondition(lambda self: self.config.faults and self.config.delays
                  and bool(self.present()))
    @rule(data=st.data())
    def coordinator_answers_late(self, data: st.DataObject) -> None:
        """The coordinator's next answer of one API to one member goes out late."""
        member = data.draw(st.sampled_from(self.present()), label="member")
        api = data.draw(st.sampled_from(sorted(DELAYS)), label="api")
        ms = data.draw(st.sampled_from(DELAYS[api]), label="ms")
        self.run(Delay(member, api, ms))

    @precondition(lambda self: self.config.sync_orders and len(self.present()) > 1)
    @rule(data=st.data())
    def coordinator_orders_sync_answers(self, data: st.DataObject) -> None:
        """The next rebalance's SyncGroup answers go out with the leader's before or
        after one member's (a real coordinator answers in whatever order its network
        does); it waits for the next rebalance the story brings."""
        member = data.draw(st.sampled_from(self.present()), label="member")
        leader_first = data.draw(st.booleans(), label="leader_first")
        self.run(SyncAnswerOrder(member, leader_first))

    @precondition(lambda self: self.config.slow_revokes and bool(self.present()))
    @rule(data=st.data())
    def member_revokes_slowly(self, data: st.DataObject) -> None:
        """The member's next revoke callback outlasts the rebalance (wire targets)."""
        member = data.draw(st.sampled_from(self.present()), label="member")
        self.run(SlowRevoke(member))
        self.then_maybe_settle(data)

    # --- static members (KIP-345) ---------------------------------------------------------

    @precondition(lambda self: bool(self.restartable()))
    @rule(data=st.data())
    def static_member_restarts(self, data: st.DataObject) -> None:
        """A static member (the leader too) restarts within its session timeout with its
        subscription. A changed one is a replay file's (`StaticRestart.topics`): Kafka's
        coordinator takes it without a rebalance (KAFKA-12759), so fuzz would find that
        known gap in every run."""
        member = data.draw(st.sampled_from(self.restartable()), label="member")
        self.stalled.discard(member)
        self.run(StaticRestart(member))

    @precondition(lambda self: bool(self.restartable()) and bool(self.free()))
    @rule(data=st.data())
    def static_instance_started_twice(self, data: st.DataObject) -> None:
        """A second consumer starts with a static member's instance id and fences it; it
        joins with the member's subscription, so only once the group has settled on it."""
        member = data.draw(st.sampled_from(self.restartable()), label="member")
        self.stalled.discard(member)
        self.run(StaticDuplicate(member, self.free()[0]))

    # --- time ----------------------------------------------------------------------------

    @rule(steps=st.integers(1, 12))
    def protocol_steps(self, steps: int) -> None:
        self.run(Poll(steps))

    @rule()
    def group_settles(self) -> None:
        self.run(Settle())
