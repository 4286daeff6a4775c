"""The state an audit story evolves: its members (in join order), the stalled ones, the
topics' partition counts and racks, and the ``assign`` request each rebalance sends.

`StoryGroup` is built from a scenario spec (``audit.scenarios``) and changed by the spec's
changes (audit/story_changes.py); `audit.chain` turns it into requests and, after each
rebalance, gives every member what it settled on.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..model.story_shapes import SpecMember, StorySpec
from ..properties.jsonl_shapes import AssignRequest, RequestMember, pair_of

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

    def __init__(self, spec: StorySpec) -> None:
        self.partitions: dict[str, int] = dict(spec["partitions"])
        self.racks: dict[str, list[list[str]]] | None = copy.deepcopy(spec.get("racks"))
        self.members: dict[str, StoryMember] = {}
        self.stalled: dict[str, StoryMember] = {}
        for m in spec["members"]:
            self.join(m)
        gens = [m.generation or 0 for m in self.members.values()]
        self.generation = max(gens, default=0)

    @classmethod
    def of_request(cls, request: AssignRequest) -> StoryGroup:
        """The group a request shows (a step of a fixed chain), one generation before the
        one it asks for (its members' user data is rebuilt as they join)."""
        members: list[SpecMember] = []
        for member_id, v in request["members"].items():
            m: SpecMember = {"id": member_id, "topics": v["topics"], "owned": v["owned"],
                             "generation": v["generation"]}
            rack, instance = v.get("rack"), v.get("groupInstanceId")
            if rack is not None:
                m["rack"] = rack
            if instance is not None:
                m["groupInstanceId"] = instance
            members.append(m)
        story: StorySpec = {"partitions": request.get("partitions", {}), "members": members}
        racks = request.get("racks")
        if racks is not None:
            story["racks"] = racks
        group = cls(story)
        generation = request.get("newGeneration")
        if generation is not None:
            group.generation = int(generation) - 1
        return group

    def join(self, m: SpecMember) -> None:
        """A member joins as the story gives it (what it owns only with a generation)."""
        gen = m.get("generation")
        owned = [pair_of(c) for c in m.get("owned") or []] if gen is not None else []
        self.members[str(m["id"])] = StoryMember(list(m["topics"]), owned, gen, m.get("rack"),
                                                 m.get("groupInstanceId"))

    def request(self, assignor: str) -> AssignRequest:
        """The client-mode ``assign`` request of the group as it stands."""
        members: dict[str, RequestMember] = {}
        for mid, m in self.members.items():
            entry: RequestMember = {"topics": list(m.topics),
                                    "owned": [[t, p] for t, p in m.owned],
                                    "generation": m.generation}
            if m.rack is not None:
                entry["rack"] = m.rack
            if m.instance is not None:
                entry["groupInstanceId"] = m.instance
            members[mid] = entry
        request: AssignRequest = {"op": "assign", "assignor": assignor, "mode": "client",
                                   "partitions": dict(self.partitions), "members": members,
                                   "newGeneration": self.generation + 1}
        if self.racks is not None:
            request["racks"] = copy.deepcopy(self.racks)
        return request
