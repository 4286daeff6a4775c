"""Assignors whose cost is known, for the scale engine's tests
(``python:scale_assignors:<name>``, with this folder on ``sys.path`` as pytest puts it, from
pyproject.toml).

Each does its work for real and also advances `CLOCK`, a fake clock, by the operations it
counted times `UNIT`: the engine timed on `CLOCK` sees an exact power law, whatever the
machine's load, so no test depends on the machine's speed."""

from __future__ import annotations

from groupcheck.impl.types import Assignment, Cluster, RebalanceProtocol, Subscription

UNIT = 1e-6  # fake seconds per counted operation


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


CLOCK = FakeClock()


def _dealt(cluster: Cluster, subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
    """Each topic's partitions dealt over its subscribers in member-id order."""
    out: dict[str, list[tuple[str, int]]] = {m: [] for m in subscriptions}
    members = sorted(subscriptions)
    for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
        takers = [m for m in members if topic in subscriptions[m].topics]
        for p in range(cluster.partition_count(topic) or 0):
            out[takers[p % len(takers)]].append((topic, p))
    return {m: Assignment(ps) for m, ps in out.items()}


class Linear:
    """Deals the partitions; counts one operation per member and per partition."""

    name = "linear-cost"
    supported_protocols = (RebalanceProtocol.EAGER,)
    balance = "range"

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        out = _dealt(cluster, subscriptions)
        CLOCK.advance(UNIT * (len(out) + sum(len(a.partitions) for a in out.values())))
        return out

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        pass

    def subscription_user_data(self, topics: set[str]) -> bytes | None:
        return None


class Quadratic(Linear):
    """Deals the partitions after comparing every member's subscription with every
    other's: members² operations."""

    name = "quadratic-cost"

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        same = 0
        for a in subscriptions.values():
            for b in subscriptions.values():
                same += a.topics == b.topics
        CLOCK.advance(UNIT * len(subscriptions) ** 2)
        return _dealt(cluster, subscriptions)


class Paused(Linear):
    """Linear, but its first call on `PAUSED_AT` members also loses `PAUSE` seconds, as a
    call on a loaded machine does when the scheduler sets its process aside (a target makes
    an instance per call: the class remembers; a test sets ``paused`` back)."""

    name = "paused-cost"
    PAUSED_AT = 50
    PAUSE = 2.0
    paused = False

    def assign(self, cluster: Cluster,
               subscriptions: dict[str, Subscription]) -> dict[str, Assignment]:
        if len(subscriptions) == self.PAUSED_AT and not type(self).paused:
            type(self).paused = True
            CLOCK.advance(self.PAUSE)
        return super().assign(cluster, subscriptions)


class PausedLate(Paused):
    """Linear, but its first call on 100 members loses 40 ms: the last of a 50 ms budget,
    too late to be timed again."""

    name = "paused-late-cost"
    PAUSED_AT = 100
    PAUSE = 0.04
    paused = False
