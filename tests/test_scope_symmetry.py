"""The scope prover's reductions: one representative per class, weights that count every
labelled configuration once, and — for the default reduction, the only one that is a proof
— the same verdicts as the unreduced scope on every builtin and every mutant of the bug zoo.

The classes are recomputed here by brute force, independently of ``scope.orbits``: every
labelled configuration of the unreduced enumeration is mapped to its smallest image under
the group of the level: generation values renumbered in order (every level), topics renamed
(levels 2 and 3), members merged into a multiset (levels 2 and 3 unless ``orders=1``) and
partitions of a topic renumbered within the leader's metadata and beyond it (level 3).

Levels 2 and 3 are not proofs: Kafka's assignors read member ids, topic names and partition
numbers through sorted and hashed orders that renaming changes, and the last tests show
violations each of them loses; their reports say "sampled, not proved".
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest

from groupcheck.properties.scope import Scope, enumerate_scope, prove
from groupcheck.properties.scope.space import Config
from groupcheck.targets.registry import resolve
from groupcheck.targets.zoo.entries import ASSIGNOR_MUTANTS


def _renumberings(count: int, limit: int, level: int) -> list[tuple[int, ...]]:
    """Partition renumberings of one topic: inside the metadata and beyond it separately."""
    if level < 3:
        return [tuple(range(max(count, limit)))]
    inside = itertools.permutations(range(count))
    return [a + b for a in inside
            for b in itertools.permutations(range(count, max(count, limit)))]


def _class_key(config: Config, scope: Scope, level: int, orders: int = 0) -> Any:
    """The smallest image of ``config`` under the group of ``level`` (brute force)."""
    topics = len(config.metadata)
    images = []
    renamings = (itertools.permutations(range(topics)) if level >= 2
                 else [tuple(range(topics))])
    for sigma in renamings:
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
            merged = level >= 2 and not orders
            images.append((tuple(meta), tuple(sorted(members) if merged else members)))
    return min(images)


@pytest.mark.parametrize("text", [
    "members=2,topics=2,partitions=2,generations=1",
    "members=2,topics=1,partitions=3,generations=2,claims=2,stale=2",
    "members=2,topics=2,partitions=1,racks=2,generations=1",
    "members=3,topics=1,partitions=2,generations=2,claims=3",
    "members=2,topics=1,partitions=2,generations=3,claims=2",
])
@pytest.mark.parametrize(("level", "orders"), [
    (1, 0), (2, 0), (2, 1), *(pytest.param(3, o, marks=pytest.mark.heavy) for o in (0, 1))])
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


@pytest.mark.parametrize("text", [pytest.param("members=3,topics=1,partitions=3",
                                               marks=pytest.mark.heavy),
                                  "members=2,topics=2,partitions=2,generations=1",
                                  "racks=2,partitions=2,members=2,topics=1"])
def test_weights_add_up_to_the_unreduced_scope_at_every_level(text: str) -> None:
    """Every level, with members merged or kept in order, stands for exactly the labelled
    configurations that symmetry=0 checks; each coarser reduction needs fewer
    representatives."""
    counts = {}
    for level, orders in ((0, 0), (1, 0), (2, 1), (2, 0), (3, 1), (3, 0)):
        configs = list(enumerate_scope(Scope.parse(
            f"{text},symmetry={level},orders={orders}".lstrip(","))))
        counts[level, orders] = (len(configs), sum(c.weight for c in configs))
    assert len({labelled for _, labelled in counts.values()}) == 1
    assert counts[2, 0][0] < counts[2, 1][0] <= counts[1, 0][0] <= counts[0, 0][0]
    assert counts[3, 0][0] < counts[2, 0][0] and counts[3, 1][0] < counts[2, 1][0]


MUTANTS = ["sticky-user-data-v0", "cooperative-no-withhold", *sorted(ASSIGNOR_MUTANTS)]
BUILTINS = ["builtin:sticky", "builtin:cooperative-sticky", "builtin:range",
            "builtin:roundrobin"]
#: small scopes where generation values are reduced (three values), with stale claims or
#: racks
SCOPES = ["members=3,topics=1,partitions=2,generations=3,claims=2,stale=0",
          "members=2,topics=2,partitions=1,generations=3,claims=2,stale=1",
          "members=2,topics=1,partitions=2,generations=2,claims=2,racks=2"]


def _reports(target: str, text: str, *reductions: str) -> list[Any]:
    resolved = resolve(target)
    assert resolved.assign is not None and resolved.assignor is not None
    return [prove(resolved.assign, resolved.assignor, Scope.parse(f"{text},{reduction}"),
                  workers=2, sticky=resolved.balanced, session=resolved.assign_session)
            for reduction in reductions]


#: the mutants the default run proves the reduction on: one for a member's user data, one
#: for generations, one for the order of members and topics; every other mutant of the zoo,
#: several seconds each, is tox -e heavy's
DEFAULT_MUTANTS = {"sticky-user-data-v0", "cooperative-inverted-generation",
                   "roundrobin-topic-cursor"}
#: the builtins the default run proves it on: one eager, one cooperative
DEFAULT_BUILTINS = {"builtin:range", "builtin:cooperative-sticky"}


@pytest.mark.parametrize("text", [SCOPES[0], *(pytest.param(t, marks=pytest.mark.heavy)
                                                 for t in SCOPES[1:])])
@pytest.mark.parametrize("target", [
    pytest.param(f"mutant:{m}", marks=[] if m in DEFAULT_MUTANTS else [pytest.mark.heavy])
    for m in MUTANTS] + [pytest.param(b, marks=[] if b in DEFAULT_BUILTINS else [pytest.mark.heavy])
                         for b in BUILTINS])
def test_default_reduction_finds_exactly_what_the_unreduced_scope_finds(
        target: str, text: str) -> None:
    """The default reduction (symmetry=1, generation values up to their order) is a proof:
    on every builtin and every mutant of the bug zoo, the labelled configurations its
    representatives stand for break each invariant exactly as often as the unreduced scope
    (symmetry=0, every configuration run) breaks it — not only the same invariants, the same
    counts — and the report calls itself proved."""
    full, reduced = _reports(target, text, "symmetry=0", "symmetry=1")
    assert reduced.proved and full.proved
    assert reduced.configurations < full.configurations
    assert reduced.labelled == full.labelled == full.configurations
    assert reduced.violations_labelled == full.violations


def test_reports_of_renaming_reductions_say_sampled_not_proved() -> None:
    """Levels 2 and 3 rename what assignors can tell apart: their report never claims a
    proof, in the table and in the JSON."""
    (report,) = _reports("builtin:range", "members=2,topics=2,partitions=1", "symmetry=2")
    assert not report.proved and not report.to_dict()["proved"]
    assert "SAMPLED, NOT PROVED" in report.table()
    assert "sampled, not proved" in report.table().splitlines()[-1]


def test_merging_member_orders_loses_violations_that_depend_on_the_leaders_order() -> None:
    """Level 2 checks one order of each multiset of members. A leader that trusts stale
    claims (pre-KIP-341 sticky) breaks I3 and crashes only when the members arrive in some
    orders: the unreduced scope and the default find ERROR and I3, level 2 finds I1 alone.
    (The same holds for librdkafka #3159's round-robin cursor.)"""
    text = "members=3,topics=1,partitions=2"
    full, default, merged = (set(r.violations) for r in _reports(
        "mutant:sticky-user-data-v0", text, "symmetry=0", "symmetry=1", "symmetry=2"))
    assert full == default == {"ERROR", "I1", "I3"}
    assert merged == {"I1"}
    cursor = [set(r.violations) for r in _reports(
        "mutant:roundrobin-topic-cursor",
        "members=2,topics=2,partitions=1,generations=1,claims=1", "symmetry=0", "symmetry=2")]
    assert "ERROR" in cursor[0] and "ERROR" not in cursor[1]


def test_renumbering_partitions_loses_violations_that_depend_on_partition_numbers() -> None:
    """Level 3 also renumbers the partitions of a topic, which tie-breaks by partition
    number can tell apart: the pre-KIP-341 sticky's crash and the same-generation trust
    mutant's imbalance show only under some numberings, and level 3 misses them where level
    2 with the members' orders kept finds them."""
    numbered, renumbered = (set(r.violations) for r in _reports(
        "mutant:sticky-user-data-v0", "members=3,topics=1,partitions=2",
        "symmetry=2,orders=1", "symmetry=3,orders=1"))
    assert "ERROR" in numbered and "ERROR" not in renumbered
    numbered, renumbered = (set(r.violations) for r in _reports(
        "mutant:cooperative-trust-claims", "members=2,topics=2,partitions=2,generations=1",
        "symmetry=2,orders=1", "symmetry=3,orders=1"))
    assert "I3" in numbered and "I3" not in renumbered


def test_checks_prover_engine_says_whether_its_run_is_a_proof(tmp_path: Any) -> None:
    """The ``check`` command's prover engine uses the same reductions and its note tells a
    proof (the default level) from a sample (renaming levels)."""
    from groupcheck.engines.battery.runner import run_prove

    target = resolve("builtin:range")
    text = "members=2,topics=1,partitions=1"
    proved = run_prove(target, text, str(tmp_path), workers=1)
    sampled = run_prove(target, f"{text},symmetry=2", str(tmp_path), workers=1)
    assert proved.note.endswith(": proof") and "symmetry=1" in proved.note
    assert sampled.note.endswith("sampled, not proved")
