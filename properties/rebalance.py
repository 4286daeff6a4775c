"""One ``assign`` round read as plain data: the claims a request carries, the answer's
assignment, and when I4a applies. The scope prover and the audit judge rounds the same way
through these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import assignment as A

__all__ = ["Claims", "TopicPartition", "assignment_of", "claims_of", "i4a_applies", "sent_claims"]

TopicPartition = tuple[str, int]
Claims = dict[str, tuple[list[TopicPartition], int | None]]


def claims_of(request: Mapping[str, Any]) -> Claims:
    """Every member's owned partitions and generation, as the request states them."""
    return {m: ([(t, p) for t, p in v["owned"]], v["generation"])
            for m, v in request["members"].items()}


def sent_claims(request: Mapping[str, Any]) -> Claims:
    """What a cooperative consumer still owns when it joins: nothing without a generation,
    and nothing of a topic it no longer subscribes to (it revoked those first, KIP-429)."""
    out: Claims = {}
    for m, v in request["members"].items():
        topics = set(v["topics"])
        owned = ([(t, p) for t, p in v["owned"] if t in topics]
                 if v["generation"] is not None else [])
        out[m] = (owned, v["generation"])
    return out


def assignment_of(response: Any) -> dict[str, list[TopicPartition]]:
    """The answer's assignment; ValueError when the response has none."""
    if not isinstance(response, dict) or not isinstance(response.get("assignment"), dict):
        raise ValueError("the response has no 'assignment' object")
    return {str(m): [(str(tp[0]), int(tp[1])) for tp in parts]
            for m, parts in response["assignment"].items()}


def i4a_applies(request: Mapping[str, Any], subs: Mapping[str, list[str]],
                partitions: Mapping[str, int]) -> bool:
    """I4a's premise: one generation for every member, no racks, and the claims form a
    complete, balanced, disjoint assignment."""
    gens = {v["generation"] for v in request["members"].values()}
    if len(gens) != 1 or None in gens or "racks" in request:
        return False
    prev = {m: [(t, p) for t, p in v["owned"]] for m, v in request["members"].items()}
    return not A.complete(prev, subs, partitions) and not A.balanced(prev, subs, partitions)
