"""The space the scope prover searches: scope bounds, configurations, their enumeration.

**Scope** (``members=3,topics=2,partitions=2,generations=2,claims=2,racks=0``):

* 1..``members`` members named ``m0, m1, ...``; topics ``t0, t1, ...``; each topic has
  0..``partitions`` partitions, where 0 means the topic has no metadata (to an assignor a
  topic without partitions and a topic without metadata are the same: nothing to assign;
  the absent topic is the case a client meets, e.g. after a delete).
* each member subscribes to any subset of the topics (the empty one included);
* each member either has no generation (a new or reset consumer: it owns nothing) or a
  generation in 1..``generations`` and owns any subset of the metadata partitions, whether
  or not it still subscribes to their topic. Claims overlap freely, up to ``claims``
  claimants per partition: a lower generation is a stale claim (a member that missed a
  rebalance, KAFKA-7026), an equal one a conflicting claim (KIP-792);
* with ``racks=R > 0``: every partition has its replica on one of R racks and every member
  has no rack or one of them (rack renaming is not reduced).
  Static members, old subscription versions and hand-made user data are out of scope.

**Symmetry.** A configuration and its images under renaming members, renaming topics and
order-preserving renumbering of generations satisfy the same invariants, so one
representative per orbit is checked: members are enumerated as a multiset of member
descriptors (canonically named in sorted order), topic renamings keep the smallest image,
and generations are renumbered densely from 1. Each representative carries the number of
labelled configurations it stands for, so the report can count what symmetry saved (and a
test checks those weights against the unreduced enumeration). Caveat: assignors break ties
by member id and topic name, so the reduction trusts the invariants, not the exact
assignment, to be name-independent; ``symmetry=0`` checks every labelled configuration.

"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

TopicPartition = tuple[str, int]
AssignFn = Callable[[dict[str, Any]], dict[str, Any]]
# A member: (subscribed topic indexes, generation (0 = none), rack (-1 = none), owned).
MemberDesc = tuple[tuple[int, ...], int, int, tuple[tuple[int, int], ...]]
# The metadata: per topic, (partition count, rack index of each partition).
Metadata = tuple[tuple[int, tuple[int, ...]], ...]

_LIMITS = {"members": (1, 6), "topics": (1, 4), "partitions": (0, 8), "generations": (1, 4),
           "racks": (0, 3), "claims": (1, 6), "symmetry": (0, 1)}


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
    partitions: int = 2
    generations: int = 2
    claims: int = 2
    racks: int = 0
    symmetry: bool = True

    @classmethod
    def parse(cls, text: str, base: Scope | None = None) -> Scope:
        """``"members=3,topics=2,partitions=3"``; keys not given keep ``base`` (the default
        scope). Raises ValueError with a one-line reason."""
        values: dict[str, Any] = asdict(base or cls())
        for key, value in parse_bounds(text, _LIMITS).items():
            values[key] = bool(value) if key == "symmetry" else value
        return cls(**values)

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


# ---------------------------------------------------------------------------------------
# Enumeration


def _subsets(items: list[Any]) -> list[tuple[Any, ...]]:
    return [c for r in range(len(items) + 1) for c in itertools.combinations(items, r)]


def _metadatas(scope: Scope) -> list[Metadata]:
    out: list[Metadata] = []
    for counts in itertools.product(range(scope.partitions + 1), repeat=scope.topics):
        if scope.racks:
            per_topic = [list(itertools.product(range(scope.racks), repeat=c)) for c in counts]
            for racks in itertools.product(*per_topic):
                out.append(tuple(zip(counts, racks, strict=True)))
        else:
            out.append(tuple((c, ()) for c in counts))
    return out


def descriptors(scope: Scope, metadata: Metadata) -> list[MemberDesc]:
    universe = [(t, p) for t, (count, _) in enumerate(metadata) for p in range(count)]
    topic_sets = _subsets(list(range(scope.topics)))
    racks = [-1, *range(scope.racks)]
    owned_sets = _subsets(universe)
    out: list[MemberDesc] = []
    for topics in topic_sets:
        for rack in racks:
            out.append((topics, 0, rack, ()))
            for gen in range(1, scope.generations + 1):
                out += [(topics, gen, rack, owned) for owned in owned_sets]
    return sorted(out)


def _topic_image(perm: tuple[int, ...], metadata: Metadata,
                 members: tuple[MemberDesc, ...]) -> tuple[Metadata, tuple[MemberDesc, ...]]:
    meta: list[tuple[int, tuple[int, ...]]] = [(0, ())] * len(metadata)
    for t, entry in enumerate(metadata):
        meta[perm[t]] = entry
    image = tuple(sorted(
        (tuple(sorted(perm[t] for t in topics)), gen, rack,
         tuple(sorted((perm[t], p) for t, p in owned)))
        for topics, gen, rack, owned in members))
    return tuple(meta), image


def _member_tuples(descs: list[MemberDesc], n: int, claims: int, first: int,
                   ordered: bool) -> Iterator[tuple[MemberDesc, ...]]:
    """Member tuples starting with ``descs[first]``: non-decreasing (multisets) or, when
    ``ordered``, every sequence; no partition claimed by more than ``claims`` members."""
    chosen: list[MemberDesc] = []
    load: Counter[tuple[int, int]] = Counter()

    def rec(start: int) -> Iterator[tuple[MemberDesc, ...]]:
        if len(chosen) == n:
            yield tuple(chosen)
            return
        for i in range(0 if ordered else start, len(descs)):
            d = descs[i]
            if any(load[tp] >= claims for tp in d[3]):
                continue
            chosen.append(d)
            load.update(d[3])
            yield from rec(i)
            load.subtract(d[3])
            chosen.pop()

    d0 = descs[first]
    chosen.append(d0)
    load.update(d0[3])
    yield from rec(first)


def tasks_of(scope: Scope) -> list[tuple[Metadata, int, int]]:
    """Units of work: (metadata, member count, index of the first member's descriptor),
    biggest first (by the number of member tuples they hold before pruning), so that the
    workers finish together."""
    sized = []
    for metadata in _metadatas(scope):
        count = len(descriptors(scope, metadata))
        for n in range(1, scope.members + 1):
            for i in range(count):
                rest = count if not scope.symmetry else count - i
                size = rest ** (n - 1) if not scope.symmetry else math.comb(rest + n - 2, n - 1)
                sized.append((-size, metadata, n, i))
    sized.sort()
    return [(metadata, n, i) for _, metadata, n, i in sized]


def upper_bound(scope: Scope) -> int:
    """How many member tuples the enumeration visits before pruning claims and symmetry: an
    upper bound on the configurations (cheap; for warning about scopes too big to run)."""
    total = 0
    for metadata in _metadatas(scope):
        count = len(descriptors(scope, metadata))
        for n in range(1, scope.members + 1):
            total += count ** n if not scope.symmetry else math.comb(count + n - 1, n)
    return total


def configs_of_task(scope: Scope, task: tuple[Metadata, int, int],
                     descs: list[MemberDesc]) -> Iterator[Config]:
    metadata, n, first = task
    perms = [p for p in itertools.permutations(range(scope.topics))
             if p != tuple(range(scope.topics))]
    for members in _member_tuples(descs, n, scope.claims, first, not scope.symmetry):
        if not scope.symmetry:
            yield Config(metadata, members, 1)
            continue
        gens = {m[1] for m in members if m[1]}
        if gens != set(range(1, len(gens) + 1)):
            continue
        current = (metadata, members)
        images = {current}
        for perm in perms:
            image = _topic_image(perm, metadata, members)
            if image < current:
                break
            images.add(image)
        else:
            weight = math.factorial(n)
            for mult in Counter(members).values():
                weight //= math.factorial(mult)
            weight *= len(images) * math.comb(scope.generations, len(gens))
            yield Config(metadata, members, weight)


def enumerate_scope(scope: Scope) -> Iterator[Config]:
    """Every configuration in ``scope`` (one per orbit when ``scope.symmetry``)."""
    cache: dict[Metadata, list[MemberDesc]] = {}
    for task in tasks_of(scope):
        descs = cache.setdefault(task[0], descriptors(scope, task[0]))
        yield from configs_of_task(scope, task, descs)
