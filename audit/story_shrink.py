"""Shrinking a failing group story: delta debugging over the audit's spec.

A counterexample drawn at random is rarely the smallest story that fails: the rack-aware
flap came with eleven members and 78 partitions. `shrink_story` makes it smaller while the
*same failure* goes on: the same invariant broken on the same target, either as a violation
of its own or as the same Kafka rule's (`Failure`), and, when the caller gives one, an extra
predicate on the candidate (``keep``). With a ``reference`` target every candidate's
violations are labelled from its evidence first (`evidence.label`), so a violation the
reference reproduced (rule ``ref``) shrinks only to stories the reference still reproduces,
and an own one only to stories it still answers otherwise.

Theory of operation. A story (``groupcheck-audit-spec/1``) has parts that can go: steps,
single changes within a step, members (with every change that names them), topics (with
their metadata, racks, subscriptions and claims), claimed partitions, static ids, racks
(all of them, or one member's), the codec versions, and partitions (a topic's count lowered
to 1, halved, or less one, with the claims and replica racks beyond it). Each kind of part
is a *pass*; a pass removes chunks of its parts, halving the chunk down to one part at a
time (ddmin), and keeps every removal after which `run_chain` still shows the failure. The
passes run in a fixed order until none removes anything: then the story is 1-minimal
(dropping any one part loses the failure). Which local minimum that is depends on the
order (a partition removed early can make a member indispensable), so while the budget
lasts the search starts again from the original story with other orders (`orders`:
rotations, then seeded shuffles) and keeps the smallest result (`weight`), until `PATIENCE`
starts in a row found nothing smaller. Last, members,
topics and racks are renamed ``c0…``, ``t0…``, ``r0…`` if the failure survives it (names
order members in Kafka's HashMaps, so it may not). Nothing depends on chance or the clock
but where a limit stops the search: the same story, target and failure give the same
result whenever every start ran to its end (``complete``); a time or run limit can stop it
earlier, with the smallest story found so far, which a larger budget can only make smaller
or keep.
"""

from __future__ import annotations

import copy
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..model.story_shapes import StorySpec
from .call_timeout import CALL_TIMEOUT
from .chain import INVARIANTS, ChainResult, run_chain
from .evidence import label
from .scenarios import SpecSize, spec_size
from .story_parts import PASSES, all_members, claims, drop_all_racks, drop_codec, renamed, replicas
from .summary_shapes import ShrinkDone
from .targets import AuditTarget

__all__ = ["MAX_STARTS", "PATIENCE", "Failure", "Keep", "ShrinkError", "ShrinkResult", "Spec",
           "failure_of", "orders", "play", "shrink_story", "weight"]

Spec = StorySpec
Keep = Callable[[Spec], bool]


class ShrinkError(ValueError):
    """The story cannot be shrunk: not a random story, or it does not fail."""


@dataclass(frozen=True)
class Failure:
    """What must keep happening: ``invariant`` (a chain invariant id) violated, as a
    violation of its own (``rule`` None) or explained by that Kafka rule."""

    invariant: str
    rule: str | None = None

    def seen_in(self, chain: ChainResult) -> bool:
        if chain.verdicts.get(self.invariant) != 1:
            return False
        return chain.inherited.get(self.invariant) == self.rule

    def text(self) -> str:
        return self.invariant + (f" (Kafka's own, rule {self.rule})" if self.rule else "")


def failure_of(chain: ChainResult, invariant: str | None = None) -> Failure | None:
    """The failure a chain shows: ``invariant`` if given, else its first own violation,
    else its first violation a Kafka rule explains."""
    violated = [inv for inv in INVARIANTS if chain.verdicts[inv] == 1]
    if invariant is not None:
        violated = [inv for inv in violated if inv == invariant]
    own = [inv for inv in violated if inv not in chain.inherited]
    if own:
        return Failure(own[0])
    return Failure(violated[0], chain.inherited[violated[0]]) if violated else None


@dataclass
class ShrinkResult:
    spec: Spec
    chain: ChainResult
    failure: Failure
    before: SpecSize
    after: SpecSize
    runs: int = 0
    seconds: float = 0.0
    complete: bool = False  # every pass ran to its fixpoint: the story is 1-minimal
    renamed: bool = False

    def summary(self) -> ShrinkDone:
        """What a replay file records of the shrink: not its time nor its runs, which
        differ between identical runs when a budget cuts it short (they are printed)."""
        return {"failure": self.failure.text(), "from": self.before, "to": self.after,
                "complete": self.complete, "renamed": self.renamed}


@dataclass
class _Limits:
    """The time and runs all starts of one shrink share."""

    deadline: float
    max_runs: int
    runs: int = 0
    cut: bool = False  # a limit stopped the search
    on_run: Callable[[int], None] | None = None  # told the runs so far, after each one

    def more(self) -> bool:
        if self.runs >= self.max_runs or time.monotonic() >= self.deadline:
            self.cut = True
        return not self.cut


@dataclass
class _Shrink:
    target: AuditTarget
    failure: Failure
    keep: Keep | None
    reference: AuditTarget | None
    limits: _Limits
    timeout: float
    spec: Spec
    chain: ChainResult

    def more(self) -> bool:
        return self.limits.more()

    def accept(self, candidate: Spec) -> bool:
        """Run ``candidate``; adopt it when it shows the failure (and ``keep`` agrees)."""
        if candidate == self.spec:
            return False
        self.limits.runs += 1
        chain = play(self.target, candidate, self.timeout, self.reference)
        if self.limits.on_run is not None:
            self.limits.on_run(self.limits.runs)
        if not self.failure.seen_in(chain) or (self.keep is not None
                                               and not self.keep(candidate)):
            return False
        self.spec, self.chain = candidate, chain
        return True


def _without(spec: Spec, drop: Callable[[Spec, set[Any]], None], gone: set[Any]) -> Spec:
    candidate = copy.deepcopy(spec)
    drop(candidate, gone)
    return candidate


def _ddmin(search: _Shrink, parts: Callable[[Spec], list[Any]],
           drop: Callable[[Spec, set[Any]], None]) -> bool:
    """Remove chunks of parts, halving the chunk down to one (see the module docstring)."""
    removed = False
    chunk = max(1, len(parts(search.spec)) // 2)
    while chunk >= 1 and search.more():
        items = parts(search.spec)
        start = 0
        progress = False
        while start < len(items) and search.more():
            gone = set(items[start:start + chunk])
            if search.accept(_without(search.spec, drop, gone)):
                items = parts(search.spec)
                progress = removed = True
            else:
                start += chunk
        if not progress:
            chunk //= 2
    return removed


def _single(search: _Shrink, edit: Callable[[Spec], bool]) -> bool:
    """Try one edit (``edit`` returns False when it does not apply)."""
    candidate = copy.deepcopy(search.spec)
    return edit(candidate) and search.more() and search.accept(candidate)


def weight(spec: Spec) -> tuple[int, int, int]:
    """How big a story is, to compare shrinks: members, partitions, topics and rounds;
    then claims; then racks and static ids."""
    size = spec_size(spec)
    everyone = list(all_members(spec))
    return (size["members"] + size["partitions"] + size["topics"] + size["rounds"],
            len(claims(spec)),
            sum(("rack" in m) + ("groupInstanceId" in m) for m in everyone)
            + len(replicas(spec)))


#: how many pass orders a shrink may start from
MAX_STARTS = 100
#: a shrink stops after this many starts in a row that found nothing smaller
PATIENCE = 9


def orders() -> Iterator[tuple[int, ...]]:
    """The pass orders a shrink starts from, in turn (each from the original story): the
    rotations of `PASSES`, then shuffles of it, each from a generator seeded by its
    number (so the sequence is always the same)."""
    n = len(PASSES)
    for k in range(n):
        yield tuple(range(k, n)) + tuple(range(k))
    for k in range(MAX_STARTS - n):
        yield tuple(random.Random(f"groupcheck-shrink:{k}").sample(range(n), n))


def _fixpoint(search: _Shrink, order: tuple[int, ...]) -> bool:
    """Run the passes in ``order`` until none removes anything; True if it got there."""
    changed = True
    while changed and search.more():
        changed = False
        for k in order:
            _name, parts, drop = PASSES[k]
            changed |= _ddmin(search, parts, drop)
        changed |= _single(search, drop_all_racks)
        changed |= _single(search, drop_codec)
    return not changed and not search.limits.cut


def play(target: AuditTarget, spec: Spec, timeout: float,
         reference: AuditTarget | None = None) -> ChainResult:
    """`run_chain`, its violations labelled from ``reference``'s evidence when given."""
    chain = run_chain(target, spec, timeout)
    if reference is not None:
        label(chain, target, reference, timeout)
    return chain


def shrink_story(spec: Spec, target: AuditTarget, failure: Failure | None = None, *,
                 keep: Keep | None = None, seconds: float = 60.0, max_runs: int = 50_000,
                 timeout: float = CALL_TIMEOUT, reference: AuditTarget | None = None,
                 on_run: Callable[[int], None] | None = None) -> ShrinkResult:
    """The smallest story found that still shows ``failure`` on ``target`` (by default
    the failure the story shows first; see the module docstring); ``on_run`` is told the
    runs so far after each one."""
    if spec.get("kind") == "requests" or not isinstance(spec.get("members"), list):
        raise ShrinkError("only a story (groupcheck-audit-spec/1 with members and steps) "
                          "can be shrunk, not a fixed chain of requests")
    started = time.monotonic()
    original = play(target, spec, timeout, reference)
    failure = failure or failure_of(original)
    if failure is None or not failure.seen_in(original):
        raise ShrinkError(f"the story does not fail on {target.name}"
                          + (f" with {failure.text()}" if failure else ""))
    limits = _Limits(started + seconds, max_runs, runs=1, on_run=on_run)
    best = _Shrink(target, failure, keep, reference, limits, timeout, copy.deepcopy(spec),
                   original)
    complete = True
    stale = 0
    for order in orders():
        if not limits.more() or stale >= PATIENCE:
            break
        search = _Shrink(target, failure, keep, reference, limits, timeout,
                         copy.deepcopy(spec), original)
        complete = _fixpoint(search, order) and complete
        stale += 1
        if weight(search.spec) < weight(best.spec):
            best, stale = search, 0
    complete = complete and not limits.cut
    # renaming is one run more, whatever the limits
    plain = renamed(best.spec)
    was_renamed = plain != best.spec and best.accept(plain)
    return ShrinkResult(best.spec, best.chain, failure, spec_size(spec),
                        spec_size(best.spec), limits.runs, time.monotonic() - started,
                        complete, was_renamed)
