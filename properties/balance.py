"""Balance contracts (I3): which balance rule an assignor promises, and each rule as a
predicate over plain data.

An assignor promises one of four contracts:

* ``sticky`` — Kafka's ``isBalanced`` (``assignment.balanced``): sizes differ by at most
  one, or no member could take a partition of its topics from a member holding at least two
  more. Kafka's sticky and cooperative-sticky assignors keep it (KIP-54, KIP-429).
* ``range`` — per topic, its partitions are split over the topic's subscribers so that
  their shares differ by at most one (Kafka's ``RangeAssignor``: ⌊n/k⌋ each, one more for
  the first n mod k).
* ``roundrobin`` — when every member subscribes to the same topics, sizes differ by at most
  one (Kafka's ``RoundRobinAssignor``; with unequal subscriptions it promises nothing).
* ``none`` — no balance is promised (the imbalance is still reported as a figure).

Kafka's four assignors carry their own contract by name. A user's assignor declares one
with a ``balance`` attribute; one that does not gets the strictest rule for either protocol,
``sticky``: it is the only one of the three that judges the group as a whole across topics
(with equal subscriptions it is exactly the roundrobin rule; range's per-topic rule is a
different promise, made by range's algorithm only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .assignment import AssignmentMap, balanced

__all__ = ["CONTRACTS", "STICKY_FAMILY", "contract_of", "imbalance", "judge_balance",
           "range_balanced", "roundrobin_balanced"]

CONTRACTS = ("range", "roundrobin", "sticky", "none")
_KAFKA_CONTRACTS = {"range": "range", "roundrobin": "roundrobin", "sticky": "sticky",
                   "cooperative-sticky": "sticky"}
_STRICTEST = "sticky"
#: assignors whose stickiness (I4) is promised by name (KIP-54, KIP-429)
STICKY_FAMILY = frozenset({"sticky", "cooperative-sticky"})


def contract_of(name: str, declared: str | None) -> tuple[str, str]:
    """The contract an assignor named ``name`` is held to, and why (for the output)."""
    if declared is not None:
        return declared, f"declared (balance = {declared!r})"
    if name in _KAFKA_CONTRACTS:
        return _KAFKA_CONTRACTS[name], f"Kafka's rule for its {name} assignor"
    return _STRICTEST, ("not declared: the strictest rule, Kafka's isBalanced (set a "
                       "'balance' attribute to 'range', 'roundrobin', 'sticky' or 'none')")


def _sizes(assignment: AssignmentMap,
           subscriptions: Mapping[str, Iterable[str]]) -> dict[str, int]:
    sizes = {m: len(list(ps)) for m, ps in assignment.items()}
    for m in subscriptions:
        sizes.setdefault(m, 0)
    return sizes


def imbalance(assignment: AssignmentMap, subscriptions: Mapping[str, Iterable[str]]) -> int:
    """Largest minus smallest number of partitions among the members (a figure)."""
    sizes = _sizes(assignment, subscriptions)
    return max(sizes.values()) - min(sizes.values()) if sizes else 0


def range_balanced(assignment: AssignmentMap, subscriptions: Mapping[str, Iterable[str]],
                   partitions: Mapping[str, int]) -> list[str]:
    """The range contract: per topic, the shares of its subscribers differ by at most one."""
    subs = {m: set(ts) for m, ts in subscriptions.items()}
    out: list[str] = []
    for topic in sorted({t for ts in subs.values() for t in ts if t in partitions}):
        takers = sorted(m for m, ts in subs.items() if topic in ts)
        share = {m: sum(1 for tp in assignment.get(m, ()) if tp[0] == topic) for m in takers}
        if max(share.values()) - min(share.values()) > 1:
            shown = ", ".join(f"{m} {n}" for m, n in share.items())
            out.append(f"I3: {topic}'s {partitions[topic]} partitions are split {shown} "
                       "among its subscribers (range: shares differ by at most one)")
    return out


def roundrobin_balanced(assignment: AssignmentMap,
                        subscriptions: Mapping[str, Iterable[str]],
                        partitions: Mapping[str, int]) -> list[str]:
    """The roundrobin contract: with equal subscriptions, sizes differ by at most one."""
    topic_sets = {frozenset(t for t in ts if t in partitions) for ts in subscriptions.values()}
    if len(topic_sets) != 1:
        return []
    sizes = _sizes(assignment, subscriptions)
    if not sizes or max(sizes.values()) - min(sizes.values()) <= 1:
        return []
    shown = ", ".join(f"{m} {n}" for m, n in sorted(sizes.items()))
    return [f"I3: with equal subscriptions the members hold {shown} partitions "
            "(roundrobin: sizes differ by at most one)"]


def judge_balance(contract: str, assignment: AssignmentMap,
                  subscriptions: Mapping[str, Iterable[str]],
                  partitions: Mapping[str, int]) -> list[str]:
    """I3 under ``contract`` (empty for ``none``)."""
    if contract == "sticky":
        return balanced(assignment, subscriptions, partitions)
    if contract == "range":
        return range_balanced(assignment, subscriptions, partitions)
    if contract == "roundrobin":
        return roundrobin_balanced(assignment, subscriptions, partitions)
    return []
