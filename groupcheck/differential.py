"""Differential runs: two targets on the same ``assign`` requests, the first disagreement
shrunk to the fewest members and partitions.

Requests come from the scope prover's enumeration, smallest configuration first (so the
first disagreement there is already small), then from the golden vectors. Two answers
disagree when some member gets a different set of partitions, or one target raises and the
other answers. A disagreement from the vectors is shrunk greedily: drop a member, drop a
topic from the metadata, lower a partition count, drop an owned partition, drop a topic
from a subscription — keeping each step after which the targets still disagree. A request
on which a target does not answer within its time limit ends the run as ``TIMEOUT``,
unshrunk (each try could cost the whole time limit).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .battery import answer, load_assign_vectors, partition_sets
from .targets.registry import Target

AssignFn = Callable[[dict[str, Any]], dict[str, Any]]


def disagree(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if ("error" in a) != ("error" in b):
        return True
    if "error" in a:
        return False
    return partition_sets(a) != partition_sets(b)


def request_size(request: dict[str, Any]) -> tuple[int, int, int, int]:
    members = request.get("members") or {}
    return (len(members), sum((request.get("partitions") or {}).values()),
            sum(len(v.get("owned") or []) for v in members.values()),
            sum(len(v.get("topics") or []) for v in members.values()))


def _smaller(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    members: dict[str, Any] = request.get("members") or {}
    partitions: dict[str, int] = request.get("partitions") or {}
    for m in list(members):
        if len(members) > 1:
            r = copy.deepcopy(request)
            del r["members"][m]
            yield r
    for t in list(partitions):
        r = copy.deepcopy(request)
        del r["partitions"][t]
        if "racks" in r:
            r["racks"].pop(t, None)
        for v in r["members"].values():
            v["owned"] = [tp for tp in v.get("owned") or [] if tp[0] != t]
            v["topics"] = [x for x in v.get("topics") or [] if x != t]
        yield r
        if partitions[t] > 1:
            r = copy.deepcopy(request)
            n = r["partitions"][t] = partitions[t] - 1
            if "racks" in r and t in r["racks"]:
                r["racks"][t] = r["racks"][t][:n]
            for v in r["members"].values():
                v["owned"] = [tp for tp in v.get("owned") or [] if tp[0] != t or tp[1] < n]
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


def shrink(request: dict[str, Any], a: AssignFn, b: AssignFn,
           max_tries: int = 5000) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The smallest request found on which ``a`` and ``b`` still disagree."""
    current = request
    got_a, got_b = answer(a, current), answer(b, current)
    tries = 0
    improved = True
    while improved and tries < max_tries:
        improved = False
        for candidate in _smaller(current):
            tries += 1
            ca, cb = answer(a, candidate), answer(b, candidate)
            if disagree(ca, cb) and not (ca.get("timeout") or cb.get("timeout")):
                current, got_a, got_b, improved = candidate, ca, cb, True
                break
            if tries >= max_tries:
                break
    return current, got_a, got_b


@dataclass
class DiffResult:
    compared: int
    seconds: float
    source: str = ""
    request: dict[str, Any] | None = None
    a: dict[str, Any] | None = None
    b: dict[str, Any] | None = None
    original_size: tuple[int, ...] = ()
    timeout: str = ""  # "a" or "b": that target did not answer in time

    @property
    def agree(self) -> bool:
        return self.request is None


def _scope_requests(assignor: str, scope_text: str) -> Iterator[dict[str, Any]]:
    from .properties.scope import Scope, build_request, enumerate_scope

    configs = sorted(enumerate_scope(Scope.parse(scope_text)), key=lambda c: c.size_key())
    for config in configs:
        yield build_request(assignor, config)


def run_diff(a: Target, b: Target, *, assignor: str, scope: str, vectors: bool = True,
             budget: float = 120.0) -> DiffResult:
    assert a.assign is not None and b.assign is not None
    started = time.perf_counter()
    compared = 0

    def sources() -> Iterator[tuple[str, dict[str, Any]]]:
        for r in _scope_requests(assignor, scope):
            yield f"scope {scope}", r
        if vectors:
            for line in load_assign_vectors():
                if line["request"].get("assignor") == assignor:
                    yield f"vector {line.get('case')}", line["request"]

    for source, request in sources():
        if time.perf_counter() - started > budget:
            break
        compared += 1
        ra, rb = answer(a.assign, request), answer(b.assign, request)
        if ra.get("timeout") or rb.get("timeout"):
            return DiffResult(compared, time.perf_counter() - started, source, request, ra, rb,
                              request_size(request), "a" if ra.get("timeout") else "b")
        if disagree(ra, rb):
            small, sa, sb = shrink(request, a.assign, b.assign)
            return DiffResult(compared, time.perf_counter() - started, source, small, sa, sb,
                              request_size(request))
    return DiffResult(compared, time.perf_counter() - started)


def _table(response: dict[str, Any]) -> str:
    if "error" in response:
        return f"    error: {response['error']}"
    rows = []
    for m, ps in (response.get("assignment") or {}).items():
        rows.append(f"    {m}: " + (" ".join(f"{t}-{p}" for t, p in ps) or "-"))
    return "\n".join(rows) or "    (no members)"


def describe(result: DiffResult, name_a: str, name_b: str) -> str:
    if result.agree:
        return (f"{name_a} and {name_b} agree on {result.compared:,} requests "
                f"({result.seconds:.1f}s)")
    assert result.request is not None and result.a is not None and result.b is not None
    size = request_size(result.request)
    if result.timeout:
        hung = name_a if result.timeout == "a" else name_b
        return "\n".join([
            f"TIMEOUT after {result.compared:,} requests ({result.seconds:.1f}s), found in "
            f"{result.source}: {hung} did not answer within its time limit "
            f"({size[0]} members / {size[1]} partitions; not shrunk)",
            f"request: {json.dumps(result.request, ensure_ascii=False)}",
            f"  {name_a} answered", _table(result.a),
            f"  {name_b} answered", _table(result.b),
        ])
    return "\n".join([
        f"DISAGREE after {result.compared:,} requests ({result.seconds:.1f}s), found in "
        f"{result.source}",
        f"shrunk from {result.original_size[0]} members / {result.original_size[1]} partitions "
        f"to {size[0]} members / {size[1]} partitions:",
        f"request: {json.dumps(result.request, ensure_ascii=False)}",
        f"  {name_a} answered", _table(result.a),
        f"  {name_b} answered", _table(result.b),
    ])
