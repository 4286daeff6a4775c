"""What the state machine's rules read: its configuration and the group as the model sees it.

`MachineState` is the state half of the machine (`GroupMachine` in model/machine.py): the
configuration `make_machine` binds as class attributes, a fresh target and reference model
per example, and the helpers the rules (model/machine_rules.py) draw their events from.
Every call into the target runs under `carried`: a target's `HarnessError` (the harness
failed, not the group) leaves Hypothesis as a `HarnessAbort`, never judged or shrunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine

from ..properties.group import GroupTarget, MemberView
from ..properties.harness import HarnessError
from .event_types import DomainEvent, Join
from .group_events import Settle
from .machine_config import MachineConfig
from .spec import ReferenceModel
from .stats import Stats

__all__ = ["HarnessAbort", "MachineState", "carried"]

NAMES = ("c1", "c2", "c3", "c4", "c5", "c6")


class HarnessAbort(BaseException):
    """A target's `HarnessError` on its way out of Hypothesis, which would judge and shrink
    any Exception as a failing example; a BaseException ends the run at once instead."""

    def __init__(self, error: HarnessError) -> None:
        super().__init__(str(error))
        self.error = error


@contextmanager
def carried() -> Iterator[None]:
    """Around every call into the target: its `HarnessError` leaves as a `HarnessAbort`."""
    try:
        yield
    except HarnessError as exc:
        raise HarnessAbort(exc) from exc


class MachineState(RuleBasedStateMachine):
    """One example's target and model, and what the rules ask of them. The class attributes
    are bound by `make_machine`: where fresh targets come from, what the machine may do, who
    is told of every event applied (progress counters), and where judgements and figures
    over every example go (and the events of the first example where Kafka's own behaviour
    broke an invariant)."""

    target_factory: Callable[[], GroupTarget]
    config: MachineConfig
    on_event: Callable[[], None] | None = None
    stats: Stats | None = None
    inherited: dict[str, list[DomainEvent]] | None = None
    met: list[Exception] | None = None  # every failure an example met, in order

    def __init__(self) -> None:
        super().__init__()
        with carried():
            self.target = self.target_factory()
        self.model = ReferenceModel(promises=self.config.promises, stats=self.stats,
                                    generations=self.config.generations)
        self.events: list[DomainEvent] = []
        self.last: list[str] = []
        self.stalled: set[str] = set()
        self.resubscribed: set[str] = set()  # subscribed anew since the group last settled
        self.member_names = NAMES[:max(self.config.max_members, 1)]
        self.static_joins = 0  # static consumers started (each takes an instance id of its own)

    def teardown(self) -> None:
        with carried():
            self.target.close()
        if self.stats is not None and self.model.last_view is not None:
            self.stats.delivered(self.model.last_view.delivery)

    def run(self, event: DomainEvent) -> None:
        """Apply one event and keep what the model objected to (`GroupMachine.run`)."""
        raise NotImplementedError

    def then_maybe_settle(self, data: st.DataObject) -> None:
        """Half the time the group settles right after an event: rebalances complete
        often enough to matter, and the shrinker can still drop the settle."""
        if data.draw(st.booleans(), label="then settle"):
            self.run(Settle())

    def present(self) -> list[str]:
        return [n for n in self.member_names if n in self.model.members]

    def free(self) -> list[str]:
        return [n for n in self.member_names if n not in self.model.members]

    def leader(self) -> str | None:
        last = self.model.last_view
        return last.leader if last and last.leader in self.model.members else None

    def join_event(self, data: st.DataObject, member: str, topics: list[str],
                   assignors: tuple[str, ...]) -> Join:
        config = self.config
        static = self.static_membership() and data.draw(st.booleans(), label="static")
        # a new consumer never reuses an instance id a crashed one may still hold: that is a
        # static restart (StaticRestart), and with another subscription the coordinator does
        # not rebalance for it (KAFKA-12759, see the wire-clients how-to)
        self.static_joins += static
        return Join(member, tuple(topics), assignors,
                    profile=data.draw(st.sampled_from(config.profiles), label="profile"),
                    subscription_version=data.draw(
                        st.sampled_from(config.subscription_versions), label="sv"),
                    user_data_version=data.draw(
                        st.sampled_from(config.user_data_versions), label="uv"),
                    group_instance_id=f"i-{member}-{self.static_joins}" if static else None,
                    commit_style=self.draw_commit_style(data))

    def draw_commit_style(self, data: st.DataObject) -> str | None:
        """A joining member's commit style, None for ``none`` (a story file leaves it out);
        with one style to take nothing is drawn, so seeds replay as before styles existed."""
        styles = self.config.commit_styles
        style = styles[0] if len(styles) == 1 else data.draw(st.sampled_from(styles),
                                                             label="commit style")
        return None if style == "none" else style

    def static_membership(self) -> bool:
        """Whether the machine may make static members (KIP-345): its config allows them and
        the target runs them (a wire group whose clients all take a group instance id)."""
        return self.config.statics and bool(getattr(self.target, "static_membership", False))

    def static_present(self) -> list[str]:
        """The members present that joined with a group instance id."""
        return [n for n in self.present()
                if self.model.members[n].spec.group_instance_id is not None]

    def restartable(self) -> list[str]:
        """The static members whose subscription the group has settled on: one restarted
        (or started twice) before its new subscription reached the coordinator rejoins with
        a changed one, which Kafka's coordinator takes without a rebalance (KAFKA-12759)."""
        return [n for n in self.static_present() if n not in self.resubscribed]

    def draw_topics(self, data: st.DataObject) -> list[str]:
        return data.draw(st.lists(st.sampled_from(sorted(self.model.partitions)),
                                  min_size=1, unique=True).map(sorted), label="topics")

    def compatible(self, moving: str | None) -> list[tuple[str, ...]]:
        """Assignor lists within one upgrade step of every other member's list: a
        direct [range] → [cooperative-sticky] mix is fatal (INCONSISTENT_GROUP_PROTOCOL)."""
        config = self.config
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
