"""A leader that wakes up with a JoinGroup answer of a generation the coordinator has left
behind runs its assignor, but its SyncGroup is refused (ILLEGAL_GENERATION): what it computed
is never given to anyone, and the harness must not judge it as a rebalance of the group."""

from __future__ import annotations

from groupcheck.model.events import read_events
from groupcheck.model.replay import replay_events
from groupcheck.targets.registry import resolve

#: c1 leads generation 1 but stalls before its assignment; the coordinator moves on without
#: it (c5 alone, generation 2); c1 wakes with its stale answer and rejoins
STALE_LEADER = read_events([
    {"op": "join", "member": "c1", "topics": ["t2"], "assignors": ["cooperative-sticky"],
     "profile": "java", "subscription_version": 3, "user_data_version": 1},
    {"op": "join", "member": "c5", "topics": ["t2"], "assignors": ["cooperative-sticky"],
     "profile": "java", "subscription_version": 3, "user_data_version": 1},
    {"op": "partitions", "topic": "t2", "count": 8},
    {"op": "poll", "steps": 7},
    {"op": "stall", "member": "c1"},
    {"op": "settle"},
    {"op": "wake", "member": "c1"},
    {"op": "settle"},
])


def test_a_stale_leaders_assignment_is_not_judged_as_a_rebalance() -> None:
    """The stale leader's run would hand c5's partitions to c1 'in the same rebalance' (I5)
    if it were taken for the coordinator's current generation; it is not, and the group
    settles with both members sharing the topic."""
    target = resolve("builtin:cooperative-sticky")
    assert target.group is not None
    group = target.group()
    runs: list[int] = []
    record = group.log_rebalance  # type: ignore[attr-defined]

    def counted(leader: str, *args: object) -> None:
        runs.append(group.members[leader].consumer.generation)  # type: ignore[attr-defined]
        record(leader, *args)

    group.log_rebalance = counted  # type: ignore[attr-defined]
    outcome = replay_events(group, STALE_LEADER)
    assert outcome.violations == []
    assert 1 in runs, "the stale leader ran its assignor for generation 1"
    view = outcome.views[-1]
    assert view is not None
    owned = {m: set(v.owned) for m, v in view.members.items()}
    assert owned["c1"] and owned["c5"] and not owned["c1"] & owned["c5"]
    assert owned["c1"] | owned["c5"] == {("t2", p) for p in range(8)}
