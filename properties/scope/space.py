"""The space the scope prover searches: scope bounds and configurations.

**Scope** (``members=3,topics=2,partitions=1,generations=2,claims=2,racks=0,stale=1``, the
default):

* 1..``members`` members named ``m0, m1, ...``; topics ``t0, t1, ...``; each topic has
  0..``partitions`` partitions in the leader's metadata, where 0 means the leader has no
  metadata for it (to an assignor a topic without partitions and a topic without metadata
  are the same: nothing to assign; the absent topic is the case a client meets, e.g. after
  a delete).
* each member subscribes to any subset of the topics (the empty one included);
* each member either has no generation (a new or reset consumer: it owns nothing) or a
  generation in 1..``generations`` and owns any subset of the metadata partitions, whether
  or not it still subscribes to their topic. Claims overlap freely, up to ``claims``
  claimants per partition: a lower generation is a stale claim (a member that missed a
  rebalance, KAFKA-7026), an equal one a conflicting claim (KIP-792);
* **stale metadata**: up to ``stale`` claims in a configuration name a partition the
  leader's metadata cannot place — a number at or beyond the leader's count (below
  ``partitions``), or any partition of a topic the leader does not know: a member whose
  metadata is newer than the leader's, or a topic that shrank. Kafka's sticky assignors
  assign a partition twice there (the golden vectors' ``kafka_bug`` lines); deviation D1
  keeps groupcheck's from it;
* with ``racks=R > 0``: every partition has its replica on one of R racks and every member
  has no rack or one of them (rack renaming is not reduced).
  Static members, old subscription versions and hand-made user data are out of scope.

**Reductions** (``symmetry=0|1|2|3``, default 1; ``orders=0|1``, default 0). Level 1, the
default, is sound: a configuration stands for those that differ from it only in the values
of its generations, renamed in order (assignors and judges only compare generations), so a
clean report is a proof of the whole scope. Levels 2 and 3 also rename topics and members
(``orders=1`` keeps every order of the members) and, at 3, renumber partitions within a
topic; Kafka's assignors can tell those apart, so they sample the scope and their reports
say "sampled, not proved". ``orbits`` gives the argument, what each level costs (the
bug zoo's mutants) and how each representative's weight (the labelled configurations it
stands for) is counted; ``symmetry=0`` checks every labelled configuration one by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..jsonl_shapes import AssignFn

__all__ = ["AssignFn", "Config", "MemberDesc", "Metadata", "Scope", "TopicPartition",
           "merges_members", "parse_bounds", "reduction_is_sound", "reduction_text",
           "renames_topics", "renumbers_partitions"]

TopicPartition = tuple[str, int]
# A member: (subscribed topic indexes, generation (0 = none), rack (-1 = none), owned).
MemberDesc = tuple[tuple[int, ...], int, int, tuple[tuple[int, int], ...]]
# The metadata: per topic, (partition count, rack index of each partition).
Metadata = tuple[tuple[int, tuple[int, ...]], ...]

_LIMITS = {"members": (1, 6), "topics": (1, 4), "partitions": (0, 8), "generations": (1, 4),
           "racks": (0, 3), "claims": (1, 6), "stale": (0, 4), "symmetry": (0, 3),
           "orders": (0, 1)}


def parse_bounds(text: str, limits: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """``"key=value,..."`` with each key in ``limits`` and its value within (low, high);
    raises ValueError with a one-line reason."""
    values: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key not in limits:
            raise ValueError(f"bad scope item {item!r}; expected key=value with key one "
                             f"of {', '.join(limits)}")
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"scope {key} must be an integer, not {raw.strip()!r}") from None
        low, high = limits[key]
        if not low <= value <= high:
            raise ValueError(f"scope {key} must be between {low} and {high}, not {value}")
        values[key] = value
    return values


@dataclass(frozen=True)
class Scope:
    """The bounds of the enumeration (see the module docstring)."""

    members: int = 3
    topics: int = 2
    partitions: int = 1
    generations: int = 2
    claims: int = 2
    racks: int = 0
    stale: int = 1
    symmetry: int = 1
    orders: int = 0

    @classmethod
    def parse(cls, text: str, base: Scope | None = None) -> Scope:
        """``"members=3,topics=2,partitions=3"``; keys not given keep ``base`` (the default
        scope). Raises ValueError with a one-line reason."""
        return replace(base or cls(), **parse_bounds(text, _LIMITS))

    def text(self) -> str:
        return ",".join(f"{k}={int(v)}" for k, v in asdict(self).items())


@dataclass(frozen=True)
class Config:
    """One configuration; ``weight`` = the labelled configurations it stands for."""

    metadata: Metadata
    members: tuple[MemberDesc, ...]
    weight: int = 1

    def size_key(self) -> tuple[Any, ...]:
        """Smaller is a simpler counterexample."""
        return (len(self.members), sum(c for c, _ in self.metadata),
                sum(len(m[3]) for m in self.members), len({m[1] for m in self.members}),
                sum(len(m[0]) for m in self.members), sum(m[2] >= 0 for m in self.members),
                self.metadata, self.members)


def renames_topics(scope: Scope) -> bool:
    """Topics renamed (levels 2 and 3: sampled, not proved)."""
    return scope.symmetry >= 2


def merges_members(scope: Scope) -> bool:
    """Member orders merged into multisets (levels 2 and 3 without ``orders=1``)."""
    return scope.symmetry >= 2 and not scope.orders


def renumbers_partitions(scope: Scope) -> bool:
    """Partitions renumbered within a block (level 3: sampled, not proved)."""
    return scope.symmetry >= 3


def reduction_is_sound(scope: Scope) -> bool:
    """Levels 0 and 1 cover every configuration of the scope (see the module doc)."""
    return scope.symmetry <= 1


def reduction_text(scope: Scope) -> str:
    """What the run's reduction assumes, in one line (for reports)."""
    if scope.symmetry == 0:
        return "every configuration of the scope checked, no reduction"
    if scope.symmetry == 1:
        return ("every configuration of the scope, generation values taken up to their "
                "order (assignors only compare generations)")
    renamed = "topics" if scope.orders else "topics and members"
    if renumbers_partitions(scope):
        renamed += ", and partitions renumbered"
    return (f"symmetry={scope.symmetry} renames {renamed}, which Kafka's assignors can tell "
            "apart (sorted and hashed names): one class member checked for all")
