"""``groupcheck replay`` of a request file: one saved ``assign`` request run again on a target.

A request file is what the prover, the golden-vector engine, ``diff`` and the findings under
``findings/`` save: the request at the top level (``groupcheck assign FILE`` runs it on the
builtins) and groupcheck's notes under ``"groupcheck"`` (the target it failed on, the
violation). Replaying sends the request to a target and judges the one answer as the scope
prover judges a round (``properties``): I1 and the validity half of I2 always; COOPERATIVE
answers I5 and I6 over the claims members send; EAGER answers (settled at once) complete
(I2) and, for the sticky family, balanced (I3) and I4a where its premise holds (one
generation, no racks, claims that form a complete, balanced, disjoint assignment: nothing
may move; a cooperative answer's I4a is Kafka's rule K2, left to the prover). A target that
raises is ``ERROR``, one that does not answer within its time limit ``TIMEOUT`` (the JVM of a
``java:`` target is killed).

A request's size (`request_size`) and every request one step smaller (`smaller_requests`)
serve ``shrink`` of a request file and ``diff``'s shrinking of a disagreement.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from ...properties import assignment as A
from ...properties.generations import claim_breaches, uncontested
from ...properties.harness import HarnessError
from ...properties.jsonl_shapes import AssignAnswer, AssignRequest, pair_of
from ...properties.rebalance import assignment_of, i4a_applies, sent_claims
from ...properties.scope.judgement import failure_text
from ...targets.target import STICKY_FAMILY, Target

__all__ = ["answer_table", "is_request_file", "judge_answer", "replay_request", "request_size",
           "smaller_requests"]


def is_request_file(body: Any) -> bool:
    """A saved ``assign`` request (not a state-machine replay file)."""
    return isinstance(body, dict) and isinstance(body.get("members"), dict) \
        and "format" not in body


def judge_answer(request: Mapping[str, Any], response: Mapping[str, Any]) -> list[str]:
    """The violations one answer shows (see the module docstring)."""
    assignment = assignment_of(response)
    subs = {m: list(v.get("topics") or []) for m, v in request["members"].items()}
    partitions: dict[str, int] = dict(request.get("partitions") or {})
    found = A.exclusive_ownership(assignment) + A.valid_targets(assignment, subs, partitions)
    protocol = str(response.get("protocol") or "EAGER")
    if protocol == "COOPERATIVE":
        members = {m: {"topics": v.get("topics") or [], "owned": v.get("owned") or [],
                       "generation": v.get("generation")}
                   for m, v in request["members"].items()}
        sent = sent_claims({"members": members})
        found += A.revoke_before_reassign(uncontested(sent), assignment)
        found += [b.describe() for b in claim_breaches(sent, assignment, protocol)]
    else:
        found += A.complete(assignment, subs, partitions)
        if request.get("assignor") in STICKY_FAMILY:
            found += A.balanced(assignment, subs, partitions)
    if protocol != "COOPERATIVE" and request.get("assignor") in STICKY_FAMILY \
            and i4a_applies(request, subs, partitions):  # (cooperative: Kafka's rule K2)
        before = {m: [(t, p) for t, p in v["owned"]] for m, v in request["members"].items()}
        found += A.no_moves_when_balanced(before, assignment)
    return found


def replay_request(target: Target, request: AssignRequest
                   ) -> tuple[AssignAnswer | None, list[str]]:
    """(the answer, or None when the target failed; the violations)."""
    assert target.assign is not None
    try:
        response = target.assign(request)
    except HarnessError:  # groupcheck's own failure: never a finding
        raise
    except Exception as exc:  # noqa: BLE001 - a failing target is the finding
        return None, [failure_text(exc)]
    try:
        return response, judge_answer(request, response)
    except ValueError as exc:
        return response, [f"ERROR: the answer cannot be judged: {exc}"]


def answer_table(response: Mapping[str, Any], indent: str = "  ") -> str:
    """Member → partitions, one line each under ``indent`` (or the answer's error)."""
    if "error" in response:
        return f"{indent}error: {response['error']}"
    rows = [f"{indent}{m}: " + (" ".join(f"{t}-{p}" for t, p in ps) or "-")
            for m, ps in (response.get("assignment") or {}).items()]
    return "\n".join(rows) or f"{indent}(no members)"


def request_size(request: AssignRequest) -> tuple[int, int, int, int]:
    members = request.get("members") or {}
    return (len(members), sum((request.get("partitions") or {}).values()),
            sum(len(v.get("owned") or []) for v in members.values()),
            sum(len(v.get("topics") or []) for v in members.values()))


def smaller_requests(request: AssignRequest) -> Iterator[AssignRequest]:
    """Every request one step smaller than ``request`` (a member, a topic, a partition, a
    claim or a subscription less), in the order delta debugging tries them."""
    members = request.get("members") or {}
    partitions = request.get("partitions") or {}
    for m in list(members):
        if len(members) > 1:
            r = copy.deepcopy(request)
            del r["members"][m]
            yield r
    for t in list(partitions):
        r = copy.deepcopy(request)
        del r["partitions"][t]
        r.get("racks", {}).pop(t, None)
        for v in r["members"].values():
            v["owned"] = [tp for tp in v.get("owned") or [] if tp[0] != t]
            v["topics"] = [x for x in v.get("topics") or [] if x != t]
        yield r
        if partitions[t] > 1:
            r = copy.deepcopy(request)
            n = r["partitions"][t] = partitions[t] - 1
            racks = r.get("racks")
            if racks is not None and t in racks:
                racks[t] = racks[t][:n]
            for v in r["members"].values():
                v["owned"] = [tp for tp in v.get("owned") or []
                              if tp[0] != t or pair_of(tp)[1] < n]
            yield r
    for m, v in members.items():
        for i in range(len(v.get("owned") or [])):
            r = copy.deepcopy(request)
            del r["members"][m]["owned"][i]
            yield r
        for i in range(len(v.get("topics") or [])):
            r = copy.deepcopy(request)
            del r["members"][m]["topics"][i]
            yield r
