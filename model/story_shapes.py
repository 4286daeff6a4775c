"""The JSON shapes of an audit story (``groupcheck-audit-spec/1``): its members, the changes
between its rebalances, its codec versions, and the story itself.

A story is JSON from end to end: the audit makes it in a Spark worker from (seed, scenario),
saves it in a counterexample, reads it from a corpus folder, and the shrinker edits it in
place; these TypedDicts say what each part holds. A claim (``owned``) is a JSON array
``[topic, partition]`` (`pair_of` reads one). audit/story_changes.py gives the changes their
behaviour.
"""

from __future__ import annotations

from typing import NotRequired, Required, TypedDict

from ..properties.jsonl_shapes import AssignRequest, Claim, pair_of

__all__ = ["CHANGE_OPS", "ChangeRecord", "Claim", "CodecSpec", "SpecMember", "StorySpec",
           "pair_of"]

#: the kinds of change a story's steps hold (audit/story_changes.py gives each its type)
CHANGE_OPS = ("join", "leave", "stall", "return", "subscribe", "grow", "delete", "none")

class SpecMember(TypedDict):
    """A member as a story starts it: its subscription, what it claims, at which generation
    (None: a new consumer), and optionally its rack and static id."""

    id: str
    topics: list[str]
    owned: list[Claim]
    generation: int | None
    rack: NotRequired[str]
    groupInstanceId: NotRequired[str]


class ChangeRecord(TypedDict, total=False):
    """One change before a rebalance: ``op`` names it (join, leave, stall, return, subscribe,
    grow, delete, none) and decides which other keys it has: ``member`` (a join's whole
    member, else its id), ``topics`` (subscribe), ``topic`` and ``count`` (grow, delete)."""

    op: Required[str]
    member: str | SpecMember
    topics: list[str]
    topic: str
    count: int


class CodecSpec(TypedDict):
    """The subscription versions I10 writes and reads every first-rebalance member at, and
    the user data they carry (base64, or None)."""

    writer: int
    reader: int
    userData: str | None


class StorySpec(TypedDict, total=False):
    """A story: a random one (``kind`` ``random``: its scenario, seed and size tier), or a
    fixed chain of requests a corpus file holds (``kind`` ``requests``, ``error`` when the
    file cannot be played). ``racks``: each partition's replica racks, per topic."""

    format: str
    kind: str
    scenario: int
    seed: int
    tier: int
    partitions: dict[str, int]
    racks: dict[str, list[list[str]]]
    members: list[SpecMember]
    steps: list[list[ChangeRecord]]
    codec: CodecSpec
    requests: list[AssignRequest]
    error: str
