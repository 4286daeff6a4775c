"""What lives here: the scale engine's ladders — the group shapes it times, growing along
one axis to a shape Kafka's own tests use — and the request of a first rebalance of each.
``engines.battery.scale`` describes the ladders and runs them."""

from __future__ import annotations

from dataclasses import dataclass

from ...properties.jsonl_shapes import AssignRequest, RequestMember
from .results import Axis

__all__ = ["DEFAULT_LADDERS", "MEMBERS_LADDER", "PARTITIONS_LADDER", "Ladder", "Point", "Shape",
           "scale_request"]


@dataclass(frozen=True)
class Shape:
    """A group: ``members`` subscribed to ``topics`` topics of ``per_topic`` partitions each,
    the last ``narrow`` members to the first topic only."""

    members: int
    topics: int
    per_topic: int
    narrow: int = 0

    @property
    def partitions(self) -> int:
        return self.topics * self.per_topic

    @property
    def label(self) -> str:
        return f"{self.members:,} members × {self.partitions:,} partitions"


@dataclass(frozen=True)
class Ladder:
    """Shapes of growing size along ``axis`` (members or partitions), the last one
    ``kafka``'s, a shape Kafka's own tests use."""

    axis: Axis
    steps: tuple[Shape, ...]
    kafka: str

    def size(self, shape: Shape) -> int:
        return shape.members if self.axis == "members" else shape.partitions


MEMBERS_LADDER = Ladder(
    "members", tuple(Shape(m, 10, m) for m in (10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
                                              10000)),
    "ClientSideAssignorBenchmark, 10,000 members, 10 partitions per member")
PARTITIONS_LADDER = Ladder(
    "partitions", tuple(Shape(2000, t, 2000, narrow=1) for t in (10, 25, 50, 100, 250, 500)),
    "AbstractStickyAssignorTest.testLargeAssignmentAndGroupWithNonEqualSubscription")
DEFAULT_LADDERS = (MEMBERS_LADDER, PARTITIONS_LADDER)


@dataclass(frozen=True)
class Point:
    shape: Shape
    size: int
    seconds: float
    timeout: bool = False  # no answer within the target's limit: seconds is a lower bound
    cut: bool = False  # the call was stopped at the engine's share, not the target's limit
    doubtful: bool = False  # over CONFIRM times its prediction, with no time to confirm it


def scale_request(assignor: str, shape: Shape) -> AssignRequest:
    """The JSON-lines ``assign`` request of a first rebalance of ``shape`` (client mode)."""
    topics = [f"t{i}" for i in range(shape.topics)]
    width = len(str(max(shape.members - 1, 0)))
    members: dict[str, RequestMember] = {
        f"m{i:0{width}d}": {"topics": list(topics[:1] if i >= shape.members - shape.narrow
                                           else topics), "owned": [], "generation": None}
        for i in range(shape.members)}
    return {"op": "assign", "assignor": assignor, "mode": "client",
            "partitions": {t: shape.per_topic for t in topics}, "members": members}
