"""Scenario specs: seeded random group stories, cheap to make anywhere from (seed, index).

A *spec* is a JSON-able dict that says what happens to one consumer group, independent of
the target: the cluster metadata, the members of the first rebalance with the partitions
and generations they claim (fresh, a previous assignment, stale or conflicting claims),
and then ``steps``: the changes before each further rebalance. The chain driver
(`chain`) turns a spec into the requests of each rebalance for a given target, since what
members own next depends on what the target assigned.

Spec (format ``groupcheck-audit-spec/1``)::

    {"kind": "random", "scenario": 17, "seed": 0, "tier": 0,
     "partitions": {"t0": 3, ...},            # the leader's metadata at the start
     "racks": {"t0": [["r0", "r1"], ...]},      # optional: replica racks per partition
     "members": [{"id": "c0", "topics": [...], "owned": [[t, p], ...],
                  "generation": 2 | null, "rack": "r0"?, "groupInstanceId": "i0"?}, ...],
     "steps": [[op, ...], ...],                 # one list of changes per further round
     "codec": {"writer": w, "reader": r, "userData": b64 | null}}

Ops: ``{"op": "join", "member": {...}}`` (a new consumer, no generation), ``{"op": "leave",
"member": id}``, ``{"op": "stall", "member": id}`` (it misses the next rebalances and keeps
its state), ``{"op": "return", "member": id}`` (a stalled member rejoins with its stale
owned partitions and generation — KAFKA-7026), ``{"op": "subscribe", "member": id,
"topics": [...]}``, ``{"op": "grow", "topic": t, "count": n}``, ``{"op": "delete",
"topic": t}`` (the topic loses its metadata) and ``{"op": "none"}`` (a rejoin, no change).

Sizes are heavy-tailed (`TIERS`): most groups are small, a few are large (up to 200
members, 50 topics, 500 partitions a topic), so that a default audit of 100,000 scenarios
and four targets fits in ten minutes on two cores while still reaching big groups.
"""

from __future__ import annotations

import base64
import math
import random
from dataclasses import dataclass
from typing import TypedDict

from ..model.saved_files import SPEC_FORMAT
from ..model.story_shapes import ChangeRecord, SpecMember, StorySpec
from .story_changes import (
    Change,
    DeleteChange,
    GrowChange,
    JoinChange,
    LeaveChange,
    NoChange,
    ReturnChange,
    StallChange,
    SubscribeChange,
    read_change,
)

__all__ = ["SPEC_FORMAT", "TIERS", "SpecSize", "Tier", "pick_tier", "random_spec", "scenario_rng",
           "spec_size"]


@dataclass(frozen=True)
class Tier:
    weight: float
    members: tuple[int, int]
    topics: tuple[int, int]
    per_topic: int  # most partitions one topic may have
    total: int  # cap on the partitions of the whole cluster
    steps: int  # most further rebalances


TIERS = (
    Tier(0.886, (1, 6), (1, 3), 8, 24, 2),
    Tier(0.100, (5, 20), (1, 8), 32, 100, 2),
    Tier(0.012, (20, 80), (1, 24), 128, 400, 2),
    Tier(0.002, (80, 200), (1, 50), 500, 1500, 1),
)


def scenario_rng(seed: int, index: int) -> random.Random:
    """A generator that depends on (seed, index) only (string seeds hash with SHA-512, so
    neither PYTHONHASHSEED nor the process matters)."""
    return random.Random(f"groupcheck-audit:{seed}:{index}")


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    """An integer in [low, high], small values more likely."""
    if high <= low:
        return low
    return min(high, int(math.exp(rng.uniform(math.log(low), math.log(high + 1)))))


def pick_tier(rng: random.Random) -> int:
    """The index in `TIERS` of a scenario's tier, drawn by weight (the first draw of
    `random_spec`)."""
    u = rng.random()
    for i, tier in enumerate(TIERS):
        u -= tier.weight
        if u < 0:
            return i
    return 0


def _metadata(rng: random.Random, tier: Tier) -> dict[str, int]:
    n_topics = _log_uniform(rng, *tier.topics)
    counts = [0 if rng.random() < 0.04 else _log_uniform(rng, 1, tier.per_topic)
              for _ in range(n_topics)]
    total = sum(counts)
    if total > tier.total:
        counts = [max(1, c * tier.total // total) if c else 0 for c in counts]
    return {f"t{i}": c for i, c in enumerate(counts)}


def _racks(rng: random.Random, partitions: dict[str, int]
           ) -> tuple[dict[str, list[list[str]]], list[str]]:
    names = [f"r{i}" for i in range(rng.randint(2, 3))]
    racks = {t: [rng.sample(names, rng.randint(1, 2)) for _ in range(c)]
             for t, c in partitions.items()}
    return racks, names


def _subscriptions(rng: random.Random, topics: list[str], n: int) -> list[list[str]]:
    if rng.random() < 0.5:  # everyone subscribes the same topics
        common = topics if rng.random() < 0.6 else sorted(
            rng.sample(topics, rng.randint(1, len(topics))))
        subs = [list(common) for _ in range(n)]
    else:
        subs = []
        for _ in range(n):
            if rng.random() < 0.02:
                subs.append([])
            else:
                subs.append(sorted(rng.sample(topics, rng.randint(1, len(topics)))))
    if rng.random() < 0.05 and subs:  # a topic the leader has no metadata for
        subs[rng.randrange(len(subs))].append("gone")
    return subs


def _prior(rng: random.Random, members: list[SpecMember],
           partitions: dict[str, int]) -> None:
    """The claims of the first rebalance: a previous assignment (balanced or not), with
    stale claims (lower generation) and conflicting ones (equal generation) on top."""
    generation = rng.randint(1, 6)
    balanced = rng.random() < 0.4
    holders: dict[str, list[int]] = {}
    for i, m in enumerate(members):
        for t in m["topics"]:
            holders.setdefault(t, []).append(i)
    turn = rng.randrange(len(members))
    for t, count in partitions.items():
        subs = holders.get(t, [])
        for p in range(count):
            if not subs or rng.random() < (0.0 if balanced else 0.1):
                continue
            i = subs[turn % len(subs)] if balanced else rng.choice(subs)
            turn += 1
            members[i]["owned"].append([t, p])
    for m in members:
        if rng.random() < (0.0 if balanced else 0.15):  # a new member: no generation
            m["generation"], m["owned"] = None, []
        else:
            m["generation"] = generation
    if len(members) >= 2 and rng.random() < 0.25:
        stale, other = rng.sample(members, 2)
        taken = [tp for tp in other["owned"] if rng.random() < 0.5]
        stale["owned"] = stale["owned"] + taken
        if rng.random() < 0.5:  # stale: an older generation (KAFKA-7026)
            stale["generation"] = max(1, generation - rng.randint(1, 2))
            if generation == 1:
                other["generation"] = 2
        elif stale["generation"] is None:
            stale["generation"] = other["generation"] or generation
        else:  # conflicting: the same generation (KIP-792)
            other["generation"] = stale["generation"]


def _member(rng: random.Random, k: int, topics: list[str], racks: list[str],
            static: bool) -> SpecMember:
    m: SpecMember = {"id": f"c{k}", "topics": topics, "owned": [], "generation": None}
    if racks and rng.random() < 0.85:
        m["rack"] = rng.choice(racks)
    if static and rng.random() < 0.6:
        m["groupInstanceId"] = f"i{k}"
    return m


def _steps(rng: random.Random, tier: Tier, members: list[SpecMember],
           partitions: dict[str, int], racks: list[str], static: bool,
           topics: list[str]) -> list[list[ChangeRecord]]:
    n_steps = 0 if rng.random() < 0.3 else rng.randint(1, tier.steps)
    present = [m["id"] for m in members]
    stalled: list[str] = []
    counts = dict(partitions)
    next_id = len(members)
    steps: list[list[ChangeRecord]] = []
    for _ in range(n_steps):
        ops: list[Change] = []
        for _ in range(1 if rng.random() < 0.8 else 2):
            u = rng.random()
            if stalled and u < 0.25:
                who = stalled.pop(rng.randrange(len(stalled)))
                ops.append(ReturnChange(who))
                present.append(who)
            elif u < 0.40:
                subs = _subscriptions(rng, topics, 1)[0]
                ops.append(JoinChange(_member(rng, next_id, subs, racks, static)))
                present.append(f"c{next_id}")
                next_id += 1
            elif u < 0.52 and len(present) > 1:
                who = present.pop(rng.randrange(len(present)))
                ops.append(LeaveChange(who))
            elif u < 0.64 and len(present) > 1:
                who = present.pop(rng.randrange(len(present)))
                stalled.append(who)
                ops.append(StallChange(who))
            elif u < 0.76 and present:
                who = rng.choice(present)
                ops.append(SubscribeChange(who, tuple(_subscriptions(rng, topics, 1)[0])))
            elif u < 0.83 and counts:
                t = rng.choice(sorted(counts))
                grown = min(tier.per_topic, counts[t] + rng.randint(1, 4))
                counts[t] = grown
                ops.append(GrowChange(t, grown))
            elif u < 0.86 and len(counts) > 1:
                t = rng.choice(sorted(counts))
                del counts[t]
                ops.append(DeleteChange(t))
            else:
                ops.append(NoChange())
        steps.append([op.record() for op in ops])
    return steps


def random_spec(seed: int, index: int) -> StorySpec:
    """The spec of scenario ``index`` of a seeded random audit."""
    rng = scenario_rng(seed, index)
    tier_no = pick_tier(rng)
    tier = TIERS[tier_no]
    partitions = _metadata(rng, tier)
    topics = sorted(partitions)
    spec: StorySpec = {"format": SPEC_FORMAT, "kind": "random", "scenario": index,
                            "seed": seed, "tier": tier_no, "partitions": partitions}
    rack_names: list[str] = []
    if rng.random() < 0.15:
        spec["racks"], rack_names = _racks(rng, partitions)
    static = rng.random() < 0.1
    n = _log_uniform(rng, *tier.members)
    subs = _subscriptions(rng, topics, n)
    members = [_member(rng, k, subs[k], rack_names, static) for k in range(n)]
    if rng.random() < 0.6:
        _prior(rng, members, partitions)
    spec["members"] = members
    spec["steps"] = _steps(rng, tier, members, partitions, rack_names, static, topics)
    user_data = None if rng.random() < 0.5 else bytes(
        rng.randrange(256) for _ in range(rng.randint(0, 12)))
    spec["codec"] = {"writer": rng.randint(0, 4), "reader": rng.randint(0, 4),
                     "userData": None if user_data is None else
                     base64.b64encode(user_data).decode("ascii")}
    return spec


class SpecSize(TypedDict):
    """The largest group over a story, the topics and partitions at its start, and its
    rebalances (before cooperative follow-ups)."""

    members: int
    topics: int
    partitions: int
    rounds: int


def spec_size(spec: StorySpec) -> SpecSize:
    """Columns that describe a spec (`SpecSize`)."""
    size = peak = len(spec.get("members", []))
    for changes in spec.get("steps", []):
        size += sum(read_change(change).joins for change in changes)
        peak = max(peak, size)
    if spec.get("kind") == "requests":
        requests = spec["requests"]
        peak = max((len(r.get("members", {})) for r in requests), default=0)
        metadata = requests[0].get("partitions", {}) if requests else {}
        return {"members": peak, "topics": len(metadata),
                "partitions": sum(metadata.values()), "rounds": len(requests)}
    return {"members": peak, "topics": len(spec.get("partitions", {})),
            "partitions": sum(spec.get("partitions", {}).values()),
            "rounds": 1 + len(spec.get("steps", []))}
