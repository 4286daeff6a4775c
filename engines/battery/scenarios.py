"""The ``scenarios`` engine of ``groupcheck check``: the audit's seeded random group stories,
run in this process within a time budget, so large and unequal groups are looked at on
every check (no Spark).

Theory of operation. A story is the audit's spec (``audit/scenarios.py``): 1–200 members,
racks, static members, stale and conflicting claims, then a chain of rebalances with
joins, leaves, stalls, returns, subscription and metadata changes. `run_chain`
(``audit/chain.py``) plays it on the target's ``assign`` function and judges every
rebalance (I1–I6, I11, ``ERROR``; a call slower than the audit's per-call limit is
``TIMEOUT``). Stories come from two streams of one seed, interleaved by count: the audit's
scenarios ``0, 1, 2, …`` in order, and every `LARGE_EVERY`-th story the next scenario of a
large tier (20 members or more, found by reading the tier off the scenario's generator),
so a short budget still reaches big groups. The stories run therefore depend only on the
seed and their count: the engine's note says both, and ``count=`` runs exactly those
stories again (``groupcheck scenarios --seed S --count N``). Scenario numbers are the
audit's, so ``groupcheck audit --seed S`` plays the same story.

A violation that a rule of ``properties/kafka_rules.py`` explains is Kafka's own: it is
shown under "Kafka's" and the search goes on (``strict`` fails on it). The first other
violation ends the search; its story is shrunk (``audit/story_shrink.py``: the same invariant
broken the same way) within what is left of the budget (none left: it is saved as found), and
saved as an audit replay file (``groupcheck-audit-chain/1``: ``groupcheck replay``,
``groupcheck shrink`` and ``groupcheck audit --corpus`` read it) that names the scenario it
came from.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ...audit.call_timeout import CALL_TIMEOUT, AssignTimeout
from ...audit.chain import INVARIANTS, ChainResult, replay_record
from ...audit.scenarios import pick_tier, random_spec, scenario_rng, spec_size
from ...audit.story_changes import member_line, read_change
from ...audit.story_shrink import Failure, ShrinkError, play, shrink_story
from ...audit.summary_shapes import ShrinkDone
from ...audit.targets import AuditTarget
from ...model.story_shapes import StorySpec
from ...properties.deviations import EVIDENCE
from ...properties.invariants import by_id
from ...properties.jsonl_shapes import AssignAnswer, AssignRequest
from ...targets.target import Target
from ..progress import PROCESS_FLOOR, Clock, Meter, ProgressFn, silent
from ..resolving import must_start, warm
from .profile_gaps import playable
from .results import (
    EngineResult,
    Finding,
    file_safe,
    record_profile,
    save_json,
)

__all__ = ["LARGE_EVERY", "LARGE_TIER", "PROCESS_FLOOR", "SHRINK_SHARE", "StoryTarget",
           "describe", "row_of", "run_scenarios_engine", "schedule", "story_target", "warm"]

#: every LARGE_EVERY-th story is drawn from the large tiers (20 members or more)
LARGE_EVERY = 8
#: the first tier whose groups count as large (`audit.scenarios.TIERS`)
LARGE_TIER = 2
#: the shrink of a finding takes what is left of the budget; the search keeps at least this
#: share of it for the shrink when a story is found late
SHRINK_SHARE = 0.25


@dataclass(frozen=True)
class StoryTarget(AuditTarget):
    """A registry target as the chain driver sees it: balance and stickiness (I3, I4a)
    are judged where the target promises them, not by its name. The chain judges both
    together, so only a target that promises Kafka's isBalanced and stickiness (the sticky
    family, or a declared ``balance = "sticky"``) gets them; an undeclared user assignor
    (isBalanced, no stickiness) has I3 judged by the prover and the state machine."""

    balanced: bool = False

    @property
    def sticky(self) -> bool:
        return self.balanced


def story_target(target: Target) -> StoryTarget:
    """The chain driver's view of ``target`` (which needs an assign function). A call cut
    short by the per-call timeout closes the target, so that a process that still owes
    that answer is started afresh (and warmed) instead of answering the next request with
    it."""
    assign = target.assign
    if assign is None or target.assignor is None:
        raise ValueError(f"{target.name} has no assign function")

    def guarded(request: AssignRequest) -> AssignAnswer:
        try:
            return assign(request)
        except AssignTimeout:
            target.close()
            warm(target)
            raise

    return StoryTarget(target.name, target.assignor, guarded, None,
                       target.balanced and target.sticky)


def _tier(seed: int, index: int) -> int:
    """The tier of scenario ``index`` without making its spec: `random_spec` draws it
    first from the scenario's generator."""
    return pick_tier(scenario_rng(seed, index))


def schedule(seed: int) -> Iterator[int]:
    """Scenario indexes in the order the engine plays them (see the module docstring)."""
    plain = 0
    large = 0
    for k in range(1 << 62):
        if k % LARGE_EVERY == LARGE_EVERY - 1:
            while _tier(seed, large) < LARGE_TIER:
                large += 1
            yield large
            large += 1
        else:
            yield plain
            plain += 1


def row_of(invariant: str) -> str:
    """The ``check`` table row of a chain invariant (the chain judges I4a as ``I4``)."""
    return by_id(invariant).row


def describe(spec: StorySpec) -> str:
    """One line per member and per step: the story a replay file holds, readable."""
    size = spec_size(spec)
    lines = [f"{size['members']} member(s), {size['partitions']} partition(s) in "
             f"{size['topics']} topic(s): {json.dumps(spec.get('partitions', {}))}"
             + (", with racks" if spec.get("racks") else "")]
    for m in spec.get("members", []):
        lines.append("  " + member_line(m))
    for n, ops in enumerate(spec.get("steps", []), 2):
        changes = ("; ".join(read_change(op).text() for op in ops)
                   or "no change (every member rejoins)")
        lines.append(f"  before rebalance {n}: {changes}")
    return "\n".join(lines)


@dataclass
class _Search:
    """What the stories have shown so far."""

    stories: int = 0
    largest: int = 0
    plain: int = 0  # scenarios 0..plain-1 of the plain stream were run
    large: int = 0  # stories of the large stream
    last_large: int = -1
    timeouts: int = 0
    found_after: float | None = None  # seconds to the failing story (before shrinking)
    #: stories the target's release cannot be judged on (`profile_gaps.playable`)
    unplayable: int = 0


def _save(failures: str, target: StoryTarget, spec: StorySpec, chain: ChainResult,
          index: int, seed: int, invariant: str, shrink: ShrinkDone | None = None) -> str:
    """The story (shrunk) as an audit replay file, named by the story found: scenario
    ``index`` of ``seed`` (however far a shrink cut short by the budget got)."""
    record = replay_record(target, spec, chain, index, seed)
    record["invariant"] = invariant
    record["engine"] = "scenarios"
    if shrink is not None:
        record["shrink"] = shrink
    return save_json(failures, f"scenarios-{file_safe(target.name)}-{row_of(invariant)}",
                     record, {"target": target.name, "assignor": target.assignor,
                              "invariant": invariant, "seed": seed, "scenario": index})


def _first_violated(chain: ChainResult, own: bool) -> str:
    return next(inv for inv in INVARIANTS if chain.verdicts[inv] == 1
                and (not own or inv not in chain.inherited))


def run_scenarios_engine(target: Target, budget: float, failures: str, seed: int = 0, *,
                         count: int | None = None, strict: bool = False,
                         timeout: float = CALL_TIMEOUT,
                         reference: Target | None = None, progress: ProgressFn = silent,
                         clock: Clock = time.perf_counter) -> EngineResult:
    """Play stories of ``seed`` on ``target`` until ``budget`` seconds are spent on
    ``clock`` (or exactly ``count`` stories); stop at the first violation no Kafka rule
    explains (any violation with ``strict``). With a ``reference``, a violated story's
    labels come from its evidence (`audit.evidence`), and a shrunk finding keeps them.
    ``progress`` hears of every story."""
    result = EngineResult("scenarios")
    if target.assign is None or target.assignor is None:
        result.skipped = "no assign function"
        return result
    if count is None and budget < PROCESS_FLOOR and must_start(target):
        result.skipped = (f"{budget:.1f} s of the budget was left for it, less than the "
                          f"{PROCESS_FLOOR:g} s a process target may need to start")
        return result
    story = story_target(target)
    ref = story_target(reference) if reference is not None else None
    meter = Meter(progress, "scenarios", target.name, None if count else budget, clock)
    started = meter.started
    warm(target)
    search = _Search()
    checked: set[str] = set()
    for index in schedule(seed):
        if (search.stories >= count if count is not None
                else clock() - started >= budget):
            break
        spec = random_spec(seed, index)
        if not playable(target, spec):
            search.unplayable += 1
            continue
        chain = play(story, spec, timeout, ref)
        _count(search, spec, index)
        judged = {row_of(inv) for inv, v in chain.verdicts.items() if v is not None}
        if chain.calls:
            judged.add("ERROR")  # every call answered or raised: judged either way
        checked |= judged
        result.judged.update(judged)
        result.shapes.add(_outcome(chain, spec, seed, index))
        if chain.verdicts["TIMEOUT"] == 1:
            search.timeouts += 1
        meter.tick(search.stories, len(result.inherited), f"scenario {index}")
        if (chain.own_violation or (strict and chain.violated)):
            search.found_after = clock() - started
            inv = _first_violated(chain, own=not strict)
            left = (budget - search.found_after if count is None
                    else max(budget - search.found_after, budget * SHRINK_SHARE))
            finding = _finding(failures, story, spec, chain, index, seed, inv, left, timeout,
                               ref)
            finding.found_at = started + search.found_after  # when seen, not when shrunk
            result.add(finding)
            break
        if chain.violated:
            _inherited(result, failures, story, spec, chain, index, seed, ref)
    result.checked = tuple(sorted(checked))
    result.runs = search.stories
    result.seconds = clock() - started
    result.note = _note(search, seed)
    result.depth = f"{search.stories:,} stories"
    if target.profile is not None:
        record_profile(result, target.profile.to_json())
    return result


def _finding(failures: str, story: StoryTarget, spec: StorySpec, chain: ChainResult,
             index: int, seed: int, invariant: str, seconds: float,
             timeout: float, reference: StoryTarget | None = None) -> Finding:
    """Shrink the failing story within ``seconds`` and save it (the original is scenario
    ``index`` of ``seed``: `random_spec` makes it again)."""
    failure = Failure(invariant, chain.inherited.get(invariant))
    note = "" if seconds > 0 else " (not shrunk: the budget was spent)"
    try:
        if seconds <= 0:
            raise ShrinkError("no time left")
        shrunk = shrink_story(spec, story, failure, seconds=seconds, timeout=timeout,
                              reference=reference)
        spec, chain = shrunk.spec, shrunk.chain
        b = shrunk.before
        note = (f" (shrunk from {b['members']} members, {b['partitions']} partitions, "
                f"{b['rounds']} rebalance(s){'' if shrunk.complete else '; budget spent'})")
    except ShrinkError:  # it did not fail again (a timeout that did not recur): keep it
        shrunk = None
    path = _save(failures, story, spec, chain, index, seed, invariant,
                 shrunk.summary() if shrunk else None)
    return Finding(row_of(invariant), _message(chain, invariant), path,
                   spec_size(spec)["members"],
                   f"seed {seed}, scenario {index}{note}:\n{describe(spec)}")


def _outcome(chain: ChainResult, spec: StorySpec, seed: int, index: int) -> str:
    """A story's shape as the breadth slices count it: its tier, its group's size class
    (a power of two) and what the chain judged of each invariant."""
    verdicts = ",".join(f"{inv}={v}" for inv, v in sorted(chain.verdicts.items())
                        if v is not None)
    return (f"story:t{_tier(seed, index)}:m{spec_size(spec)['members'].bit_length()}:"
            f"{verdicts}")


def _count(search: _Search, spec: StorySpec, index: int) -> None:
    search.stories += 1
    search.largest = max(search.largest, spec_size(spec)["members"])
    if search.stories % LARGE_EVERY == 0:
        search.large += 1
        search.last_large = index
    else:
        search.plain = index + 1


def _message(chain: ChainResult, invariant: str) -> str:
    prefix = "TIMEOUT" if invariant == "TIMEOUT" else row_of(invariant)
    mine = [v for v in chain.violations if v.startswith(prefix)]
    return (mine or chain.violations or [invariant])[0]


def _inherited(result: EngineResult, failures: str, story: StoryTarget,
               spec: StorySpec, chain: ChainResult, index: int, seed: int,
               reference: StoryTarget | None = None) -> None:
    """Keep the first example of each invariant a Kafka rule (or ``reference``'s evidence)
    explains."""
    for inv, rule in chain.inherited.items():
        row = row_of(inv)
        if chain.verdicts[inv] == 1 and row not in result.inherited:
            path = _save(failures, story, spec, chain, index, seed, inv)
            label = (f"evidence {reference.name if reference else '?'}" if rule == EVIDENCE
                     else f"rule {rule}")
            shown = label if rule == EVIDENCE else rule
            result.inherited[row] = Finding(
                row, f"Kafka's own ({shown}): {_message(chain, inv)}", path,
                spec_size(spec)["members"], f"seed {seed}, scenario {index}", label=label)


def _note(search: _Search, seed: int) -> str:
    large = (f" and {search.large} large one(s) up to scenario {search.last_large}"
             if search.large else "")
    hung = f"; {search.timeouts} timed out" if search.timeouts else ""
    found = (f"; the last failed after {search.found_after:.2f}s"
             if search.found_after is not None else "")
    if search.unplayable:
        found += (f"; {search.unplayable} not played (contested claims need a generation, "
                  "absent in this release)")
    return (f"{search.stories} stories of seed {seed}: scenarios 0..{search.plain - 1}"
            f"{large}; largest group {search.largest} members{hung}{found}")
