"""Broken audit targets (``pyfn:tests/audit_targets.py:<name>``): the audit must catch them."""

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
