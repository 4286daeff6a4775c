"""The state an audit story evolves: its members (in join order), the stalled ones, the
topics' partition counts and racks, and the ``assign`` request each rebalance sends.

`StoryGroup` is built from a scenario spec (``audit.scenarios``) and changed by the spec's
step operations (`StoryGroup.apply`); `audit.chain` turns it into requests and, after each
rebalance, gives every member what it settled on.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["StoryGroup", "StoryMember", "TopicPartition"]

TopicPartition = tuple[str, int]


@dataclass
class StoryMember:
    """One member of a story: its topics, what it owns, at which generation."""

    topics: list[str]
    owned: list[TopicPartition]
    generation: int | None
    rack: str | None = None
    instance: str | None = None


class StoryGroup:
    """The state a story evolves: members (in join order), stalled ones, metadata."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.partitions: dict[str, int] = dict(spec["partitions"])
        self.racks: dict[str, list[list[str]]] | None = copy.deepcopy(spec.get("racks"))
        self.members: dict[str, StoryMember] = {}
        self.stalled: dict[str, StoryMember] = {}
        for m in spec["members"]:
            self._join(m)
        gens = [m.generation or 0 for m in self.members.values()]
        self.generation = max(gens, default=0)

    def _join(self, m: Mapping[str, Any]) -> None:
        gen = m.get("generation")
        owned = [(str(t), int(p)) for t, p in m.get("owned") or []] if gen is not None else []
        self.members[str(m["id"])] = StoryMember(list(m["topics"]), owned, gen, m.get("rack"),
                                                 m.get("groupInstanceId"))

    def apply(self, op: Mapping[str, Any]) -> None:
        """One step operation of the spec (join, leave, stall, return, subscribe, grow,
        delete)."""
        kind = op["op"]
        if kind == "join":
            self._join(op["member"])
        elif kind == "leave":
            self.members.pop(op["member"], None)
        elif kind == "stall":
            if op["member"] in self.members:
                self.stalled[op["member"]] = self.members.pop(op["member"])
        elif kind == "return":
            if op["member"] in self.stalled:
                self.members[op["member"]] = self.stalled.pop(op["member"])
        elif kind == "subscribe":
            if op["member"] in self.members:
                self.members[op["member"]].topics = list(op["topics"])
        elif kind == "grow":
            self.partitions[op["topic"]] = int(op["count"])
            if self.racks is not None and op["topic"] in self.racks:
                racks = self.racks[op["topic"]]
                racks += [racks[-1] if racks else []] * (op["count"] - len(racks))
        elif kind == "delete":
            self.partitions.pop(op["topic"], None)
            if self.racks is not None:
                self.racks.pop(op["topic"], None)

    def request(self, assignor: str) -> dict[str, Any]:
        """The client-mode ``assign`` request of the group as it stands."""
        members: dict[str, Any] = {}
        for mid, m in self.members.items():
            entry: dict[str, Any] = {"topics": list(m.topics),
                                     "owned": [[t, p] for t, p in m.owned],
                                     "generation": m.generation}
            if m.rack is not None:
                entry["rack"] = m.rack
            if m.instance is not None:
                entry["groupInstanceId"] = m.instance
            members[mid] = entry
        request: dict[str, Any] = {"op": "assign", "assignor": assignor, "mode": "client",
                                   "partitions": dict(self.partitions), "members": members,
                                   "newGeneration": self.generation + 1}
        if self.racks is not None:
            request["racks"] = copy.deepcopy(self.racks)
        return request
