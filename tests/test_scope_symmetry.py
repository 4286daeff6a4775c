"""The scope prover's symmetry reduction: one representative per class, weights that count
every labelled configuration once, and the same verdicts as the unreduced scope on the bug
zoo's mutants.

The classes are recomputed here by brute force, independently of ``scope_orbits``: every
labelled configuration of the unreduced enumeration is mapped through every topic
renaming and, at level 2, every renumbering of the partitions of a topic within the
leader's metadata and beyond it; generations are renumbered in order, and members are
sorted (a multiset) unless ``orders=1`` keeps them in the leader's order.

Which reductions keep every violation is a question of evidence: on the bug zoo's mutants,
keeping the members' order and reducing topics and generations (``orders=1``) broke the
same invariants as the unreduced scope everywhere we looked; merging member orders (the
default) and renumbering partitions (``symmetry=2``) each lose violations somewhere, and
the last tests pin down where.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest

from groupcheck.properties.scope import Scope, enumerate_scope, prove
from groupcheck.properties.scope_space import Config
from groupcheck.targets.registry import resolve
from groupcheck.targets.zoo import ASSIGNOR_MUTANTS


def _renumberings(count: int, limit: int, level: int) -> list[tuple[int, ...]]:
    """Partition renumberings of one topic: inside the metadata and beyond it separately."""
    if level < 2:
        return [tuple(range(max(count, limit)))]
    inside = itertools.permutations(range(count))
    return [a + b for a in inside
            for b in itertools.permutations(range(count, max(count, limit)))]


def _class_key(config: Config, scope: Scope, level: int, orders: int = 0) -> Any:
    """The smallest image of ``config`` under the group of ``level`` (brute force)."""
    topics = len(config.metadata)
    images = []
    for sigma in itertools.permutations(range(topics)):
        per_topic = [_renumberings(c, scope.partitions, level) for c, _ in config.metadata]
        for pis in itertools.product(*per_topic):
            meta: list[Any] = [None] * topics
            for t, (count, racks) in enumerate(config.metadata):
                moved = [0] * count
                for p, rack in enumerate(racks):
                    moved[pis[t][p]] = rack
                meta[sigma[t]] = (count, tuple(moved) if racks else ())
            rows = [(tuple(sorted(sigma[t] for t in subscribed)), gen, rack,
                     tuple(sorted((sigma[t], pis[t][p]) for t, p in owned)))
                    for subscribed, gen, rack, owned in config.members]
            renamed = {g: i + 1 for i, g in enumerate(sorted({r[1] for r in rows if r[1]}))}
            renamed[0] = 0
            members = [(a, renamed[g], r, o) for a, g, r, o in rows]
            images.append((tuple(meta), tuple(members if orders else sorted(members))))
    return min(images)


@pytest.mark.parametrize("text", [
    "members=2,topics=2,partitions=2,generations=1",
    "members=2,topics=1,partitions=3,generations=2,claims=2,stale=2",
    "members=2,topics=2,partitions=1,racks=2,generations=1",
    "members=3,topics=1,partitions=2,generations=2,claims=3",
])
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("orders", [0, 1])
def test_each_class_has_one_representative_whose_weight_is_its_size(text: str, level: int,
                                                                     orders: int) -> None:
    """Brute force over the unreduced scope: the reduced enumeration yields exactly one
    configuration of every class, and its weight is the number of labelled configurations
    in that class."""
    scope = Scope.parse(f"{text},symmetry={level},orders={orders}")
    sizes = Counter(_class_key(c, scope, level, orders)
                    for c in enumerate_scope(Scope.parse(f"{text},symmetry=0")))
    reps = {}
    for config in enumerate_scope(scope):
        key = _class_key(config, scope, level, orders)
        assert key not in reps, f"two representatives of one class: {reps.get(key)}, {config}"
        reps[key] = config
        assert config.weight == sizes[key], config
    assert set(reps) == set(sizes)


@pytest.mark.parametrize("text", ["members=3,topics=1,partitions=3",
                                  "members=2,topics=2,partitions=2,generations=1",
                                  "racks=2,partitions=2,members=2,topics=1"])
def test_weights_add_up_to_the_unreduced_scope_at_every_level(text: str) -> None:
    """Levels 1 and 2, with members merged or kept in order, stand for exactly the labelled
    configurations that symmetry=0 checks; each coarser reduction needs fewer
    representatives."""
    counts = {}
    for level, orders in ((0, 0), (1, 1), (2, 1), (1, 0), (2, 0)):
        configs = list(enumerate_scope(Scope.parse(
            f"{text},symmetry={level},orders={orders}".lstrip(","))))
        counts[level, orders] = (len(configs), sum(c.weight for c in configs))
    assert len({labelled for _, labelled in counts.values()}) == 1
    assert counts[2, 0][0] < counts[1, 0][0] < counts[1, 1][0] < counts[0, 0][0]
    assert counts[2, 0][0] < counts[2, 1][0] < counts[1, 1][0]


MUTANTS = ["sticky-user-data-v0", "cooperative-no-withhold", *sorted(ASSIGNOR_MUTANTS)]
SCOPES = ["members=3,topics=1,partitions=2",
          "members=2,topics=2,partitions=2,generations=1,claims=1"]


def _violated(target: str, text: str, *reductions: str) -> list[set[str]]:
    resolved = resolve(target)
    assert resolved.assign is not None and resolved.assignor is not None
    out = []
    for reduction in reductions:
        report = prove(resolved.assign, resolved.assignor, Scope.parse(f"{text},{reduction}"),
                       workers=2, sticky=resolved.balanced, session=resolved.assign_session)
        out.append(set(report.violations))
    return out


@pytest.mark.parametrize("text", SCOPES)
@pytest.mark.parametrize("target", [f"mutant:{m}" for m in MUTANTS] + [
    "builtin:sticky", "builtin:cooperative-sticky"])
def test_keeping_member_order_breaks_the_same_invariants_as_the_full_scope(
        target: str, text: str) -> None:
    """For each mutant of the bug zoo (and the sticky builtins, as controls), the invariants
    broken somewhere in the scope are the same whether every labelled configuration is run
    (symmetry=0) or one per class of topic renamings and generation renumberings, with the
    members kept in the leader's order (orders=1)."""
    full, reduced = _violated(target, text, "symmetry=0", "symmetry=1,orders=1")
    assert full == reduced


def test_merging_member_orders_loses_violations_that_depend_on_the_leaders_order() -> None:
    """The default reduction checks one order of each multiset of members. A leader that
    trusts stale claims (pre-KIP-341 sticky) breaks I3 and crashes only when the members
    arrive in some orders: the unreduced scope and orders=1 find ERROR and I3, the default
    finds I1 alone. (The same holds for librdkafka #3159's round-robin cursor, which the zoo
    therefore proves with symmetry=0.)"""
    full, ordered, merged = _violated("mutant:sticky-user-data-v0", SCOPES[0], "symmetry=0",
                                      "symmetry=1,orders=1", "symmetry=1")
    assert full == ordered == {"ERROR", "I1", "I3"}
    assert merged == {"I1"}
    cursor = _violated("mutant:roundrobin-topic-cursor",
                       "members=2,topics=2,partitions=1,generations=1,claims=1",
                       "symmetry=0", "symmetry=1")
    assert "ERROR" in cursor[0] and "ERROR" not in cursor[1]


def test_renumbering_partitions_loses_violations_that_depend_on_partition_numbers() -> None:
    """symmetry=2 also renumbers the partitions of a topic, which tie-breaks by partition
    number can tell apart: the pre-KIP-341 sticky's crash and the same-generation trust
    mutant's imbalance show only under some numberings, and symmetry=2 misses them where
    symmetry=1 (orders kept) finds them."""
    numbered, renumbered = _violated("mutant:sticky-user-data-v0", SCOPES[0],
                                     "symmetry=1,orders=1", "symmetry=2,orders=1")
    assert "ERROR" in numbered and "ERROR" not in renumbered
    numbered, renumbered = _violated("mutant:cooperative-trust-claims",
                                     "members=2,topics=2,partitions=2,generations=1",
                                     "symmetry=1,orders=1", "symmetry=2,orders=1")
    assert "I3" in numbered and "I3" not in renumbered
