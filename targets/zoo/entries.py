"""The bug zoo, alive: mutants that reproduce historical bugs, and how to catch
each one. A row is named by its id in the bug list of ``docs/explanation/findings.md``.

Every mutant is our implementation with one rule changed back to what a real client once
shipped (a subclass that overrides one method, or one line of a copied method). Each
`ZooEntry` names the cheapest engine that catches it:

* ``scenario`` — fixed ``assign`` requests (the bug report's trigger, client mode), each run
  through the target and judged by the scope prover's rules (I1, I2, I3, I4a, I5, I6, I11,
  follow-up rebalances for cooperative answers), plus an entry-specific expectation where the
  bug report asserts more (per-topic balance for KAFKA-16277);
* ``prove`` — the exhaustive scope prover on a small scope;
* ``codec`` — the I10 codec battery (every writer/reader version pair);
* ``fuzz`` — the state machine;
* ``scale`` — the scale engine within the entry's budget (I13: cost at Kafka's shapes);
* ``vectors`` — the golden vectors' lines of the assignor (``check --parity``).

The control: the same check must pass on the unmutated builtin (``base``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...impl.types import Assignor, TopicPartition
from ...properties.scope.space import Config  # plain data, floor 0
from ..adapters.codecs import BuiltinCodec
from .assignor_mutants import (
    ConsumerCountBalanceStickyAssignor,
    InvertedGenerationCooperativeStickyAssignor,
    LastWriterCooperativeStickyAssignor,
    MaxGenerationOnlyCooperativeStickyAssignor,
    OwnedAtV0RaisesCodec,
    PutBeforeCheckStickyAssignor,
    RackTransferMissCooperativeStickyAssignor,
    TopicCursorRoundRobinAssignor,
    TopicOrderCooperativeStickyAssignor,
    TrustingCooperativeStickyAssignor,
    UnsortedCodec,
)
from .depth_mutants import (
    NameOrderRangeAssignor,
    RebuiltUnfilledCooperativeStickyAssignor,
    StaleBlindCooperativeStickyAssignor,
)
from .escapes import (
    GenerationDroppingStickyAssignor,
    GenerationUnsetStickyAssignor,
    LargeGroupShuffleStickyAssignor,
    SharedStateStickyAssignor,
    WholeTopicAssignor,
)

__all__ = ["ASSIGNOR_MUTANTS", "CODEC_MUTANTS", "PEER_ZOO", "ZOO", "AssignorMutant", "Scenario",
           "ZooEntry", "per_topic_balance", "zoo_entry"]

# ---------------------------------------------------------------------------------------
# Scenarios: fixed assign inputs from the bug reports


@dataclass(frozen=True)
class Scenario:
    """One rebalance input. ``members``: (topic indexes, generation (0 = none), owned
    ``(topic index, partition)`` pairs, rack index or -1), named m0, m1, ... in this order
    (the order the leader received them); ``partitions``: count per topic t0, t1, ...;
    ``racks``: per topic, the rack index of each partition (empty: no racks)."""

    label: str
    partitions: tuple[int, ...]
    members: tuple[tuple[tuple[int, ...], int, tuple[tuple[int, int], ...], int], ...]
    racks: tuple[tuple[int, ...], ...] = ()

    def config(self) -> Any:
        metadata = tuple((c, self.racks[t] if self.racks else ())
                         for t, c in enumerate(self.partitions))
        members = tuple((tuple(topics), gen, rack, tuple(owned))
                        for topics, gen, owned, rack in self.members)
        return Config(metadata, members)


def _all(topics: int) -> tuple[int, ...]:
    return tuple(range(topics))


def _kafka_15106_scenarios() -> tuple[Scenario, ...]:
    out = []
    for g1, g2, g3 in itertools.permutations((1, 2, 3)):
        out.append(Scenario(
            f"KAFKA-15106 three claimants, generations {g1},{g2},{g3}", (6, 1),
            (((0,), g1, ((0, 0), (0, 2)), -1), ((0,), g2, ((0, 1), (0, 2), (0, 3)), -1),
             ((0,), g3, ((0, 2), (0, 4), (0, 5)), -1), ((1,), 2, ((1, 0),), -1))))
    return tuple(out)


def per_topic_balance(assignment: dict[str, list[TopicPartition]],
                      subscriptions: dict[str, list[str]]) -> list[str]:
    """KAFKA-16277's expectation: when every member subscribes to the same topics, each
    topic's partitions are spread within one of each other."""
    subs = {frozenset(ts) for ts in subscriptions.values()}
    if len(subs) != 1:
        return []
    out = []
    for topic in sorted(next(iter(subs))):
        counts = {m: sum(1 for t, _ in assignment.get(m, []) if t == topic)
                  for m in subscriptions}
        if counts and max(counts.values()) - min(counts.values()) > 1:
            shown = ", ".join(f"{m}: {c}" for m, c in sorted(counts.items()))
            out.append(f"I3: {topic} is not spread evenly per topic ({shown})")
    return out


# ---------------------------------------------------------------------------------------
# The zoo


@dataclass(frozen=True)
class ZooEntry:
    row: str
    bug: str
    what: str
    target: str
    base: str
    engine: str  # scenario | prove | codec | fuzz | scale | vectors
    invariant: str
    budget: float = 60.0
    scope: str = ""
    scenarios: tuple[Scenario, ...] = ()
    expect: Callable[[dict[str, list[TopicPartition]], dict[str, list[str]]],
                     list[str]] | None = None


@dataclass(frozen=True)
class AssignorMutant:
    name: str
    assignor: str
    cls: Callable[[], Assignor]
    subscription_version: int | None = None


ASSIGNOR_MUTANTS: dict[str, AssignorMutant] = {m.name: m for m in (
    AssignorMutant("cooperative-trust-claims", "cooperative-sticky",
                   TrustingCooperativeStickyAssignor),
    AssignorMutant("cooperative-max-generation-only", "cooperative-sticky",
                   MaxGenerationOnlyCooperativeStickyAssignor),
    AssignorMutant("cooperative-inverted-generation", "cooperative-sticky",
                   InvertedGenerationCooperativeStickyAssignor),
    AssignorMutant("sticky-put-before-check", "sticky", PutBeforeCheckStickyAssignor),
    AssignorMutant("cooperative-rack-transfer-miss", "cooperative-sticky",
                   RackTransferMissCooperativeStickyAssignor),
    AssignorMutant("cooperative-topic-order-owned", "cooperative-sticky",
                   TopicOrderCooperativeStickyAssignor),
    AssignorMutant("sticky-isbalanced-consumer-count", "sticky",
                   ConsumerCountBalanceStickyAssignor),
    AssignorMutant("roundrobin-topic-cursor", "roundrobin", TopicCursorRoundRobinAssignor),
    AssignorMutant("cooperative-last-writer", "cooperative-sticky",
                   LastWriterCooperativeStickyAssignor, subscription_version=1),
    AssignorMutant("sticky-drops-generation", "sticky", GenerationDroppingStickyAssignor),
    AssignorMutant("sticky-generation-unset", "sticky", GenerationUnsetStickyAssignor),
    AssignorMutant("sticky-shared-state", "sticky", SharedStateStickyAssignor),
    AssignorMutant("sticky-shuffles-large-groups", "sticky", LargeGroupShuffleStickyAssignor),
    AssignorMutant("custom-whole-topic", "whole-topic", WholeTopicAssignor),
    AssignorMutant("cooperative-rebuilt-unfilled", "cooperative-sticky",
                   RebuiltUnfilledCooperativeStickyAssignor),
    AssignorMutant("cooperative-stale-blind", "cooperative-sticky",
                   StaleBlindCooperativeStickyAssignor),
    AssignorMutant("range-topic-name-order", "range", NameOrderRangeAssignor),
)}

CODEC_MUTANTS: dict[str, Callable[[], BuiltinCodec]] = {
    "codec-v0-owned-raises": OwnedAtV0RaisesCodec,
    "codec-unsorted": UnsortedCodec,
}

_T = (0, 1, 2)

ZOO: tuple[ZooEntry, ...] = (
    ZooEntry("1", "KAFKA-7026", "pre-KIP-341 sticky user data (no generation)",
             "mutant:sticky-user-data-v0", "builtin:sticky", "scenario", "I1", 30,
             scenarios=(Scenario("KAFKA-7026 G3: c2 claims 3,4,5 (gen 2), c3 returns with 2,5 "
                                 "(gen 1)", (6,), (((0,), 2, ((0, 3), (0, 4), (0, 5)), -1),
                                                   ((0,), 1, ((0, 2), (0, 5)), -1))),)),
    ZooEntry("2", "KAFKA-12984", "same-generation double claims both kept",
             "mutant:cooperative-trust-claims", "builtin:cooperative-sticky", "scenario", "I1",
             30, scenarios=(Scenario("c1 owns p0,p1, c2 owns p0,p2, c3 nothing; generation 1",
                                     (3,), (((0,), 1, ((0, 0), (0, 1)), -1),
                                            ((0,), 1, ((0, 0), (0, 2)), -1),
                                            ((0,), 1, (), -1))),)),
    ZooEntry("7", "KAFKA-14639", "only highest-generation claims honoured",
             "mutant:cooperative-max-generation-only", "builtin:cooperative-sticky",
             "scenario", "I5", 30,
             scenarios=(Scenario("3 topics x 3: c1 gen 10 owns t0p0,t1p0,t2p0; c3 gen 8 "
                                 "owns t1p1,t2p0,t2p2; c2 gen 9 owns t0p1,t1p1,t2p1", (3, 3, 3), (
                 (_T, 3, ((0, 0), (1, 0), (2, 0)), -1), (_T, 1, ((1, 1), (2, 0), (2, 2)), -1),
                 (_T, 2, ((0, 1), (1, 1), (2, 1)), -1))),)),
    ZooEntry("9", "KAFKA-10082", "generation filter inverted",
             "mutant:cooperative-inverted-generation", "builtin:cooperative-sticky",
             "scenario", "I5", 30,
             scenarios=(Scenario("c0, c1 at generation 2, c2 stale at generation 1", (4,), (
                 ((0,), 2, ((0, 0), (0, 1)), -1), ((0,), 2, ((0, 2), (0, 3)), -1),
                 ((0,), 1, ((0, 0),), -1))),)),
    ZooEntry("10b", "KAFKA-15106", "three-generation claim: put before the check",
             "mutant:sticky-put-before-check", "builtin:sticky", "scenario", "I1", 30,
             scenarios=_kafka_15106_scenarios()),
    ZooEntry("11", "KAFKA-15170", "rack-mismatched owned partition missing from transfers",
             "mutant:cooperative-rack-transfer-miss", "builtin:cooperative-sticky",
             "scenario", "I5", 30,
             scenarios=(Scenario("1 topic x 4, racks r0 r1 r0 r1; c0 (r0) owns p0,p1, "
                                 "c1 (r1) owns p2,p3", (4,), (
                                     ((0,), 1, ((0, 0), (0, 1)), 0),
                                     ((0,), 1, ((0, 2), (0, 3)), 1)),
                                 racks=((0, 1, 0, 1),)),)),
    ZooEntry("12", "KAFKA-16277", "owned partitions kept in topic order: whole topics move",
             "mutant:cooperative-topic-order-owned", "builtin:cooperative-sticky",
             "scenario", "I3", 30,
             scenarios=(Scenario("t0, t1 x 12; c1 owns all 24, c2 joins", (12, 12), (
                 ((0, 1), 1, tuple((t, p) for t in (0, 1) for p in range(12)), -1),
                 ((0, 1), 0, (), -1))),),
             expect=per_topic_balance),
    ZooEntry("13", "KAFKA-10647", "v0 subscription with owned partitions cannot be written",
             "mutant:codec-v0-owned-raises", "builtin:codec", "codec", "I10", 30),
    ZooEntry("14", "KAFKA-12898", "non-canonical subscription bytes",
             "mutant:codec-unsorted", "builtin:codec", "codec", "I10", 30),
    ZooEntry("22", "librdkafka #3306", "sticky isBalanced compares with the consumer count",
             "mutant:sticky-isbalanced-consumer-count", "builtin:sticky", "prove", "I3", 90,
             scope="members=2,topics=2,partitions=3,generations=1,claims=1,stale=0"),
    ZooEntry("24", "librdkafka #3159", "roundrobin cursor wraps per topic (asymmetric)",
             "mutant:roundrobin-topic-cursor", "builtin:roundrobin", "prove", "ERROR", 60,
             scope="members=2,topics=2,partitions=1,generations=1,claims=1,symmetry=0"),
    ZooEntry("A.2-1", "kafka-python #A.2-1", "cooperative: v1 subscriptions, last writer wins",
             "mutant:cooperative-last-writer", "builtin:cooperative-sticky", "scenario", "I6",
             30, scenarios=(Scenario("order (b, a): b owns t0,t1,t2; a claims t2", (3,), (
                 ((0,), 1, ((0, 0), (0, 1), (0, 2)), -1), ((0,), 1, ((0, 2),), -1))),)),
    ZooEntry("KIP-341", "KIP-341 (writer)", "sticky user data without the generation",
             "mutant:sticky-drops-generation", "builtin:sticky", "codec", "I12", 30),
    ZooEntry("29", "aiokafka #1176", "sticky user data always at generation -1",
             "mutant:sticky-generation-unset", "builtin:sticky", "codec", "I12", 30),
    ZooEntry("30", "kafka-python #2775", "sticky state shared by the consumers of a process",
             "mutant:sticky-shared-state", "builtin:sticky", "codec", "I12", 30),
    ZooEntry("A.3-fg", "franz-go dcfcacb5", "stickiness lost in groups of four or more",
             "mutant:sticky-shuffles-large-groups", "builtin:sticky", "fuzz", "I4a", 30),
    ZooEntry("user", "user assignor", "a user's assignor gives a whole topic to one member",
             "mutant:custom-whole-topic",
             "python:groupcheck.targets.zoo.escapes:LeastLoadedAssignor", "prove", "I3", 60,
             scope="members=2,topics=2,partitions=2,generations=1,claims=1"),
    ZooEntry("cost", "quadratic port", "the unfilled members rebuilt for every partition",
             "mutant:cooperative-rebuilt-unfilled", "builtin:cooperative-sticky", "scale",
             "I13", 120),
    ZooEntry("gen3", "three generations", "a stale claim never beats an older stale claim",
             "mutant:cooperative-stale-blind", "builtin:cooperative-sticky", "prove", "I6",
             30, scope="members=3,topics=1,partitions=1,generations=3,claims=3"),
    ZooEntry("order", "list order", "range lists each member's topics in name order",
             "mutant:range-topic-name-order", "builtin:range", "vectors", "PARITY", 60),
)

#: the real peer behind A.2-1; checked by ``groupcheck zoo --peers``
PEER_ZOO: tuple[ZooEntry, ...] = (
    ZooEntry("A.2-1", "kafka-python #A.2-1", "kafka-python's own CooperativeStickyAssignor",
             "kafka-python:cooperative-sticky", "builtin:cooperative-sticky", "scenario",
             "I6", 30, scenarios=next(e.scenarios for e in ZOO if e.row == "A.2-1")),
)


def zoo_entry(row: str) -> ZooEntry:
    for entry in ZOO:
        if entry.row == row:
            return entry
    raise KeyError(row)
