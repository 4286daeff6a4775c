"""Event lists shared by the wire-mode tests (real clients in member drivers on the mock)."""

from __future__ import annotations

from typing import Any

Event = dict[str, Any]


def join(member: str, assignor: str, *topics: str, profile: str = "librdkafka") -> Event:
    """A join event; on the wire a member is judged by its own client's profile whatever
    ``profile`` says (it only labels the story)."""
    return {"op": "join", "member": member, "topics": list(topics or ("t0",)),
            "assignors": [assignor], "profile": profile}


def topics() -> list[Event]:
    return [{"op": "partitions", "topic": "t0", "count": 3},
            {"op": "partitions", "topic": "t1", "count": 2}]


def two_members(assignor: str) -> list[Event]:
    """c1 on t0 and t1 with records flowing, c1 pauses t0-1, c2 joins on t0."""
    return [*topics(), join("c1", assignor, "t0", "t1"), {"op": "settle"},
            {"op": "produce", "topic": "t0", "partition": 0},
            {"op": "pause", "member": "c1", "partitions": [["t0", 1]]},
            {"op": "produce", "topic": "t0", "partition": 1},
            join("c2", assignor), {"op": "settle"}]


def smoke(assignor: str) -> list[Event]:
    """A few rebalances: a join, a subscription change, records on paused and handed-over
    partitions, a leave."""
    return [*two_members(assignor),
            {"op": "produce", "topic": "t0", "partition": 1},
            {"op": "subscribe", "member": "c2", "topics": ["t0", "t1"]}, {"op": "settle"},
            {"op": "produce", "topic": "t1", "partition": 0},
            {"op": "leave", "member": "c1"}, {"op": "settle"},
            {"op": "produce", "topic": "t0", "partition": 1}, {"op": "poll", "steps": 3}]


def stall_past_max_poll(assignor: str) -> list[Event]:
    """c2 stops polling; the group evicts it after max.poll.interval.ms and hands its
    partitions to c1 while c2 still holds them (it learns of it only when it polls again)."""
    return [*topics(), join("c1", assignor), join("c2", assignor), {"op": "settle"},
            {"op": "stall", "member": "c2"}, {"op": "settle"}]


def slow_revoke(assignor: str) -> list[Event]:
    """c1's revoke callback outlasts the rebalance that c2's join starts."""
    return [*topics(), join("c1", assignor), {"op": "settle"},
            {"op": "slow_revoke", "member": "c1"}, join("c2", assignor), {"op": "settle"}]


def pause_outlives_the_assignment(assignor: str) -> list[Event]:
    """c1 pauses all of t0; c2 takes part of it and leaves, so c1 gets it back; records
    arrive on every t0 partition while c1 holds them again (they must stay unreturned)."""
    return [{"op": "partitions", "topic": "t0", "count": 3}, join("c1", assignor),
            {"op": "settle"},
            {"op": "pause", "member": "c1", "partitions": [["t0", 0], ["t0", 1], ["t0", 2]]},
            join("c2", assignor), {"op": "settle"}, {"op": "leave", "member": "c2"},
            {"op": "settle"},
            *({"op": "produce", "topic": "t0", "partition": p} for p in range(3))]


def subscription_switch(assignor: str) -> list[Event]:
    """c2 moves from t1 to t0 (dropping a topic, adding another)."""
    return [*topics(), join("c1", assignor, "t0"), join("c2", assignor, "t1"),
            {"op": "settle"}, {"op": "subscribe", "member": "c2", "topics": ["t0"]},
            {"op": "settle"}]


def without_pauses(events: list[Event]) -> list[Event]:
    return [e for e in events if e["op"] not in ("pause", "resume")]


def five_members(assignor: str) -> list[Event]:
    """Five members join t0 (10 partitions) one after the other, each join settling."""
    return [{"op": "partitions", "topic": "t0", "count": 10},
            *(e for i in range(1, 6) for e in (join(f"c{i}", assignor), {"op": "settle"}))]


def with_profiles(events: list[dict[str, Any]], *profiles: str) -> list[dict[str, Any]]:
    """The events with each join judged by the profile of the client it lands on (members
    go to a mixed group's clients in turn, in the order their names first join)."""
    turns: dict[str, str] = {}
    out = []
    for event in events:
        if event["op"] == "join":
            turns.setdefault(event["member"], profiles[len(turns) % len(profiles)])
            event = {**event, "profile": turns[event["member"]]}
        out.append(event)
    return out
