"""Event lists shared by the wire-mode tests (real clients in member drivers on the mock)."""

from __future__ import annotations

import dataclasses

from groupcheck.model.event_types import (
    DomainEvent,
    Join,
    Leave,
    Pause,
    Resume,
    SlowRevoke,
    Stall,
    Subscribe,
)
from groupcheck.model.group_events import Partitions, Poll, Produce, Settle


def join(member: str, assignor: str, *topics: str, profile: str = "librdkafka") -> Join:
    """A join event; on the wire a member is judged by its own client's profile whatever
    ``profile`` says (it only labels the story)."""
    return Join(member, tuple(topics or ("t0",)), (assignor,), profile=profile)


def topics() -> list[DomainEvent]:
    return [Partitions("t0", 3), Partitions("t1", 2)]


def two_members(assignor: str) -> list[DomainEvent]:
    """c1 on t0 and t1 with records flowing, c1 pauses t0-1, c2 joins on t0."""
    return [*topics(), join("c1", assignor, "t0", "t1"), Settle(), Produce("t0", 0),
            Pause("c1", (("t0", 1),)), Produce("t0", 1), join("c2", assignor), Settle()]


def smoke(assignor: str) -> list[DomainEvent]:
    """A few rebalances: a join, a subscription change, records on paused and handed-over
    partitions, a leave."""
    return [*two_members(assignor), Produce("t0", 1), Subscribe("c2", ("t0", "t1")), Settle(),
            Produce("t1", 0), Leave("c1"), Settle(), Produce("t0", 1), Poll(3)]


def stall_past_max_poll(assignor: str) -> list[DomainEvent]:
    """c2 stops polling; the group evicts it after max.poll.interval.ms and hands its
    partitions to c1 while c2 still holds them (it learns of it only when it polls again)."""
    return [*topics(), join("c1", assignor), join("c2", assignor), Settle(), Stall("c2"),
            Settle()]


def slow_revoke(assignor: str) -> list[DomainEvent]:
    """c1's revoke callback outlasts the rebalance that c2's join starts."""
    return [*topics(), join("c1", assignor), Settle(), SlowRevoke("c1"), join("c2", assignor),
            Settle()]


def pause_outlives_the_assignment(assignor: str) -> list[DomainEvent]:
    """c1 pauses all of t0; c2 takes part of it and leaves, so c1 gets it back; records
    arrive on every t0 partition while c1 holds them again (they must stay unreturned)."""
    return [Partitions("t0", 3), join("c1", assignor), Settle(),
            Pause("c1", (("t0", 0), ("t0", 1), ("t0", 2))), join("c2", assignor), Settle(),
            Leave("c2"), Settle(), *(Produce("t0", p) for p in range(3))]


def subscription_switch(assignor: str) -> list[DomainEvent]:
    """c2 moves from t1 to t0 (dropping a topic, adding another)."""
    return [*topics(), join("c1", assignor, "t0"), join("c2", assignor, "t1"), Settle(),
            Subscribe("c2", ("t0",)), Settle()]


def without_pauses(events: list[DomainEvent]) -> list[DomainEvent]:
    return [e for e in events if not isinstance(e, (Pause, Resume))]


def five_members(assignor: str) -> list[DomainEvent]:
    """Five members join t0 (10 partitions) one after the other, each join settling."""
    return [Partitions("t0", 10),
            *(e for i in range(1, 6) for e in (join(f"c{i}", assignor), Settle()))]


def with_profiles(events: list[DomainEvent], *profiles: str) -> list[DomainEvent]:
    """The events with each join judged by the profile of the client it lands on (members
    go to a mixed group's clients in turn, in the order their names first join)."""
    turns: dict[str, str] = {}
    out: list[DomainEvent] = []
    for event in events:
        if isinstance(event, Join):
            turns.setdefault(event.member, profiles[len(turns) % len(profiles)])
            event = dataclasses.replace(event, profile=turns[event.member])
        out.append(event)
    return out
