"""The parts of a group story (``groupcheck-audit-spec/1``) and how each can go.

`PASSES` lists, for each kind of part the shrinker removes (``audit/story_shrink.py``), a function
that lists a story's parts of that kind and one that removes a set of them from a story in
place, leaving a story `run_chain` can play: removing a member also removes every change
that names it; a topic goes with its metadata, replica racks, subscriptions, claims and
changes; removed partitions take their claims and replica racks with them and the rest of
the topic is numbered from 0 again. `renamed` gives members, topics and racks plain names.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any, Literal

from ..model.story_shapes import ChangeRecord, SpecMember, StorySpec
from ..properties.jsonl_shapes import pair_of

__all__ = ["PASSES", "Drop", "Parts", "Spec", "all_members", "all_topics", "changes", "claims",
           "drop_all_racks", "drop_changes", "drop_claims", "drop_codec", "drop_members",
           "drop_partitions", "drop_replicas", "drop_topics", "partitions", "renamed", "replicas"]

Spec = StorySpec
#: a kind of part: its parts in a story (members, topics, claims, …: each hashable)
Parts = Callable[[Spec], list[Any]]
Drop = Callable[[Spec, set[Any]], None]


def all_members(spec: Spec) -> Iterator[SpecMember]:
    """Every member: the first rebalance's and those that join later."""
    yield from spec["members"]
    for ops in spec.get("steps", []):
        for op in ops:
            member = op.get("member")
            if op["op"] == "join" and isinstance(member, dict):
                yield member


def drop_members(spec: Spec, gone: set[str]) -> None:
    spec["members"] = [m for m in spec["members"] if m["id"] not in gone]
    spec["steps"] = [[op for op in ops if _op_member(op) not in gone]
                     for ops in spec.get("steps", [])]


def _op_member(op: ChangeRecord) -> str | None:
    who = op.get("member")
    return who.get("id") if isinstance(who, dict) else who


def drop_topics(spec: Spec, gone: set[str]) -> None:
    for t in gone:
        spec["partitions"].pop(t, None)
        spec.get("racks", {}).pop(t, None)
    for m in all_members(spec):
        m["topics"] = [t for t in m["topics"] if t not in gone]
        m["owned"] = [tp for tp in m.get("owned") or [] if tp[0] not in gone]
    steps: list[list[ChangeRecord]] = []
    for ops in spec.get("steps", []):
        kept = []
        for op in ops:
            if op.get("topic") in gone:
                continue
            if op["op"] == "subscribe":
                op["topics"] = [t for t in op["topics"] if t not in gone]
            kept.append(op)
        steps.append(kept)
    spec["steps"] = steps


def all_topics(spec: Spec) -> list[str]:
    seen = dict.fromkeys(spec["partitions"])
    for m in all_members(spec):
        seen.update(dict.fromkeys(m["topics"]))
    for ops in spec.get("steps", []):
        for op in ops:
            seen.update(dict.fromkeys(op.get("topics", [])))
    return list(seen)


def claims(spec: Spec) -> list[tuple[str, str, int]]:
    return [(m["id"], *pair_of(c)) for m in all_members(spec) for c in m.get("owned") or []]


def drop_claims(spec: Spec, gone: set[tuple[str, str, int]]) -> None:
    for m in all_members(spec):
        m["owned"] = [[t, p] for t, p in m.get("owned") or [] if (m["id"], t, p) not in gone]


def changes(spec: Spec) -> list[tuple[int, int]]:
    return [(s, i) for s, ops in enumerate(spec.get("steps", [])) for i in range(len(ops))]


def drop_changes(spec: Spec, gone: set[tuple[int, int]]) -> None:
    spec["steps"] = [[op for i, op in enumerate(ops) if (s, i) not in gone]
                     for s, ops in enumerate(spec.get("steps", []))]


def _member_key(key: Literal["rack", "groupInstanceId"]
                ) -> tuple[Callable[[Spec], list[str]], Callable[[Spec, set[str]], None]]:
    """Parts that are one optional key of a member (``rack``, ``groupInstanceId``)."""
    def parts(spec: Spec) -> list[str]:
        return [m["id"] for m in all_members(spec) if key in m]

    def drop(spec: Spec, gone: set[str]) -> None:
        for m in all_members(spec):
            if m["id"] in gone:
                m.pop(key, None)
    return parts, drop


def partitions(spec: Spec) -> list[tuple[str, int]]:
    return [(t, p) for t, count in spec["partitions"].items() for p in range(count)]


def drop_partitions(spec: Spec, gone: set[tuple[str, int]]) -> None:
    """Remove partitions and number the rest of each topic from 0 again, in order (their
    claims and replica racks move with them; a later ``grow`` keeps what it adds)."""
    renumber: dict[str, dict[int, int]] = {}
    for t, count in spec["partitions"].items():
        kept = [p for p in range(count) if (t, p) not in gone]
        renumber[t] = {p: i for i, p in enumerate(kept)}
        if spec.get("racks") and t in spec["racks"]:
            spec["racks"][t] = [spec["racks"][t][p] for p in kept]
    lost = {t: spec["partitions"][t] - len(renumber[t]) for t in renumber}
    spec["partitions"] = {t: len(renumber[t]) for t in renumber}
    for m in all_members(spec):
        m["owned"] = [[t, renumber[t][p] if p in renumber.get(t, {}) else p - lost.get(t, 0)]
                      for t, p in map(pair_of, m.get("owned") or []) if (t, p) not in gone]
    for ops in spec.get("steps", []):
        for op in ops:
            topic = op.get("topic")
            if op["op"] == "grow" and topic in lost:
                op["count"] = op["count"] - lost[str(topic)]


def replicas(spec: Spec) -> list[tuple[str, int, str]]:
    """Replica racks of partitions that have more than one."""
    return [(t, p, r) for t, per in (spec.get("racks") or {}).items()
            for p, rs in enumerate(per) if len(rs) > 1 for r in rs[1:]]


def drop_replicas(spec: Spec, gone: set[tuple[str, int, str]]) -> None:
    for t, per in (spec.get("racks") or {}).items():
        per[:] = [rs[:1] + [r for r in rs[1:] if (t, p, r) not in gone]
                  for p, rs in enumerate(per)]


def _drop_steps(spec: Spec, gone: set[int]) -> None:
    spec["steps"] = [o for i, o in enumerate(spec.get("steps", [])) if i not in gone]


#: (name, parts, drop) for each kind of part, in the shrinker's first order
PASSES: list[tuple[str, Parts, Drop]] = [
    ("steps", lambda s: list(range(len(s.get("steps", [])))), _drop_steps),
    ("changes", changes, drop_changes),
    ("members", lambda s: [m["id"] for m in all_members(s)], drop_members),
    ("topics", all_topics, drop_topics),
    ("replica racks", replicas, drop_replicas),
    ("partitions", partitions, drop_partitions),
    ("claims", claims, drop_claims),
    ("static ids", *_member_key("groupInstanceId")),
    ("member racks", *_member_key("rack")),
]


def drop_all_racks(spec: Spec) -> bool:
    """Remove every rack (replicas' and members'); False when there is none."""
    if not spec.get("racks") and not any("rack" in m for m in all_members(spec)):
        return False
    spec.pop("racks", None)
    for m in all_members(spec):
        m.pop("rack", None)
    return True


def drop_codec(spec: Spec) -> bool:
    """Remove the codec versions (I10 is then not judged); False when there are none."""
    return spec.pop("codec", None) is not None


def renamed(spec: Spec) -> Spec:
    """Members ``c0…`` in order of appearance, topics ``t0…``, racks ``r0…``, static ids
    ``i<k>`` for member ``c<k>``."""
    members = {m["id"]: f"c{k}" for k, m in enumerate(all_members(spec))}
    topics = {t: f"t{k}" for k, t in enumerate(all_topics(spec))}
    rack_names = sorted({r for per in (spec.get("racks") or {}).values() for rs in per
                         for r in rs} | {m["rack"] for m in all_members(spec) if "rack" in m})
    racks = {r: f"r{k}" for k, r in enumerate(rack_names)}
    out = copy.deepcopy(spec)
    out["partitions"] = {topics[t]: c for t, c in spec["partitions"].items()}
    if spec.get("racks"):
        out["racks"] = {topics[t]: [[racks[r] for r in rs] for rs in per]
                        for t, per in spec["racks"].items()}
    for m in all_members(out):
        m["id"] = members[m["id"]]
        m["topics"] = [topics[t] for t in m["topics"]]
        m["owned"] = [[topics[t], p] for t, p in map(pair_of, m.get("owned") or [])]
        if "rack" in m:
            m["rack"] = racks[m["rack"]]
        if "groupInstanceId" in m:
            m["groupInstanceId"] = "i" + m["id"][1:]
    for ops in out.get("steps", []):
        for op in ops:
            member = op.get("member")
            if isinstance(member, str):
                op["member"] = members[member]
            if "topic" in op:
                op["topic"] = topics[op["topic"]]
            if "topics" in op:
                op["topics"] = [topics[t] for t in op["topics"]]
    return out
