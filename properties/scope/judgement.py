"""One configuration of the scope prover: its request, its rounds, and their judgement.

**Requests: client mode.** Each configuration becomes a ``mode: client`` request: every
member's subscription is built as a real consumer configured with this one assignor would
build it from (topics, owned, generation) — ``sticky`` puts its previous partitions and
generation in v1 user data, ``cooperative-sticky`` sends owned partitions and the
generation, eager members send no owned partitions. Stale and conflicting claims are
states real consumers reach, so every request is an input a correct client sends and every
violation is an assignor bug, not garbage in. (Raw mode would hand ``sticky`` owned
partitions it ignores — it reads claims from user data — and feed inputs no client sends.)

**Judgement.** Every round: I1 (``exclusive_ownership``) and the validity half of I2
(``valid_targets``); COOPERATIVE also I5 over the uncontested claims a member still holds
when it joins (its owned partitions of topics it still subscribes to) and I6
(``generations.claim_hygiene``) over the contested ones. A COOPERATIVE answer that leaves
partitions unassigned (they are being revoked) gets follow-up rebalances, as a real group
runs them (each member now owns what it was given, at the new generation) until the
answer is complete or stops changing, at most 2; an answer still changing and incomplete
after that is I11 (convergence), one that stopped changing while incomplete is I2. The
settled assignment must be complete (I2). For the sticky family (as in the reference
model: range and roundrobin promise no balance across topics) it must also be balanced
(I3), and I4a applies: when every member holds the same generation and the claims form a
complete, balanced, disjoint assignment (no racks), the first round moves nothing. An
exception from ``assign`` is reported as ``ERROR``, a ``TimeoutError`` (a target that did not
answer within its time limit) as ``TIMEOUT``.

**Gap (I4b).** Moves are counted from the *resolved* previous ownership (each partition to
its claimant with the strictly highest generation; a tie drops every claim) to the settled
assignment, for configurations whose settled assignment is complete (and, for the sticky
family, balanced). When the answer is itself complete and balanced and its moves meet the
trivial lower bound (``optimal.forced_moves``), that is the optimum; else a bounded
exhaustive search finds it where the complete assignments are few
(``optimal.search_min_moves``, as in every scope the prover is run at), else Z3
(``optimal.MovesOracle``: the answer's moves bound it from above, so one unsatisfiable
``moves <= achieved - 1`` settles it). ``exact=True`` always asks Z3. The gap of range and
roundrobin may be negative: they need not balance.

**Quick readings.** Each answer is read once (``reading.Reading``; a keyed session's
answers once per leader run): valid and exclusive, how many partitions it holds, the sizes.
A clean reading is exactly the empty answer of the predicates of ``assignment`` (I1, I2,
completeness, I3's first test); they run, and word the violations, only where the reading
finds a fault.

"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import assignment as A
from ..generations import claim_breaches, resolved, uncontested
from ..jsonl_shapes import Answered, AssignAnswer, AssignRequest, RequestMember, pair_of
from ..kafka_rules import inherited_i4a, inherited_i6
from ..optimal import Optimiser
from ..rebalance import assignment_of, claims_of, sent_claims
from .reading import ConfigFrame, Reading, frame_of, missing, read
from .space import AssignFn, Config, MemberDesc, TopicPartition

__all__ = ["STICKY_FAMILY", "Called", "Judgement", "Judging", "KeyedAnswer", "KeyedAssign",
           "build_request", "called", "failure_text", "judge", "judging", "member_entry",
           "member_name", "topic_name"]

STICKY_FAMILY = frozenset({"sticky", "cooperative-sticky"})
_COOPERATIVE_ASSIGNORS = frozenset({"cooperative-sticky"})
_MAX_FOLLOW_UPS = 2




def failure_text(exc: BaseException) -> str:
    """An exception from ``assign`` as a finding: ``TIMEOUT`` for a ``TimeoutError`` (the
    target hung past its time limit: a liveness bug), else ``ERROR``."""
    if isinstance(exc, TimeoutError):
        return f"TIMEOUT: assign did not answer ({type(exc).__name__}: {exc})"
    return f"ERROR: assign raised {type(exc).__name__}: {exc}"


def topic_name(t: int) -> str:
    return f"t{t}"


def member_name(i: int) -> str:
    return f"m{i}"


_ENTRIES: dict[MemberDesc, RequestMember] = {}


def member_entry(desc: MemberDesc) -> RequestMember:
    """One member's request entry, kept per descriptor: shared by every request built with
    ``shared=True`` (read it, never change it)."""
    entry = _ENTRIES.get(desc)
    if entry is None:
        if len(_ENTRIES) > 100_000:
            _ENTRIES.clear()
        topics, gen, rack, owned = desc
        entry = _ENTRIES[desc] = {"topics": [topic_name(t) for t in topics],
                                  "owned": [[topic_name(t), p] for t, p in owned],
                                  "generation": gen or None}
        if rack >= 0:
            entry["rack"] = f"r{rack}"
    return entry


def _copy(entry: RequestMember) -> RequestMember:
    out: RequestMember = {**entry, "topics": list(entry["topics"])}
    out["owned"] = [list(x) for x in entry["owned"]]
    return out


def build_request(assignor: str, config: Config, *, shared: bool = False) -> AssignRequest:
    """The ``assign`` request (client mode) for one configuration; ``shared``: the member
    entries are shared with other requests (for callers that only read them)."""
    entries = [member_entry(desc) for desc in config.members]
    members = {member_name(i): entry if shared else _copy(entry)
               for i, entry in enumerate(entries)}
    request: AssignRequest = {
        "op": "assign", "assignor": assignor, "mode": "client",
        "partitions": {topic_name(t): c for t, (c, _) in enumerate(config.metadata) if c},
        "members": members,
    }
    if any(racks for _, racks in config.metadata):
        request["racks"] = {topic_name(t): [[f"r{r}"] for r in racks]
                            for t, (c, racks) in enumerate(config.metadata) if c}
    return request


def _as_sets(assignment: Mapping[str, list[TopicPartition]]) -> dict[str, set[TopicPartition]]:
    return {m: set(ps) for m, ps in assignment.items() if ps}


def _follow_up(config: Config, generation: Any,
               assignment: Mapping[str, list[TopicPartition]]) -> Config:
    """The next rebalance of a cooperative group: every member owns what it was given (once
    each, in the answer's order) at the answer's generation (when a positive integer, else
    the highest plus one). Only a clean answer is followed up: its partitions are of the
    configuration's topics."""
    if type(generation) is not int or generation < 1:
        generation = max((m[1] for m in config.members), default=0) + 1
    index = {topic_name(t): t for t in range(len(config.metadata))}
    members = tuple(
        (topics, generation, rack,
         tuple(dict.fromkeys((index[t], p) for t, p in assignment.get(member_name(i), ()))))
        for i, (topics, _, rack, _) in enumerate(config.members))
    return Config(config.metadata, members, config.weight)


class KeyedAnswer(Protocol):
    """What a keyed session answers (``impl.assign_session.SessionAnswer``)."""

    assignment: dict[str, list[TopicPartition]]
    protocol: str
    generation: int

    def response(self) -> AssignAnswer: ...


class KeyedAssign(Protocol):
    """An assign function that also answers by keys (``AssignSession.assign_keyed``):
    ``keys[i]`` stands for the i-th member's entry, ``metadata_key`` for the partitions."""

    def __call__(self, request: AssignRequest) -> AssignAnswer: ...

    def assign_keyed(self, request: AssignRequest, keys: Sequence[Hashable],
                     metadata_key: Hashable) -> KeyedAnswer: ...


@dataclass
class Judgement:
    """What one configuration showed."""

    violations: list[str]
    #: each assign call: (request, response), the response a `KeyedAnswer` until asked for
    calls: list[tuple[AssignRequest, Answered | KeyedAnswer]]
    first_round_of: dict[str, int] = field(default_factory=dict)
    moves: int | None = None  # measured only against an optimum (the I4b gap)
    optimum: int | None = None
    optimum_by: str = ""
    assign_seconds: float = 0.0
    #: invariant → the `kafka_rules` rule that explains every violation of it
    inherited: dict[str, str] = field(default_factory=dict)
    #: I4a's premise held, so I4a was judged (it reads every claim)
    i4a_judged: bool = False

    @property
    def rounds(self) -> list[tuple[AssignRequest, Answered]]:
        """Each assign call as (request, response dict)."""
        return [(q, r if isinstance(r, dict) else r.response()) for q, r in self.calls]

    @property
    def own_violation(self) -> bool:
        """Some violation that no `kafka_rules` rule explains."""
        return any(inv not in self.inherited for inv in self.first_round_of)

    def classify(self, invariant: str, found: list[str], rule: str | None) -> None:
        """Keep ``rule`` for ``invariant`` only while every violation of it matches it."""
        if not found:
            return
        first = invariant not in self.first_round_of
        if rule is not None and (first or self.inherited.get(invariant) == rule):
            self.inherited[invariant] = rule
        else:
            self.inherited.pop(invariant, None)


def _i4a_premise(request: Mapping[str, Any], subs: Mapping[str, list[str]],
                 sets: Mapping[str, set[str]], partitions: Mapping[str, int],
                 wanted: int) -> bool:
    """``rebalance.i4a_applies``, with the quick reading first."""
    members = request["members"]
    gens = {v["generation"] for v in members.values()}
    if (len(gens) != 1 or None in gens or "racks" in request
            or sum(len(v["owned"]) for v in members.values()) != wanted):
        return False  # a complete disjoint assignment holds exactly the wanted partitions
    prev = {m: [(t, p) for t, p in v["owned"]] for m, v in members.items()}
    reading = Reading(prev, sets, partitions)
    return (not reading.complete(prev, subs, partitions, wanted)
            and not reading.balanced(prev, subs, partitions))


#: one assign call as the judgement reads it: (response or keyed answer, assignment,
#: protocol, generation), or the exception the call raised
Called = tuple[AssignAnswer | KeyedAnswer, dict[str, list[TopicPartition]], str | None,
               object] | Exception
#: a judgement in progress: it yields each round's (request, configuration), is sent what
#: the call came to and the seconds it took, and returns the `Judgement`
Judging = Generator[tuple[AssignRequest, Config], tuple[Called, float], Judgement]


def _call(assign: AssignFn, request: AssignRequest, config: Config) -> Called:
    """One assign call: (response or keyed answer, assignment, protocol, generation). A
    keyed session is handed the configuration's own pieces as keys."""
    keyed = getattr(assign, "assign_keyed", None)
    if keyed is not None:
        answer = keyed(request, config.members, config.metadata)
        return answer, answer.assignment, answer.protocol, answer.generation
    return called(assign(request))


def called(response: AssignAnswer | Exception) -> Called:
    """A plain assign function's answer (or exception) as the judgement reads it."""
    if isinstance(response, Exception):
        return response
    return (response, assignment_of(response), response.get("protocol"),
            response.get("generation"))


def judge(assign: AssignFn, assignor: str, config: Config, optimiser: Optimiser | None,
          sticky: bool, i4a: bool = True) -> Judgement:
    """Run one configuration (and its cooperative follow-ups) and judge it (``i4a=False``:
    without I4a, for ``blind``)."""
    steps = judging(assignor, config, optimiser, sticky, i4a,
                    shared=hasattr(assign, "assign_keyed"))
    try:
        request, current = next(steps)
        while True:
            started = time.perf_counter()
            try:
                result: Called = _call(assign, request, current)
            except Exception as exc:  # noqa: BLE001 - any failure of the target is a finding
                result = exc
            request, current = steps.send((result, time.perf_counter() - started))
    except StopIteration as done:
        judgement: Judgement = done.value
        return judgement


def judging(assignor: str, config: Config, optimiser: Optimiser | None, sticky: bool,
            i4a: bool = True, *, shared: bool = False) -> Judging:
    """`judge` as a generator, for a caller that makes the assign calls (many
    configurations' at once: `batch`); ``shared``: the requests may share member entries
    (the caller only reads them)."""
    out = Judgement([], [])

    def note(round_no: int, found: list[str]) -> None:
        for v in found:
            out.first_round_of.setdefault(v.split(":")[0], round_no)
        out.violations += found

    current = config
    first: AssignRequest | None = None
    frame: ConfigFrame | None = None
    settled: dict[str, list[TopicPartition]] = {}
    reading: Reading | None = None
    changed = True
    for round_no in range(_MAX_FOLLOW_UPS + 1):
        request = build_request(assignor, current, shared=shared)
        result, seconds = yield request, current
        out.assign_seconds += seconds
        if isinstance(result, Exception):
            out.calls.append((request, {"error": f"{type(result).__name__}: {result}"}))
            note(round_no, [failure_text(result)])
            return out
        response, assignment, protocol_name, generation = result
        out.calls.append((request, response))
        if first is None:
            first, frame = request, frame_of(config, request)
        assert frame is not None
        subs, sets, partitions, wanted = frame.subs, frame.sets, frame.partitions, frame.wanted
        protocol = str(protocol_name or (
            "COOPERATIVE" if assignor in _COOPERATIVE_ASSIGNORS else "EAGER"))
        reading = read(response, assignment, frame)
        found = reading.exclusive_and_valid(assignment, subs, partitions)
        if protocol == "COOPERATIVE":
            sent = sent_claims(request)
            found += A.revoke_before_reassign(uncontested(sent), assignment)
            breaches = claim_breaches(sent, assignment, protocol)
            i6 = [b.describe() for b in breaches]
            out.classify("I6", i6, inherited_i6(assignor, subs, breaches))
            found += i6
        if (round_no == 0 and sticky and i4a
                and _i4a_premise(request, subs, sets, partitions, wanted)):
            out.i4a_judged = True
            prev = {m: [pair_of(c) for c in v["owned"]] for m, v in request["members"].items()}
            moved = A.no_moves_when_balanced(prev, assignment)
            out.classify("I4a", moved, inherited_i4a(assignor, subs, prev, assignment))
            found += moved
        note(round_no, found)
        changed = round_no == 0 or _as_sets(assignment) != _as_sets(settled)
        settled = assignment
        # a violation that is Kafka's own (kafka_rules) does not stop the group: it goes on
        # as a Kafka group would, so what follows is still judged
        if (out.own_violation or protocol != "COOPERATIVE" or not changed
                or not missing(assignment, subs, partitions, reading, wanted)):
            break
        if round_no < _MAX_FOLLOW_UPS:
            current = _follow_up(current, generation, assignment)
    if out.own_violation or reading is None or frame is None or first is None:
        return out
    _judge_settled(out, first, frame, settled, reading, changed, optimiser, sticky, note)
    return out


def _judge_settled(out: Judgement, request: AssignRequest, frame: ConfigFrame,
                   settled: dict[str, list[TopicPartition]], reading: Reading,
                   changed: bool, optimiser: Optimiser | None, sticky: bool,
                   note: Callable[[int, list[str]], None]) -> None:
    """The settled assignment: complete (I2, or I11 while it still changes), balanced for
    the sticky family (I3), then its moves against the I4b optimum."""
    subs, partitions = frame.subs, frame.partitions
    last = len(out.calls) - 1
    settled_found = reading.complete(settled, subs, partitions, frame.wanted)
    if settled_found and last > 0:
        if changed:
            # still changing: the group has not settled (I11), not a settled gap (I2)
            settled_found = [f"I11: no settled assignment after {last} follow-up "
                             f"rebalance(s); {v.split(': ', 1)[1]}" for v in settled_found]
        else:
            settled_found = [f"{v} (after {last} follow-up rebalance(s))"
                             for v in settled_found]
    unbalanced = reading.balanced(settled, subs, partitions)
    if sticky:
        settled_found += unbalanced
    note(last, settled_found)
    if settled_found or optimiser is None or not optimiser.available:
        return  # the moves only count against an optimum (the I4b gap)
    prev = resolved(claims_of(request))
    out.moves = A.moves(prev, settled)
    # the answer bounds the optimum only when it is itself complete and balanced
    out.optimum, out.optimum_by = optimiser.optimum(
        subs, partitions, prev, None if unbalanced else out.moves)
