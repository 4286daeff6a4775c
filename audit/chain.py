"""Drive one target through one scenario spec and judge every rebalance.

`run_chain(target, spec)` plays the spec's story as a group would: each rebalance is an
``assign`` request in client mode (every member's subscription built as a consumer with
the target's assignor builds it from its topics, owned partitions and generation); a
COOPERATIVE answer that leaves partitions unassigned gets follow-up rebalances (each member
now owns what it was given, at the new generation) until the group settles. Needing more
than `MAX_FOLLOW_UPS` is I11; follow-ups go on to `kafka_rules.SETTLE_HORIZON` only to tell
whether the group settles at all (rule K3) or cycles (an answer repeats: rule K4), and a
group still changing there without a repeat goes on to `kafka_rules.CYCLE_HORIZON`, until it
settles or repeats. Then the members keep what they were given and the next step's changes
apply. Stalled members keep
their state and come back with it.

Judgement per call (the predicates of ``properties``): I1 exclusive ownership, the validity
half of I2; COOPERATIVE: I5 over the uncontested claims members still hold when they join,
and I6 (claim hygiene) over contested ones; I4a for the sticky family when the request's
claims are one balanced, complete, valid assignment in a single generation without racks.
Per settled rebalance: I2 complete; I3 balanced (sticky family); I11 when a COOPERATIVE
group is incomplete after `MAX_FOLLOW_UPS` follow-ups (still changing, or settling later).
I10: every member of the first rebalance's subscription through the target's codec at the
spec's writer version, read with the reader version's header. The story stops at the first rebalance
with a violation (what follows would build on a wrong assignment), unless a rule of
`kafka_rules` explains it as Kafka's own behaviour (then it goes on, as a Kafka group
would); an exception from the target is ``ERROR``, and a call that does not answer in time
(our alarm, or the target's own time limit: any ``TimeoutError``) is ``TIMEOUT``.

Metrics: moves (previously owned partitions, resolved by generation, that end up
elsewhere, summed over the story), imbalance (max − min partitions per member; per topic:
the largest such spread among one topic's subscribers; and whether Kafka's ``isBalanced``
holds), unowned (the most partitions that were not continuously owned during one
rebalance of those owned when it started: all of them for EAGER, which revokes everything
first; for COOPERATIVE those that change owner), assign time.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..properties import assignment as A
from ..properties.generations import claim_breaches, resolved, uncontested
from ..properties.kafka_rules import (
    CYCLE_HORIZON,
    SETTLE_HORIZON,
    inherited_i4a,
    inherited_i6,
    inherited_i11,
)
from ..properties.rebalance import assignment_of, claims_of, i4a_applies, sent_claims
from .call_timeout import CALL_TIMEOUT, call_with_timeout
from .codec_check import check_codec
from .targets import AuditTarget

TopicPartition = tuple[str, int]
INVARIANTS = ("I1", "I2", "I3", "I4", "I5", "I6", "I10", "I11", "ERROR", "TIMEOUT")
MAX_FOLLOW_UPS = 3

CHAIN_FORMAT = "groupcheck-audit-chain/1"


@dataclass
class ChainResult:
    """What one target did on one scenario."""

    verdicts: dict[str, int | None] = field(
        default_factory=lambda: dict.fromkeys(INVARIANTS))
    violations: list[str] = field(default_factory=list)
    calls: int = 0
    moves: int = 0
    imbalance: int = 0
    topic_imbalance: int = 0
    kafka_balanced: bool = True
    unowned: int = 0
    assign_ms: float = 0.0
    first_assignment: dict[str, frozenset[TopicPartition]] | None = None
    rounds: list[dict[str, Any]] = field(default_factory=list)
    #: invariant → the `kafka_rules` rule that every violation of it matched so far
    inherited: dict[str, str] = field(default_factory=dict)
    #: invariant → the index (in `rounds`) of the call where it was first violated
    violated_at: dict[str, int] = field(default_factory=dict)

    @property
    def violated(self) -> bool:
        """Some invariant was violated (inherited from Kafka or not)."""
        return any(v == 1 for v in self.verdicts.values())

    @property
    def own_violation(self) -> bool:
        """Some invariant was violated in a way no `kafka_rules` rule explains."""
        return any(v == 1 and inv not in self.inherited for inv, v in self.verdicts.items())

    def check(self, invariant: str, found: list[str], rule: str | None = None) -> None:
        """Record one check; ``rule``: every message in ``found`` is that Kafka rule's. An
        invariant stays labelled while every violation of it has a rule (``K3+K4`` when
        they are different rules)."""
        if found:
            first = self.verdicts[invariant] != 1
            if rule is not None and (first or invariant in self.inherited):
                rules = set(self.inherited.get(invariant, rule).split("+")) | {rule}
                self.inherited[invariant] = "+".join(sorted(rules))
            else:
                self.inherited.pop(invariant, None)
            self.verdicts[invariant] = 1
            self.violated_at.setdefault(invariant, max(0, len(self.rounds) - 1))
            self.violations += found
        elif self.verdicts[invariant] is None:
            self.verdicts[invariant] = 0

    def inherited_column(self) -> str:
        """``"I6:K1"``-style pairs for the violated invariants a Kafka rule explains."""
        return ",".join(f"{inv}:{rule}" for inv, rule in sorted(self.inherited.items()))

    def fingerprint(self) -> str:
        """A digest of the first rebalance's answer, for disagreement between targets."""
        if self.first_assignment is None:
            return ""
        text = json.dumps(sorted((m, sorted(ps)) for m, ps in self.first_assignment.items()))
        return hashlib.sha1(text.encode()).hexdigest()[:16]


@dataclass
class _Member:
    topics: list[str]
    owned: list[TopicPartition]
    generation: int | None
    rack: str | None = None
    instance: str | None = None


class _Group:
    """The state a story evolves: members (in join order), stalled ones, metadata."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.partitions: dict[str, int] = dict(spec["partitions"])
        self.racks: dict[str, list[list[str]]] | None = copy.deepcopy(spec.get("racks"))
        self.members: dict[str, _Member] = {}
        self.stalled: dict[str, _Member] = {}
        for m in spec["members"]:
            self._join(m)
        gens = [m.generation or 0 for m in self.members.values()]
        self.generation = max(gens, default=0)

    def _join(self, m: Mapping[str, Any]) -> None:
        gen = m.get("generation")
        owned = [(str(t), int(p)) for t, p in m.get("owned") or []] if gen is not None else []
        self.members[str(m["id"])] = _Member(list(m["topics"]), owned, gen, m.get("rack"),
                                             m.get("groupInstanceId"))

    def apply(self, op: Mapping[str, Any]) -> None:
        kind = op["op"]
        if kind == "join":
            self._join(op["member"])
        elif kind == "leave":
            self.members.pop(op["member"], None)
        elif kind == "stall":
            if op["member"] in self.members:
                self.stalled[op["member"]] = self.members.pop(op["member"])
        elif kind == "return":
            if op["member"] in self.stalled:
                self.members[op["member"]] = self.stalled.pop(op["member"])
        elif kind == "subscribe":
            if op["member"] in self.members:
                self.members[op["member"]].topics = list(op["topics"])
        elif kind == "grow":
            self.partitions[op["topic"]] = int(op["count"])
            if self.racks is not None and op["topic"] in self.racks:
                racks = self.racks[op["topic"]]
                racks += [racks[-1] if racks else []] * (op["count"] - len(racks))
        elif kind == "delete":
            self.partitions.pop(op["topic"], None)
            if self.racks is not None:
                self.racks.pop(op["topic"], None)

    def request(self, assignor: str) -> dict[str, Any]:
        members: dict[str, Any] = {}
        for mid, m in self.members.items():
            entry: dict[str, Any] = {"topics": list(m.topics),
                                     "owned": [[t, p] for t, p in m.owned],
                                     "generation": m.generation}
            if m.rack is not None:
                entry["rack"] = m.rack
            if m.instance is not None:
                entry["groupInstanceId"] = m.instance
            members[mid] = entry
        request: dict[str, Any] = {"op": "assign", "assignor": assignor, "mode": "client",
                                   "partitions": dict(self.partitions), "members": members,
                                   "newGeneration": self.generation + 1}
        if self.racks is not None:
            request["racks"] = copy.deepcopy(self.racks)
        return request


def _wanted(subs: Mapping[str, list[str]], partitions: Mapping[str, int]
            ) -> set[TopicPartition]:
    topics = {t for ts in subs.values() for t in ts if t in partitions}
    return {(t, p) for t in topics for p in range(partitions[t])}


def balance_metrics(assignment: Mapping[str, list[TopicPartition]],
                    subs: Mapping[str, list[str]],
                    partitions: Mapping[str, int]) -> tuple[int, int, bool]:
    """(max − min partitions per member, the largest per-topic spread among a topic's
    subscribers, Kafka's ``isBalanced``) in linear time."""
    sizes = {m: len(assignment.get(m, [])) for m in subs}
    for m, ps in assignment.items():
        sizes[m] = len(ps)
    spread = max(sizes.values()) - min(sizes.values()) if sizes else 0
    per_topic: dict[str, dict[str, int]] = {}
    top_owner: dict[str, int] = {}
    for m, ps in assignment.items():
        for t, _ in ps:
            counts = per_topic.setdefault(t, {})
            counts[m] = counts.get(m, 0) + 1
            top_owner[t] = max(top_owner.get(t, 0), sizes[m])
    topic_spread = 0
    for t in {t for ts in subs.values() for t in ts if partitions.get(t)}:
        counts = per_topic.get(t, {})
        values = [counts.get(m, 0) for m, ts in subs.items() if t in ts]
        topic_spread = max(topic_spread, max(values) - min(values))
    ok = spread <= 1 or not any(
        top_owner.get(t, 0) >= sizes[m] + 2 for m, ts in subs.items() for t in ts)
    return spread, topic_spread, ok


def _owner(assignment: Mapping[str, list[TopicPartition]]) -> dict[TopicPartition, str]:
    return {tp: m for m, ps in assignment.items() for tp in ps}


def _as_sets(assignment: Mapping[str, list[TopicPartition]]
             ) -> dict[str, frozenset[TopicPartition]]:
    return {m: frozenset(ps) for m, ps in assignment.items() if ps}


def _run_rebalance(target: AuditTarget, group: _Group, result: ChainResult,
                   spec_codec: Mapping[str, Any] | None, timeout: float) -> bool:
    """One rebalance and its follow-ups; False when the story must stop."""
    request = group.request(target.assignor)
    subs = {m: list(v["topics"]) for m, v in request["members"].items()}
    partitions: dict[str, int] = dict(request["partitions"])
    first_round = not result.rounds
    if first_round and spec_codec is not None and target.codec is not None:
        result.check("I10", check_codec(target, request, spec_codec))
    wanted = _wanted(subs, partitions)
    # partitions owned when the rebalance starts (as the members see it)
    before = {tp: m for m, (ps, _) in claims_of(request).items() for tp in ps if tp in wanted}
    kept = set(before)
    current = request
    settled: dict[str, list[TopicPartition]] = {}
    changed = True
    protocol = "EAGER"
    follow_ups = 0
    response: dict[str, Any] = {}
    answers: set[frozenset[tuple[str, frozenset[TopicPartition]]]] = set()
    cycled = False  # an answer repeated an earlier one of this rebalance (rule K4)
    # follow-ups past MAX_FOLLOW_UPS are run only to tell whether the group settles within
    # a horizon (rule K3); needing them is an I11 violation either way
    for call in range(CYCLE_HORIZON + 1):
        started = time.perf_counter()
        try:
            response = call_with_timeout(target.assign, current, timeout)
            assignment = assignment_of(response)
        except Exception as exc:  # noqa: BLE001 - any failure of the target is a finding
            result.assign_ms += (time.perf_counter() - started) * 1000.0
            result.calls += 1
            result.rounds.append({"request": current, "follow_up": call,
                                  "response": {"error": f"{type(exc).__name__}: {exc}"}})
            if isinstance(exc, TimeoutError):  # our alarm, or the target's own time limit
                result.check("TIMEOUT", [f"TIMEOUT: {exc}"])
            else:
                result.check("ERROR", [f"ERROR: assign raised {type(exc).__name__}: {exc}"])
            return False
        result.assign_ms += (time.perf_counter() - started) * 1000.0
        result.calls += 1
        result.rounds.append({"request": current, "response": response, "follow_up": call})
        if result.first_assignment is None:
            result.first_assignment = _as_sets(assignment)
        protocol = str(response.get("protocol") or (
            "COOPERATIVE" if target.assignor == "cooperative-sticky" else "EAGER"))
        cooperative = protocol == "COOPERATIVE"
        result.check("I1", A.exclusive_ownership(assignment))
        result.check("I2", A.valid_targets(assignment, subs, partitions))
        if cooperative:
            sent = sent_claims(current)
            result.check("I5", A.revoke_before_reassign(uncontested(sent), assignment))
            breaches = claim_breaches(sent, assignment, protocol)
            result.check("I6", [b.describe() for b in breaches],
                         inherited_i6(target.assignor, subs, breaches))
        if call == 0 and target.sticky and i4a_applies(current, subs, partitions):
            prev = {m: [(t, p) for t, p in v["owned"]] for m, v in current["members"].items()}
            result.check("I4", A.no_moves_when_balanced(prev, assignment),
                         inherited_i4a(target.assignor, subs, prev, assignment))
        if result.own_violation:
            return False
        owner = _owner(assignment)
        # EAGER members revoke everything before they join; COOPERATIVE ones keep what
        # stays theirs
        kept = {tp for tp in kept if owner.get(tp) == before[tp]} if cooperative else set()
        changed = call == 0 or _as_sets(assignment) != _as_sets(settled)
        answer_key = frozenset(_as_sets(assignment).items())
        cycled = cycled or answer_key in answers
        answers.add(answer_key)
        settled = assignment
        missing = any(tp not in owner for tp in wanted)
        if not cooperative or not changed or not missing:
            break
        if call >= SETTLE_HORIZON and cycled:
            break  # past the horizon only to learn whether it settles or cycles
        if call < CYCLE_HORIZON:
            follow_ups += 1
            generation = response.get("generation")
            gen = generation if isinstance(generation, int) else group.generation + 1
            current = json.loads(json.dumps(current))
            for m, v in current["members"].items():
                v["owned"] = [[t, p] for t, p in dict.fromkeys(assignment.get(m, []))]
                v["generation"] = gen
            current["newGeneration"] = gen + 1
    complete = A.complete(settled, subs, partitions)
    if protocol == "COOPERATIVE":
        if complete and follow_ups and changed:
            # still changing after every follow-up: not settled (I11), not a gap (I2)
            cycle = "; the answers cycle" if cycled else ""
            result.check("I11", [f"I11: no settled assignment after {follow_ups} follow-up "
                                 f"rebalance(s){cycle}; {v.split(': ', 1)[1]}"
                                 for v in complete],
                         inherited_i11(target.assignor, follow_ups, settled=False,
                                       rack_aware="racks" in request, cycled=cycled))
            complete = []
        elif follow_ups > MAX_FOLLOW_UPS and not complete:
            result.check("I11", [f"I11: settled only after {follow_ups} follow-up "
                                 f"rebalance(s), more than {MAX_FOLLOW_UPS}"],
                         inherited_i11(target.assignor, follow_ups, settled=True,
                                       rack_aware="racks" in request))
            complete = []
        else:
            result.check("I11", [])
            if complete and follow_ups:
                complete = [f"{v} (after {follow_ups} follow-up rebalance(s))"
                            for v in complete]
    result.check("I2", complete)
    if target.sticky and result.verdicts["I11"] != 1:  # I3 judges settled groups only
        result.check("I3", A.balanced(settled, subs, partitions))
    if result.own_violation:
        return False
    result.moves += A.moves(resolved(claims_of(request)), settled)
    spread, topic_spread, ok = balance_metrics(settled, subs, partitions)
    result.imbalance = max(result.imbalance, spread)
    result.topic_imbalance = max(result.topic_imbalance, topic_spread)
    result.kafka_balanced = result.kafka_balanced and ok
    result.unowned = max(result.unowned, len(before) - len(kept))
    generation = response.get("generation")
    group.generation = generation if isinstance(generation, int) else group.generation + 1
    for m, member in group.members.items():
        member.owned = list(dict.fromkeys(settled.get(m, [])))
        member.generation = group.generation
    return True


def run_chain(target: AuditTarget, spec: Mapping[str, Any],
              timeout: float = CALL_TIMEOUT) -> ChainResult:
    """Play ``spec`` on ``target`` (see the module docstring)."""
    result = ChainResult()
    if spec.get("kind") == "requests":
        return _run_requests(target, spec, result, timeout)
    group = _Group(spec)
    if not _run_rebalance(target, group, result, spec.get("codec"), timeout):
        return result
    for ops in spec.get("steps", []):
        for op in ops:
            group.apply(op)
        if not _run_rebalance(target, group, result, None, timeout):
            break
    return result


def _run_requests(target: AuditTarget, spec: Mapping[str, Any],
                  result: ChainResult, timeout: float) -> ChainResult:
    """A fixed chain (a corpus file without a spec): each request judged on its own."""
    for request in spec["requests"]:
        group = _Group({"partitions": request.get("partitions", {}),
                        "racks": request.get("racks"),
                        "members": [{"id": m, **v} for m, v in request["members"].items()]})
        if request.get("newGeneration") is not None:
            group.generation = int(request["newGeneration"]) - 1
        if not _run_rebalance(target, group, result, spec.get("codec"), timeout):
            break
    return result


def replay_record(target: AuditTarget, spec: Mapping[str, Any], result: ChainResult,
                  scenario: int, seed: int | None) -> dict[str, Any]:
    """The replay file of a counterexample: its spec (run it again with
    ``groupcheck audit --corpus``) and the request chain it produced (each request runs on
    its own with ``groupcheck assign``)."""
    invariant = next((inv for inv in INVARIANTS if result.verdicts[inv] == 1), "none")
    return {"format": CHAIN_FORMAT, "target": target.name, "assignor": target.assignor,
            "seed": seed, "scenario": scenario, "invariant": invariant,
            "violations": result.violations[:20], "inherited_from_kafka": result.inherited,
            "spec": spec,
            "requests": [r["request"] for r in result.rounds],
            "responses": [r["response"] for r in result.rounds],
            "follow_ups": [r["follow_up"] for r in result.rounds],
            "violated_at": result.violated_at}
