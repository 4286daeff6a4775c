"""The exhaustive-scope prover: every configuration in a small scope, run through an assignor.

``prove(assign, assignor, scope)`` enumerates every group configuration within ``scope`` up
to symmetry, turns each into an ``assign`` request (the JSON-lines contract), runs the given
``assign(request) -> response`` callable, judges the answer with the Python predicates of
I1–I6, and asks Z3 (``optimal``) for the fewest moves of any balanced complete assignment,
so that stickiness is reported as a gap histogram (moves − optimum; I4b is reported, never
failed). It works on plain data only; the caller hands it the function to check.

**Scope** (``members=3,topics=2,partitions=2,generations=2,claims=2,racks=0``):

* 1..``members`` members named ``m0, m1, ...``; topics ``t0, t1, ...``; each topic has
  0..``partitions`` partitions, where 0 means the topic has no metadata (to an assignor a
  topic without partitions and a topic without metadata are the same: nothing to assign;
  the absent topic is the case a client meets, e.g. after a delete).
* each member subscribes to any subset of the topics (the empty one included);
* each member either has no generation (a new or reset consumer: it owns nothing) or a
  generation in 1..``generations`` and owns any subset of the metadata partitions, whether
  or not it still subscribes to their topic. Claims overlap freely, up to ``claims``
  claimants per partition: a lower generation is a stale claim (a member that missed a
  rebalance, KAFKA-7026), an equal one a conflicting claim (KIP-792);
* with ``racks=R > 0``: every partition has its replica on one of R racks and every member
  has no rack or one of them (rack renaming is not reduced).
  Static members, old subscription versions and hand-made user data are out of scope.

**Symmetry.** A configuration and its images under renaming members, renaming topics and
order-preserving renumbering of generations satisfy the same invariants, so one
representative per orbit is checked: members are enumerated as a multiset of member
descriptors (canonically named in sorted order), topic renamings keep the smallest image,
and generations are renumbered densely from 1. Each representative carries the number of
labelled configurations it stands for, so the report can count what symmetry saved (and a
test checks those weights against the unreduced enumeration). Caveat: assignors break ties
by member id and topic name, so the reduction trusts the invariants, not the exact
assignment, to be name-independent; ``symmetry=0`` checks every labelled configuration.

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
exception from ``assign`` is reported as ``ERROR``.

**Gap (I4b).** Moves are counted from the *resolved* previous ownership (each partition to
its claimant with the strictly highest generation; a tie drops every claim) to the settled
assignment, for configurations whose settled assignment is complete (and, for the sticky
family, balanced). The optimum comes from Z3 (``optimal.MovesOracle``); when the answer is
itself complete and balanced its moves bound the optimum from above, so one unsatisfiable
``moves <= achieved - 1`` settles it, and when they also meet the trivial lower bound
(``optimal.forced_moves``) no solver call is needed (``exact=True`` always asks Z3). The
gap of range and roundrobin may be negative: they need not balance.

Counterexamples: for each invariant id, the smallest violating configuration (fewest
members, then partitions, claims, generations, subscriptions) is kept and, with
``failures=DIR``, saved as a JSON file whose top level is the failing round's request (so
``groupcheck assign FILE`` replays it) plus a ``groupcheck`` object with the violation.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
import math
import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import assignment as A
from .generations import claim_hygiene, resolved, uncontested

TopicPartition = tuple[str, int]
AssignFn = Callable[[dict[str, Any]], dict[str, Any]]
# A member: (subscribed topic indexes, generation (0 = none), rack (-1 = none), owned).
MemberDesc = tuple[tuple[int, ...], int, int, tuple[tuple[int, int], ...]]
# The metadata: per topic, (partition count, rack index of each partition).
Metadata = tuple[tuple[int, tuple[int, ...]], ...]

FORMAT = "groupcheck-prove/1"
STICKY_FAMILY = frozenset({"sticky", "cooperative-sticky"})
COOPERATIVE_ASSIGNORS = frozenset({"cooperative-sticky"})
MAX_FOLLOW_UPS = 2
_LIMITS = {"members": (1, 6), "topics": (1, 4), "partitions": (0, 8), "generations": (1, 4),
           "racks": (0, 3), "claims": (1, 6), "symmetry": (0, 1)}


def parse_bounds(text: str, limits: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """``"key=value,..."`` with each key in ``limits`` and its value within (low, high);
    raises ValueError with a one-line reason."""
    values: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key not in limits:
            raise ValueError(f"bad scope item {item!r}; expected key=value with key one "
                             f"of {', '.join(limits)}")
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"scope {key} must be an integer, not {raw.strip()!r}") from None
        low, high = limits[key]
        if not low <= value <= high:
            raise ValueError(f"scope {key} must be between {low} and {high}, not {value}")
        values[key] = value
    return values


@dataclass(frozen=True)
class Scope:
    """The bounds of the enumeration (see the module docstring)."""

    members: int = 3
    topics: int = 2
    partitions: int = 2
    generations: int = 2
    claims: int = 2
    racks: int = 0
    symmetry: bool = True

    @classmethod
    def parse(cls, text: str, base: Scope | None = None) -> Scope:
        """``"members=3,topics=2,partitions=3"``; keys not given keep ``base`` (the default
        scope). Raises ValueError with a one-line reason."""
        values: dict[str, Any] = asdict(base or cls())
        for key, value in parse_bounds(text, _LIMITS).items():
            values[key] = bool(value) if key == "symmetry" else value
        return cls(**values)

    def text(self) -> str:
        return ",".join(f"{k}={int(v)}" for k, v in asdict(self).items())


@dataclass(frozen=True)
class Config:
    """One configuration; ``weight`` = the labelled configurations it stands for."""

    metadata: Metadata
    members: tuple[MemberDesc, ...]
    weight: int = 1

    def size_key(self) -> tuple[Any, ...]:
        """Smaller is a simpler counterexample."""
        return (len(self.members), sum(c for c, _ in self.metadata),
                sum(len(m[3]) for m in self.members), len({m[1] for m in self.members}),
                sum(len(m[0]) for m in self.members), sum(m[2] >= 0 for m in self.members),
                self.metadata, self.members)


# ---------------------------------------------------------------------------------------
# Enumeration


def _subsets(items: list[Any]) -> list[tuple[Any, ...]]:
    return [c for r in range(len(items) + 1) for c in itertools.combinations(items, r)]


def _metadatas(scope: Scope) -> list[Metadata]:
    out: list[Metadata] = []
    for counts in itertools.product(range(scope.partitions + 1), repeat=scope.topics):
        if scope.racks:
            per_topic = [list(itertools.product(range(scope.racks), repeat=c)) for c in counts]
            for racks in itertools.product(*per_topic):
                out.append(tuple(zip(counts, racks, strict=True)))
        else:
            out.append(tuple((c, ()) for c in counts))
    return out


def _descriptors(scope: Scope, metadata: Metadata) -> list[MemberDesc]:
    universe = [(t, p) for t, (count, _) in enumerate(metadata) for p in range(count)]
    topic_sets = _subsets(list(range(scope.topics)))
    racks = [-1, *range(scope.racks)]
    owned_sets = _subsets(universe)
    out: list[MemberDesc] = []
    for topics in topic_sets:
        for rack in racks:
            out.append((topics, 0, rack, ()))
            for gen in range(1, scope.generations + 1):
                out += [(topics, gen, rack, owned) for owned in owned_sets]
    return sorted(out)


def _topic_image(perm: tuple[int, ...], metadata: Metadata,
                 members: tuple[MemberDesc, ...]) -> tuple[Metadata, tuple[MemberDesc, ...]]:
    meta: list[tuple[int, tuple[int, ...]]] = [(0, ())] * len(metadata)
    for t, entry in enumerate(metadata):
        meta[perm[t]] = entry
    image = tuple(sorted(
        (tuple(sorted(perm[t] for t in topics)), gen, rack,
         tuple(sorted((perm[t], p) for t, p in owned)))
        for topics, gen, rack, owned in members))
    return tuple(meta), image


def _member_tuples(descs: list[MemberDesc], n: int, claims: int, first: int,
                   ordered: bool) -> Iterator[tuple[MemberDesc, ...]]:
    """Member tuples starting with ``descs[first]``: non-decreasing (multisets) or, when
    ``ordered``, every sequence; no partition claimed by more than ``claims`` members."""
    chosen: list[MemberDesc] = []
    load: Counter[tuple[int, int]] = Counter()

    def rec(start: int) -> Iterator[tuple[MemberDesc, ...]]:
        if len(chosen) == n:
            yield tuple(chosen)
            return
        for i in range(0 if ordered else start, len(descs)):
            d = descs[i]
            if any(load[tp] >= claims for tp in d[3]):
                continue
            chosen.append(d)
            load.update(d[3])
            yield from rec(i)
            load.subtract(d[3])
            chosen.pop()

    d0 = descs[first]
    chosen.append(d0)
    load.update(d0[3])
    yield from rec(first)


def _tasks(scope: Scope) -> list[tuple[Metadata, int, int]]:
    """Units of work: (metadata, member count, index of the first member's descriptor),
    biggest first (by the number of member tuples they hold before pruning), so that the
    workers finish together."""
    sized = []
    for metadata in _metadatas(scope):
        count = len(_descriptors(scope, metadata))
        for n in range(1, scope.members + 1):
            for i in range(count):
                rest = count if not scope.symmetry else count - i
                size = rest ** (n - 1) if not scope.symmetry else math.comb(rest + n - 2, n - 1)
                sized.append((-size, metadata, n, i))
    sized.sort()
    return [(metadata, n, i) for _, metadata, n, i in sized]


def upper_bound(scope: Scope) -> int:
    """How many member tuples the enumeration visits before pruning claims and symmetry: an
    upper bound on the configurations (cheap; for warning about scopes too big to run)."""
    total = 0
    for metadata in _metadatas(scope):
        count = len(_descriptors(scope, metadata))
        for n in range(1, scope.members + 1):
            total += count ** n if not scope.symmetry else math.comb(count + n - 1, n)
    return total


def _configs_of_task(scope: Scope, task: tuple[Metadata, int, int],
                     descs: list[MemberDesc]) -> Iterator[Config]:
    metadata, n, first = task
    perms = [p for p in itertools.permutations(range(scope.topics))
             if p != tuple(range(scope.topics))]
    for members in _member_tuples(descs, n, scope.claims, first, not scope.symmetry):
        if not scope.symmetry:
            yield Config(metadata, members, 1)
            continue
        gens = {m[1] for m in members if m[1]}
        if gens != set(range(1, len(gens) + 1)):
            continue
        current = (metadata, members)
        images = {current}
        for perm in perms:
            image = _topic_image(perm, metadata, members)
            if image < current:
                break
            images.add(image)
        else:
            weight = math.factorial(n)
            for mult in Counter(members).values():
                weight //= math.factorial(mult)
            weight *= len(images) * math.comb(scope.generations, len(gens))
            yield Config(metadata, members, weight)


def enumerate_scope(scope: Scope) -> Iterator[Config]:
    """Every configuration in ``scope`` (one per orbit when ``scope.symmetry``)."""
    cache: dict[Metadata, list[MemberDesc]] = {}
    for task in _tasks(scope):
        descs = cache.setdefault(task[0], _descriptors(scope, task[0]))
        yield from _configs_of_task(scope, task, descs)


# ---------------------------------------------------------------------------------------
# One configuration


def topic_name(t: int) -> str:
    return f"t{t}"


def member_name(i: int) -> str:
    return f"m{i}"


def build_request(assignor: str, config: Config) -> dict[str, Any]:
    """The ``assign`` request (client mode) for one configuration."""
    members: dict[str, Any] = {}
    for i, (topics, gen, rack, owned) in enumerate(config.members):
        entry: dict[str, Any] = {
            "topics": [topic_name(t) for t in topics],
            "owned": [[topic_name(t), p] for t, p in owned],
            "generation": gen if gen else None,
        }
        if rack >= 0:
            entry["rack"] = f"r{rack}"
        members[member_name(i)] = entry
    request: dict[str, Any] = {
        "op": "assign", "assignor": assignor, "mode": "client",
        "partitions": {topic_name(t): c for t, (c, _) in enumerate(config.metadata) if c},
        "members": members,
    }
    if any(racks for _, racks in config.metadata):
        request["racks"] = {topic_name(t): [[f"r{r}"] for r in racks]
                            for t, (c, racks) in enumerate(config.metadata) if c}
    return request


def _claims(request: dict[str, Any]) -> dict[str, tuple[list[TopicPartition], int | None]]:
    return {m: ([(t, p) for t, p in v["owned"]], v["generation"])
            for m, v in request["members"].items()}


def _sent_claims(request: dict[str, Any]) -> dict[str, tuple[list[TopicPartition], int | None]]:
    """What a cooperative consumer still owns when it joins: nothing without a generation,
    and no partition of a topic it no longer subscribes to (it revoked those first)."""
    out: dict[str, tuple[list[TopicPartition], int | None]] = {}
    for m, v in request["members"].items():
        topics = set(v["topics"])
        owned = [(t, p) for t, p in v["owned"] if t in topics] if v["generation"] else []
        out[m] = (owned, v["generation"])
    return out


def _assignment_of(response: Any) -> dict[str, list[TopicPartition]]:
    if not isinstance(response, dict) or not isinstance(response.get("assignment"), dict):
        raise ValueError("the response has no 'assignment' object")
    out: dict[str, list[TopicPartition]] = {}
    for m, parts in response["assignment"].items():
        out[str(m)] = [(str(tp[0]), int(tp[1])) for tp in parts]
    return out


def _missing(assignment: Mapping[str, list[TopicPartition]], subs: Mapping[str, list[str]],
             partitions: Mapping[str, int]) -> bool:
    held = {tp for ps in assignment.values() for tp in ps}
    wanted = {t for ts in subs.values() for t in ts if t in partitions}
    return any((t, p) not in held for t in wanted for p in range(partitions[t]))


def _as_sets(assignment: Mapping[str, list[TopicPartition]]) -> dict[str, set[TopicPartition]]:
    return {m: set(ps) for m, ps in assignment.items() if ps}


def _follow_up(request: dict[str, Any], response: dict[str, Any],
               assignment: Mapping[str, list[TopicPartition]]) -> dict[str, Any]:
    generation = response.get("generation")
    if not isinstance(generation, int):
        generation = max([v["generation"] or 0 for v in request["members"].values()],
                         default=0) + 1
    nxt: dict[str, Any] = json.loads(json.dumps(request))
    for m, v in nxt["members"].items():
        v["owned"] = [[t, p] for t, p in dict.fromkeys(assignment.get(m, []))]
        v["generation"] = generation
    return nxt


def _i4a_applies(request: dict[str, Any], subs: Mapping[str, list[str]],
                 partitions: Mapping[str, int]) -> bool:
    members = request["members"].values()
    gens = {v["generation"] for v in members}
    if len(gens) != 1 or None in gens or "racks" in request:
        return False
    prev = {m: [(t, p) for t, p in v["owned"]] for m, v in request["members"].items()}
    return not A.complete(prev, subs, partitions) and not A.balanced(prev, subs, partitions)


@dataclass
class Judgement:
    """What one configuration showed."""

    violations: list[str]
    rounds: list[tuple[dict[str, Any], Any]]
    first_round_of: dict[str, int] = field(default_factory=dict)
    moves: int | None = None
    optimum: int | None = None
    optimum_by: str = ""
    assign_seconds: float = 0.0


class _Optimiser:
    """Z3's optimum (``optimal.MovesOracle``), memoised per input; no solver call when the
    assignor's balanced complete answer meets the lower bound (``forced_moves``)."""

    def __init__(self, exact: bool) -> None:
        self.exact = exact
        self.cache: dict[Any, int] = {}
        self.available = True
        self.oracle: Any = None
        try:
            importlib.import_module("z3")
        except ImportError:
            self.available = False

    def optimum(self, subs: Mapping[str, list[str]], partitions: Mapping[str, int],
                prev: Mapping[str, list[TopicPartition]],
                achieved: int | None) -> tuple[int, str]:
        """``achieved``: the moves of the assignor's answer when it is complete and
        balanced (an upper bound on the optimum), else None."""
        from .optimal import MovesOracle, forced_moves

        if (not self.exact and achieved is not None
                and achieved == forced_moves(subs, partitions, prev)):
            return achieved, "bound"
        key = (tuple((m, tuple(ts)) for m, ts in subs.items()),
               tuple(sorted(partitions.items())),
               tuple((m, tuple(sorted(ps))) for m, ps in prev.items()))
        if key in self.cache:
            return self.cache[key], "cache"
        if self.oracle is None:
            self.oracle = MovesOracle()
        value = int(self.oracle.min_moves(subs, partitions, prev,
                                          None if self.exact else achieved))
        self.cache[key] = value
        return value, "z3"


def judge(assign: AssignFn, assignor: str, config: Config, optimiser: _Optimiser | None,
          sticky: bool) -> Judgement:
    """Run one configuration (and its cooperative follow-ups) and judge it."""
    request = build_request(assignor, config)
    subs = {m: list(v["topics"]) for m, v in request["members"].items()}
    partitions: dict[str, int] = dict(request["partitions"])
    out = Judgement([], [])

    def note(round_no: int, found: list[str]) -> None:
        for v in found:
            out.first_round_of.setdefault(v.split(":")[0], round_no)
        out.violations += found

    current = request
    settled: dict[str, list[TopicPartition]] = {}
    for round_no in range(MAX_FOLLOW_UPS + 1):
        started = time.perf_counter()
        try:
            response = assign(current)
            assignment = _assignment_of(response)
        except Exception as exc:  # noqa: BLE001 - any failure of the target is a finding
            out.assign_seconds += time.perf_counter() - started
            out.rounds.append((current, {"error": f"{type(exc).__name__}: {exc}"}))
            note(round_no, [f"ERROR: assign raised {type(exc).__name__}: {exc}"])
            return out
        out.assign_seconds += time.perf_counter() - started
        out.rounds.append((current, response))
        protocol = str(response.get("protocol") or (
            "COOPERATIVE" if assignor in COOPERATIVE_ASSIGNORS else "EAGER"))
        found = A.exclusive_ownership(assignment) + A.valid_targets(assignment, subs, partitions)
        if protocol == "COOPERATIVE":
            sent = _sent_claims(current)
            found += A.revoke_before_reassign(uncontested(sent), assignment)
            found += claim_hygiene(sent, assignment, protocol)
        if round_no == 0 and sticky and _i4a_applies(current, subs, partitions):
            prev = {m: [(t, p) for t, p in v["owned"]] for m, v in current["members"].items()}
            found += A.no_moves_when_balanced(prev, assignment)
        note(round_no, found)
        changed = round_no == 0 or _as_sets(assignment) != _as_sets(settled)
        settled = assignment
        if (found or protocol != "COOPERATIVE" or not changed
                or not _missing(assignment, subs, partitions)):
            break
        if round_no < MAX_FOLLOW_UPS:
            current = _follow_up(current, response, assignment)
    if out.violations:
        return out
    last = len(out.rounds) - 1
    settled_found = A.complete(settled, subs, partitions)
    if settled_found and last > 0:
        if changed:
            # still changing: the group has not settled (I11), not a settled gap (I2)
            settled_found = [f"I11: no settled assignment after {last} follow-up "
                             f"rebalance(s); {v.split(': ', 1)[1]}" for v in settled_found]
        else:
            settled_found = [f"{v} (after {last} follow-up rebalance(s))"
                             for v in settled_found]
    unbalanced = A.balanced(settled, subs, partitions)
    if sticky:
        settled_found += unbalanced
    note(last, settled_found)
    if settled_found:
        return out
    prev = resolved(_claims(request))
    out.moves = A.moves(prev, settled)
    if optimiser is not None and optimiser.available:
        # the answer bounds the optimum only when it is itself complete and balanced
        out.optimum, out.optimum_by = optimiser.optimum(
            subs, partitions, prev, None if unbalanced else out.moves)
    return out


# ---------------------------------------------------------------------------------------
# The proof


@dataclass
class Counterexample:
    invariant: str
    violations: list[str]
    config: Config
    rounds: list[tuple[dict[str, Any], Any]]
    round_no: int
    file: str | None = None

    def record(self, target: str, scope: Scope) -> dict[str, Any]:
        request, response = self.rounds[self.round_no]
        return {**request, "groupcheck": {
            "format": FORMAT, "target": target, "scope": scope.text(),
            "invariant": self.invariant, "violations": self.violations,
            "round": self.round_no, "response": response,
            "rounds": [{"request": q, "response": r} for q, r in self.rounds]}}


@dataclass
class _Partial:
    configs: int = 0
    weight: int = 0
    assign_calls: int = 0
    assign_seconds: float = 0.0
    cpu_seconds: float = 0.0
    gaps: Counter[int] = field(default_factory=Counter)
    unjudged: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    smallest: dict[str, tuple[tuple[Any, ...], Counterexample]] = field(default_factory=dict)
    optimum_by: Counter[str] = field(default_factory=Counter)
    gap_examples: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = field(
        default_factory=dict)

    def add(self, config: Config, j: Judgement) -> None:
        self.configs += 1
        self.weight += config.weight
        self.assign_calls += len(j.rounds)
        self.assign_seconds += j.assign_seconds
        if j.optimum is not None and j.moves is not None:
            gap = j.moves - j.optimum
            self.gaps[gap] += 1
            self.optimum_by[j.optimum_by] += 1
            if gap:
                key = config.size_key()
                best_gap = self.gap_examples.get(gap)
                if best_gap is None or key < best_gap[0]:
                    request = j.rounds[0][0]
                    self.gap_examples[gap] = (key, {
                        "request": request, "moves": j.moves, "optimum": j.optimum,
                        "assignment": _assignment_of(j.rounds[-1][1])})
        else:
            self.unjudged += 1
        for inv, round_no in j.first_round_of.items():
            self.counts[inv] += 1
            key = config.size_key()
            best = self.smallest.get(inv)
            if best is None or key < best[0]:
                mine = [v for v in j.violations if v.split(":")[0] == inv]
                self.smallest[inv] = (key, Counterexample(inv, mine, config, j.rounds,
                                                          round_no))

    def merge(self, other: _Partial) -> None:
        self.configs += other.configs
        self.weight += other.weight
        self.assign_calls += other.assign_calls
        self.assign_seconds += other.assign_seconds
        self.cpu_seconds += other.cpu_seconds
        self.gaps.update(other.gaps)
        self.unjudged += other.unjudged
        self.counts.update(other.counts)
        self.optimum_by.update(other.optimum_by)
        for gap, (key, example) in other.gap_examples.items():
            if gap not in self.gap_examples or key < self.gap_examples[gap][0]:
                self.gap_examples[gap] = (key, example)
        for inv, (key, cex) in other.smallest.items():
            best = self.smallest.get(inv)
            if best is None or key < best[0]:
                self.smallest[inv] = (key, cex)


@dataclass
class ProofReport:
    """The outcome of :func:`prove`."""

    target: str
    assignor: str
    scope: Scope
    configurations: int
    labelled: int
    seconds: float
    workers: int
    assign_calls: int
    assign_seconds: float
    cpu_seconds: float
    violations: dict[str, int]
    counterexamples: dict[str, Counterexample]
    gaps: dict[int, int]
    gap_unjudged: int
    optimum_by: dict[str, int]
    z3_available: bool
    gap_examples: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def rate(self) -> float:
        return self.configurations / self.seconds if self.seconds > 0 else 0.0

    @property
    def symmetry_saved(self) -> int:
        return self.labelled - self.configurations

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "assignor": self.assignor, "scope": self.scope.text(),
            "ok": self.ok, "configurations": self.configurations, "labelled": self.labelled,
            "symmetrySaved": self.symmetry_saved, "seconds": round(self.seconds, 3),
            "configurationsPerSecond": round(self.rate, 1), "workers": self.workers,
            "assignCalls": self.assign_calls,
            "assignSeconds": round(self.assign_seconds, 3),
            "cpuSeconds": round(self.cpu_seconds, 3),
            "violations": dict(sorted(self.violations.items())),
            "counterexamples": {
                inv: {"violations": c.violations, "file": c.file,
                      "request": c.rounds[c.round_no][0], "response": c.rounds[c.round_no][1],
                      "round": c.round_no}
                for inv, c in sorted(self.counterexamples.items())},
            "gapHistogram": {str(k): v for k, v in sorted(self.gaps.items())},
            "gapUnjudged": self.gap_unjudged,
            "optimumBy": dict(sorted(self.optimum_by.items())),
            "gapExamples": {str(k): v for k, v in sorted(self.gap_examples.items())},
            "z3": self.z3_available,
        }

    def table(self) -> str:
        """A short human-readable report."""
        factor = self.labelled / self.configurations if self.configurations else 1.0
        lines = [
            f"prove {self.target}  scope {self.scope.text()}",
            f"  configurations checked  {self.configurations:>10,}  "
            f"({self.labelled:,} labelled; symmetry saved {self.symmetry_saved:,}, "
            f"x{factor:.1f})",
            f"  time                    {self.seconds:>10.1f} s  "
            f"({self.rate:,.0f} configurations/s on {self.workers} worker(s); "
            f"{self.cpu_seconds:.1f} CPU s, {self.assign_seconds:.1f} of them in "
            f"{self.assign_calls:,} assign calls)",
        ]
        lines.append("  invariant  violations  smallest counterexample")
        for inv in ("I1", "I2", "I3", "I4a", "I5", "I6", "I11", "ERROR"):
            n = self.violations.get(inv, 0)
            cex = self.counterexamples.get(inv)
            shown = "-" if cex is None else cex.violations[0]
            if cex is not None and cex.file:
                shown += f"  [{cex.file}]"
            lines.append(f"  {inv:<9}  {n:>10,}  {shown}")
        if self.z3_available:
            hist = "  ".join(f"{k:+d}: {v:,}" if k else f"0: {v:,}"
                             for k, v in sorted(self.gaps.items())) or "-"
            lines.append(f"  I4b gap (moves - optimum)  {hist}")
            by = ", ".join(f"{k} {v:,}" for k, v in sorted(self.optimum_by.items()))
            lines.append(f"    optimum from: {by or '-'}; not judged (a violation came first): "
                         f"{self.gap_unjudged:,}")
        else:
            lines.append("  I4b gap: not measured (install the z3 extra)")
        lines.append("every invariant held" if self.ok else
                     f"VIOLATED: {', '.join(sorted(self.violations))}")
        return "\n".join(lines)


_WORKER: dict[str, Any] = {}


def _init_worker(assign: AssignFn, assignor: str, scope: Scope, sticky: bool,
                 exact: bool) -> None:
    _WORKER.clear()
    _WORKER.update(assign=assign, assignor=assignor, scope=scope, sticky=sticky,
                   optimiser=_Optimiser(exact), descs={})


def _run_task(task: tuple[Metadata, int, int]) -> _Partial:
    scope: Scope = _WORKER["scope"]
    descs_cache: dict[Metadata, list[MemberDesc]] = _WORKER["descs"]
    descs = descs_cache.get(task[0])
    if descs is None:
        descs = descs_cache[task[0]] = _descriptors(scope, task[0])
    part = _Partial()
    optimiser: _Optimiser = _WORKER["optimiser"]
    started = time.process_time()
    for config in _configs_of_task(scope, task, descs):
        part.add(config, judge(_WORKER["assign"], _WORKER["assignor"], config, optimiser,
                               _WORKER["sticky"]))
    part.cpu_seconds = time.process_time() - started
    return part


def save_counterexample(directory: str | os.PathLike[str], target: str, scope: Scope,
                        cex: Counterexample) -> Path:
    """Write one counterexample; the name says what broke and is stable for its content."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(cex.record(target, scope), indent=1, ensure_ascii=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    path = out / f"prove-{target.replace(':', '-')}-{cex.invariant}-{digest}.json"
    path.write_text(text + "\n", encoding="utf-8")
    return path


def prove(assign: AssignFn, assignor: str, scope: Scope | None = None, *,
          target: str | None = None, workers: int | None = None,
          failures: str | os.PathLike[str] | None = None, sticky: bool | None = None,
          exact: bool = False,
          progress: Callable[[int, float], None] | None = None) -> ProofReport:
    """Check every configuration of ``scope`` against ``assign`` (see the module doc).

    ``workers``: processes (default: the CPUs, at most 2 unless told; 1 runs in-process;
    more than 1 needs the ``fork`` start method, else it runs in-process). ``sticky``:
    judge I3 and I4a (default: the assignor is ``sticky`` or ``cooperative-sticky``). ``exact``:
    ask Z3 for every optimum instead of accepting the lower bound when it is met.
    """
    scope = scope or Scope()
    target = target or f"python:{assignor}"
    sticky = assignor in STICKY_FAMILY if sticky is None else sticky
    if workers is None:
        workers = max(1, min(2, os.cpu_count() or 1))
    if "fork" not in multiprocessing.get_all_start_methods():
        workers = 1
    tasks = _tasks(scope)
    total = _Partial()
    started = time.perf_counter()

    def collect(parts: Iterator[_Partial]) -> None:
        for part in parts:
            total.merge(part)
            if progress is not None:
                progress(total.configs, time.perf_counter() - started)

    args = (assign, assignor, scope, sticky, exact)
    if workers == 1:
        _init_worker(*args)
        collect(_run_task(t) for t in tasks)
        z3_ok = bool(_WORKER["optimiser"].available)
    else:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers, initializer=_init_worker, initargs=args) as pool:
            collect(pool.imap_unordered(_run_task, tasks, chunksize=4))
        z3_ok = _Optimiser(exact).available
    seconds = time.perf_counter() - started
    counterexamples = {inv: cex for inv, (_, cex) in total.smallest.items()}
    if failures is not None:
        for cex in counterexamples.values():
            cex.file = str(save_counterexample(failures, target, scope, cex))
    return ProofReport(
        target=target, assignor=assignor, scope=scope, configurations=total.configs,
        labelled=total.weight, seconds=seconds, workers=workers,
        assign_calls=total.assign_calls, assign_seconds=total.assign_seconds,
        cpu_seconds=total.cpu_seconds, violations=dict(total.counts),
        counterexamples=counterexamples,
        gaps=dict(total.gaps), gap_unjudged=total.unjudged,
        optimum_by=dict(total.optimum_by), z3_available=z3_ok,
        gap_examples={g: ex for g, (_, ex) in total.gap_examples.items()})
