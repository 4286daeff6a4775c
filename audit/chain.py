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

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..model.saved_files import CHAIN_FORMAT
from ..model.story_shapes import CodecSpec, StorySpec
from ..properties import assignment as A
from ..properties.generations import claim_breaches, resolved, uncontested
from ..properties.harness import HarnessError
from ..properties.invariants import judged_by
from ..properties.jsonl_shapes import AssignAnswer, AssignRequest, pair_of
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
from .metrics import balance_metrics
from .story_changes import read_change
from .story_group import StoryGroup, TopicPartition
from .summary_shapes import ChainFile, ChainRecord, ChainRound
from .targets import AuditTarget

__all__ = ["CHAIN_FORMAT", "INVARIANTS", "MAX_FOLLOW_UPS", "ChainFile", "ChainRecord",
           "ChainResult", "replay_record", "run_chain"]

#: the audit's columns (I4a's is I4)
INVARIANTS = judged_by("audit", ids=True)
MAX_FOLLOW_UPS = 3


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
    rounds: list[ChainRound] = field(default_factory=list)
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


def _wanted(subs: Mapping[str, list[str]], partitions: Mapping[str, int]
            ) -> set[TopicPartition]:
    topics = {t for ts in subs.values() for t in ts if t in partitions}
    return {(t, p) for t in topics for p in range(partitions[t])}


def _owner(assignment: Mapping[str, list[TopicPartition]]) -> dict[TopicPartition, str]:
    return {tp: m for m, ps in assignment.items() for tp in ps}


def _as_sets(assignment: Mapping[str, list[TopicPartition]]
             ) -> dict[str, frozenset[TopicPartition]]:
    return {m: frozenset(ps) for m, ps in assignment.items() if ps}


def _no_answer() -> AssignAnswer:
    return {"assignment": {}}


@dataclass
class _Rebalance:
    """One rebalance under way: what its first request asks for and the answers so far."""

    request: AssignRequest
    subs: dict[str, list[str]]
    partitions: dict[str, int]
    wanted: set[TopicPartition]
    #: partitions owned when the rebalance starts (as the members see it)
    before: dict[TopicPartition, str]
    #: of those, the ones owned throughout so far
    kept: set[TopicPartition]
    settled: dict[str, list[TopicPartition]] = field(default_factory=dict)
    changed: bool = True
    protocol: str = "EAGER"
    follow_ups: int = 0
    response: AssignAnswer = field(default_factory=_no_answer)
    answers: set[frozenset[tuple[str, frozenset[TopicPartition]]]] = field(
        default_factory=set)
    cycled: bool = False  # an answer repeated an earlier one of this rebalance (rule K4)


def _start(target: AuditTarget, group: StoryGroup, result: ChainResult,
           spec_codec: CodecSpec | None) -> _Rebalance:
    """The rebalance's first request; I10 on the story's first one."""
    request = group.request(target.assignor)
    subs = {m: list(v["topics"]) for m, v in request["members"].items()}
    partitions: dict[str, int] = dict(request["partitions"])
    if not result.rounds and spec_codec is not None and target.codec is not None:
        result.check("I10", check_codec(target, request, spec_codec))
    wanted = _wanted(subs, partitions)
    before = {tp: m for m, (ps, _) in claims_of(request).items() for tp in ps if tp in wanted}
    return _Rebalance(request, subs, partitions, wanted, before, set(before))


def _call(target: AuditTarget, result: ChainResult, current: AssignRequest, call: int,
          timeout: float) -> tuple[AssignAnswer, dict[str, list[TopicPartition]]] | None:
    """One ``assign`` call, timed and recorded; None when it raised or timed out (judged
    ``ERROR`` or ``TIMEOUT``)."""
    started = time.perf_counter()
    try:
        response = call_with_timeout(target.assign, current, timeout)
        assignment = assignment_of(response)
    except HarnessError:  # groupcheck's own failure: never a finding
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the target is a finding
        result.assign_ms += (time.perf_counter() - started) * 1000.0
        result.calls += 1
        result.rounds.append({"request": current, "follow_up": call,
                              "response": {"error": f"{type(exc).__name__}: {exc}"}})
        if isinstance(exc, TimeoutError):  # our alarm, or the target's own time limit
            result.check("TIMEOUT", [f"TIMEOUT: {exc}"])
        else:
            result.check("ERROR", [f"ERROR: assign raised {type(exc).__name__}: {exc}"])
        return None
    result.assign_ms += (time.perf_counter() - started) * 1000.0
    result.calls += 1
    result.rounds.append({"request": current, "response": response, "follow_up": call})
    if result.first_assignment is None:
        result.first_assignment = _as_sets(assignment)
    return response, assignment


def _judge_call(target: AuditTarget, result: ChainResult, rb: _Rebalance,
                current: AssignRequest, assignment: dict[str, list[TopicPartition]],
                call: int) -> bool:
    """I1, I2 (validity), and for COOPERATIVE I5 and I6, and I4a on a first call; returns
    whether the answer is COOPERATIVE."""
    rb.protocol = str(rb.response.get("protocol") or (
        "COOPERATIVE" if target.assignor == "cooperative-sticky" else "EAGER"))
    cooperative = rb.protocol == "COOPERATIVE"
    subs, partitions = rb.subs, rb.partitions
    result.check("I1", A.exclusive_ownership(assignment))
    result.check("I2", A.valid_targets(assignment, subs, partitions))
    if cooperative:
        sent = sent_claims(current)
        result.check("I5", A.revoke_before_reassign(uncontested(sent), assignment))
        breaches = claim_breaches(sent, assignment, rb.protocol)
        result.check("I6", [b.describe() for b in breaches],
                     inherited_i6(target.assignor, subs, breaches))
    if call == 0 and target.sticky and i4a_applies(current, subs, partitions):
        prev = {m: [pair_of(c) for c in v["owned"]] for m, v in current["members"].items()}
        result.check("I4", A.no_moves_when_balanced(prev, assignment),
                     inherited_i4a(target.assignor, subs, prev, assignment))
    return cooperative


def _take_answer(rb: _Rebalance, assignment: dict[str, list[TopicPartition]], call: int,
                 cooperative: bool) -> bool:
    """Make ``assignment`` the rebalance's latest; True when a COOPERATIVE group changed
    and still leaves a wanted partition unassigned (a follow-up rebalance is due)."""
    owner = _owner(assignment)
    # EAGER members revoke everything before they join; COOPERATIVE ones keep what
    # stays theirs
    rb.kept = {tp for tp in rb.kept if owner.get(tp) == rb.before[tp]} if cooperative else set()
    rb.changed = call == 0 or _as_sets(assignment) != _as_sets(rb.settled)
    answer_key = frozenset(_as_sets(assignment).items())
    rb.cycled = rb.cycled or answer_key in rb.answers
    rb.answers.add(answer_key)
    rb.settled = assignment
    missing = any(tp not in owner for tp in rb.wanted)
    return cooperative and rb.changed and missing


def _follow_up(current: AssignRequest, rb: _Rebalance, group: StoryGroup) -> AssignRequest:
    """The next request: each member now owns what it was given, at the new generation."""
    generation = rb.response.get("generation")
    gen = generation if isinstance(generation, int) else group.generation + 1
    nxt: AssignRequest = json.loads(json.dumps(current))
    for m, v in nxt["members"].items():
        v["owned"] = [[t, p] for t, p in dict.fromkeys(rb.settled.get(m, []))]
        v["generation"] = gen
    nxt["newGeneration"] = gen + 1
    return nxt


def _judge_settled(target: AuditTarget, result: ChainResult, rb: _Rebalance) -> None:
    """I11 for COOPERATIVE groups, I2 (complete) and, for the sticky family, I3."""
    settled, follow_ups = rb.settled, rb.follow_ups
    complete = A.complete(settled, rb.subs, rb.partitions)
    rack_aware = "racks" in rb.request
    if rb.protocol == "COOPERATIVE":
        if complete and follow_ups and rb.changed:
            # still changing after every follow-up: not settled (I11), not a gap (I2)
            cycle = "; the answers cycle" if rb.cycled else ""
            result.check("I11", [f"I11: no settled assignment after {follow_ups} follow-up "
                                 f"rebalance(s){cycle}; {v.split(': ', 1)[1]}"
                                 for v in complete],
                         inherited_i11(target.assignor, follow_ups, settled=False,
                                       rack_aware=rack_aware, cycled=rb.cycled))
            complete = []
        elif follow_ups > MAX_FOLLOW_UPS and not complete:
            result.check("I11", [f"I11: settled only after {follow_ups} follow-up "
                                 f"rebalance(s), more than {MAX_FOLLOW_UPS}"],
                         inherited_i11(target.assignor, follow_ups, settled=True,
                                       rack_aware=rack_aware))
            complete = []
        else:
            result.check("I11", [])
            if complete and follow_ups:
                complete = [f"{v} (after {follow_ups} follow-up rebalance(s))"
                            for v in complete]
    result.check("I2", complete)
    if target.sticky and result.verdicts["I11"] != 1:  # I3 judges settled groups only
        result.check("I3", A.balanced(settled, rb.subs, rb.partitions))


def _settle(group: StoryGroup, result: ChainResult, rb: _Rebalance) -> None:
    """The rebalance's metrics; every member keeps what it settled on, at the new
    generation."""
    settled = rb.settled
    result.moves += A.moves(resolved(claims_of(rb.request)), settled)
    spread, topic_spread, ok = balance_metrics(settled, rb.subs, rb.partitions)
    result.imbalance = max(result.imbalance, spread)
    result.topic_imbalance = max(result.topic_imbalance, topic_spread)
    result.kafka_balanced = result.kafka_balanced and ok
    result.unowned = max(result.unowned, len(rb.before) - len(rb.kept))
    generation = rb.response.get("generation")
    group.generation = generation if isinstance(generation, int) else group.generation + 1
    for m, member in group.members.items():
        member.owned = list(dict.fromkeys(settled.get(m, [])))
        member.generation = group.generation


def _run_rebalance(target: AuditTarget, group: StoryGroup, result: ChainResult,
                   spec_codec: CodecSpec | None, timeout: float) -> bool:
    """One rebalance and its follow-ups; False when the story must stop. A group with no
    member has no leader and runs no rebalance: nothing is asked then."""
    rb = _start(target, group, result, spec_codec)
    current = rb.request
    if not current["members"]:
        return True
    # follow-ups past MAX_FOLLOW_UPS are run only to tell whether the group settles within
    # a horizon (rule K3); needing them is an I11 violation either way
    for call in range(CYCLE_HORIZON + 1):
        answered = _call(target, result, current, call, timeout)
        if answered is None:
            return False
        rb.response, assignment = answered
        cooperative = _judge_call(target, result, rb, current, assignment, call)
        if result.own_violation:
            return False
        if not _take_answer(rb, assignment, call, cooperative):
            break
        if call >= SETTLE_HORIZON and rb.cycled:
            break  # past the horizon only to learn whether it settles or cycles
        if call < CYCLE_HORIZON:
            rb.follow_ups += 1
            current = _follow_up(current, rb, group)
    _judge_settled(target, result, rb)
    if result.own_violation:
        return False
    _settle(group, result, rb)
    return True


def run_chain(target: AuditTarget, spec: StorySpec,
              timeout: float = CALL_TIMEOUT) -> ChainResult:
    """Play ``spec`` on ``target`` (see the module docstring)."""
    result = ChainResult()
    if spec.get("kind") == "requests":
        return _run_requests(target, spec, result, timeout)
    group = StoryGroup(spec)
    if not _run_rebalance(target, group, result, spec.get("codec"), timeout):
        return result
    for changes in spec.get("steps", []):
        for change in changes:
            read_change(change).apply(group)
        if not _run_rebalance(target, group, result, None, timeout):
            break
    return result


def _run_requests(target: AuditTarget, spec: StorySpec,
                  result: ChainResult, timeout: float) -> ChainResult:
    """A fixed chain (a corpus file without a spec): each request judged on its own."""
    for request in spec["requests"]:
        group = StoryGroup.of_request(request)
        if not _run_rebalance(target, group, result, spec.get("codec"), timeout):
            break
    return result


def replay_record(target: AuditTarget, spec: StorySpec, result: ChainResult,
                  scenario: int, seed: int | None) -> ChainFile:
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
