"""A failed upgrade's story shrunk: fewer members, then fewer faults, keeping the failure's
cause (`shrink_upgrade`, `cause_of`).

The story of a rolling upgrade is the group forming, each member's restarts and the faults
between; a shorter one that still fails the same way is the finding. Only two kinds of cut
are tried, each once and replayed on a fresh group: every event of one member (but the one
the failure names), then one fault (the run of events marked ``fault``, the settle that ends
it included). Topics, the group's forming
and the settles stay, so a cut never turns the failure into another (members subscribed to
topics that do not exist, a group never formed). A cut is kept when the replay fails with
the same cause: the same first violation with member, partition and generation numbers left
out, and, when the original's group named a protocol-level refusal (the coordinator's
INCONSISTENT_GROUP_PROTOCOL), the same refusal. Such a replay ends at the refusal, in
seconds (`targets.wire.refusals`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from ...model.event_types import DomainEvent
from ...model.replay import replay_events
from ...properties.group import GroupTarget

__all__ = ["PROTOCOL_SIGNS", "cause_of", "shrink_upgrade"]

#: what a group reports when the protocol itself keeps a member out
PROTOCOL_SIGNS = ("INCONSISTENT_GROUP_PROTOCOL",)
_NUMBERS = re.compile(r"\d+")


def cause_of(violations: list[str], story: list[str]) -> str:
    """The failure's cause, comparable across stories of different sizes: its first
    violation with the numbers left out, and the protocol sign its story shows, if any."""
    if not violations:
        return ""
    said = [line for line in story if line.strip().startswith("! ")]
    signs = [s for s in PROTOCOL_SIGNS if any(s in line for line in said)]
    invariant, _, text = violations[0].split(" (", 1)[0].partition(": ")
    return " | ".join([f"{invariant}: {_NUMBERS.sub('#', text)}", *signs[:1]])


def _cuts(events: list[DomainEvent], keep: str | None) -> list[set[int]]:
    """The indexes of each member's events but ``keep``'s (one cut a member), then of each
    fault."""
    members = sorted({e.who for e in events if e.who is not None} - {keep})
    cuts = [{i for i, e in enumerate(events) if e.who == m} for m in members]
    fault: set[int] = set()
    for i, e in enumerate(events):
        if e.fault:
            fault.add(i)
        elif fault:
            cuts.append(fault)
            fault = set()
    return cuts + ([fault] if fault else [])


def shrink_upgrade(events: list[DomainEvent], make_target: Callable[[], GroupTarget],
                   violations: list[str], cause: str, seconds: float,
                   keep: str | None = None) -> tuple[list[DomainEvent], list[str]]:
    """The story with every cut (`_cuts`, each tried once, within ``seconds``) that still
    fails with ``cause`` made, and its violations (``events`` and ``violations`` when none
    does). ``keep``: the member the failure names (the replay file names it too)."""
    deadline = time.monotonic() + seconds
    kept, found = list(range(len(events))), violations
    for cut in _cuts(events, keep):
        trial = [i for i in kept if i not in cut]
        if time.monotonic() >= deadline or not trial or len(trial) == len(kept):
            continue
        outcome = replay_events(make_target(), [events[i] for i in trial])
        if outcome.violations and cause_of(outcome.violations, outcome.story) == cause:
            kept, found = trial, outcome.violations
    return [events[i] for i in kept], found
