"""Broken audit targets (``pyfn:tests/targets/audit_targets.py:<name>``): the audit must catch
them."""

from __future__ import annotations

from typing import Any

from groupcheck.impl.assign_op import run_assign


def assign_twice(request: dict[str, Any]) -> dict[str, Any]:
    """Range, except that the first partition of the first member with any is also given
    to the next member (I1)."""
    response = run_assign(request)
    members = list(response["assignment"])
    for i, member in enumerate(members[:-1]):
        if response["assignment"][member]:
            response["assignment"][members[i + 1]].append(response["assignment"][member][0])
            break
    return response


assign_twice.assignor = "range"  # type: ignore[attr-defined]


def assign_nothing(request: dict[str, Any]) -> dict[str, Any]:
    """Answers with every member empty (I2: nothing is owned)."""
    response = run_assign(request)
    response["assignment"] = {m: [] for m in response["assignment"]}
    return response


assign_nothing.assignor = "roundrobin"  # type: ignore[attr-defined]


def first_claimant_keeps(request: dict[str, Any]) -> dict[str, Any]:
    """A cooperative answer that gives every claimed partition to its first claimant (in
    member order) that subscribes to the topic, whatever the generations (I6 when the
    first claimant is stale, or ties with another on equal subscriptions); unclaimed
    partitions go to their least-loaded subscriber."""
    members = request["members"]
    assignment: dict[str, list[list[Any]]] = {m: [] for m in members}
    for topic, count in sorted(request["partitions"].items()):
        subscribers = [m for m, v in members.items() if topic in v["topics"]]
        for p in range(count):
            claimants = [m for m in subscribers if [topic, p] in members[m]["owned"]]
            if claimants:
                assignment[claimants[0]].append([topic, p])
            elif subscribers:
                lightest = min(subscribers, key=lambda m: len(assignment[m]))
                assignment[lightest].append([topic, p])
    return {"assignment": assignment, "generation": request["newGeneration"],
            "protocol": "COOPERATIVE"}


first_claimant_keeps.assignor = "cooperative-sticky"  # type: ignore[attr-defined]
