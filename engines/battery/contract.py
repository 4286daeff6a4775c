"""The range and roundrobin balance contracts (I3) on every answer the prover and the
scenarios engine get.

The scope prover and the chain driver judge Kafka's isBalanced, the sticky family's rule;
range promises a per-topic split and roundrobin an even one under equal subscriptions
(`properties.balance`), rules they do not know. `ContractWatch` wraps a target's assign
function and judges each answer (an EAGER assignor's answer is final) against the
contract as it passes, without changing it. The first violation is appended to a file, so
the prover's forked workers report it too; the caller reads it back with `first`.
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypedDict

from ...properties.balance import judge_balance
from ...properties.jsonl_shapes import AssignAnswer, AssignFn, AssignRequest
from ...properties.rebalance import assignment_of
from ...properties.scope.batch import AssignManyFn
from .results import Finding, save_json

__all__ = ["AssignFn", "ContractWatch", "watched"]



class _Logged(TypedDict):
    """One violation a process logged: what it broke, on which request and answer, when."""

    violation: str
    request: AssignRequest
    response: AssignAnswer
    at: float
    pid: int


class ContractWatch:
    """An assign function that also judges ``contract`` on what it answers."""

    def __init__(self, assign: AssignFn, contract: str, log: Path) -> None:
        self.assign = assign
        self.contract = contract
        self.log = log
        self.seen = False

    def __call__(self, request: AssignRequest) -> AssignAnswer:
        response = self.assign(request)
        if not self.seen:
            self._judge(request, response)
        return response

    def watch_many(self, assign_many: AssignManyFn) -> AssignManyFn:
        """``assign_many`` (a batch assign function) with each answer judged as it passes,
        as `__call__` judges one."""
        def many(requests: Iterable[AssignRequest]) -> Iterator[AssignAnswer | Exception]:
            asked: deque[AssignRequest] = deque()

            def taken() -> Iterator[AssignRequest]:
                for request in requests:
                    asked.append(request)
                    yield request

            for answer in assign_many(taken()):
                request = asked.popleft()
                if not self.seen and not isinstance(answer, Exception):
                    self._judge(request, answer)
                yield answer
        return many

    def _judge(self, request: AssignRequest, response: AssignAnswer) -> None:
        try:
            assignment = assignment_of(response)
        except ValueError:
            return  # no answer to judge: the engine reports it
        subs = {m: list(v.get("topics") or []) for m, v in request["members"].items()}
        found = judge_balance(self.contract, assignment, subs, request.get("partitions") or {})
        if found:
            self.seen = True
            line = json.dumps({"violation": found[0], "request": request, "response": response,
                               "at": time.perf_counter(), "pid": os.getpid()})
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    def first(self, failures: str, target: str) -> Finding | None:
        """The earliest violation any process logged, saved as a request file."""
        if not self.log.exists():
            return None
        text = self.log.read_text(encoding="utf-8")
        lines: list[_Logged] = [json.loads(x) for x in text.splitlines() if x]
        self.log.unlink(missing_ok=True)
        if not lines:
            return None
        hit = min(lines, key=_smallest)  # whichever process logged it first
        request = hit["request"]
        path = save_json(failures, f"contract-{target}-I3", {
            **request, "groupcheck": {"format": "groupcheck-contract/1", "target": target,
                                      "contract": self.contract, "violations": [hit["violation"]],
                                      "response": hit["response"]}},
            {"target": target, "invariant": "I3", "request": request})
        return Finding("I3", hit["violation"], path, len(request["members"]),
                       f"request:  {json.dumps(request)}\n"
                       f"response: {json.dumps(hit['response'])}",
                       min(x["at"] for x in lines))


def _smallest(logged: _Logged) -> tuple[int, int, str]:
    """The order in which logged violations are saved: fewest members, then partitions,
    then the request's text — not the moment, which differs between runs with workers."""
    request = logged["request"]
    return (len(request["members"]), sum((request.get("partitions") or {}).values()),
            json.dumps(request))


def watched(assign: AssignFn, contract: str, failures: str) -> ContractWatch:
    """A `ContractWatch` logging under ``failures`` (a fresh log each time)."""
    directory = Path(failures)
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / f".contract-{os.getpid()}-{time.perf_counter_ns()}.jsonl"
    return ContractWatch(assign, contract, log)
