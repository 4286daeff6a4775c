"""Replay files: a failure as JSON, run again deterministically against any target.

A replay file holds the target it was found on, the events (see `events`), and the
violations seen. `replay` applies the events to a fresh target and returns the first
violations that reproduce (empty when the target now passes), together with a story:
one numbered line per event with the ownership it left behind.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Required, TypedDict

from ..properties.delivery import DeliveryLog
from ..properties.group import GroupTarget, GroupView
from ..properties.jsonl_shapes import JSONObject, ProfileJson
from ..properties.saved_json import file_stem, save_as
from .bmc_trace import TraceRecord
from .event_registry import EventRecord
from .events import DomainEvent, EventFormatError, apply_event, read_events, write_events
from .promises import Promises
from .spec import ReferenceModel
from .stats import Stats

__all__ = ["Outcome", "ReplayFile", "ReplayNotes", "last_delivery", "load", "replay_events",
           "replay_file", "save"]

FORMAT = "groupcheck-replay/1"
#: how often a replay seeking a saved violation resumes a settle another one cut short
_RESUMES = 3


class ReplayNotes(TypedDict, total=False):
    """What a replay file may hold beside its events, where its writer knows it: the target
    and assignor, that Kafka's own behaviour broke the invariant, the story and the wire log
    of the run that found it, the BMC trace it came from, the client's account of itself."""

    target: str
    assignor: str | None
    inheritedFromKafka: bool
    story: list[str]
    wire_log: list[str]
    bmc: TraceRecord
    clientProfile: ProfileJson


class ReplayFile(ReplayNotes, total=False):
    """A replay file (docs/reference/file-formats.md): its events, what they broke, and the
    notes other commands add (``note``, ``shrink``, ``upgrade``, ``confirmed_on``,
    ``reproduces``, ``frequency``)."""

    format: Required[str]
    seed: int | None
    invariant: str
    violations: list[str]
    events: Required[list[EventRecord]]
    note: str
    shrink: JSONObject
    upgrade: JSONObject
    confirmed_on: list[str]
    reproduces: list[str]
    #: how often a replay shows it, for a finding that shows only now and then
    frequency: str


@dataclass
class Outcome:
    violations: list[str]
    story: list[str] = field(default_factory=list)
    events_run: int = 0
    #: the group's view after each event run (None where the event showed none)
    views: list[GroupView | None] = field(default_factory=list)

    @property
    def delivery(self) -> DeliveryLog | None:
        """The last delivery log the views showed (None: the target keeps none)."""
        return last_delivery(self.views)


def last_delivery(views: Sequence[GroupView | None]) -> DeliveryLog | None:
    """The last delivery log ``views`` showed (None: the target keeps none)."""
    return next((v.delivery for v in reversed(views)
                 if v is not None and v.delivery is not None), None)


def ownership_line(view: GroupView) -> str:
    """``gen 3 Stable | c1: t0-0 t0-1 | c2 (out): t0-2``."""
    cells = []
    for name, m in sorted(view.members.items()):
        flags = "" if m.in_group else " (out)"
        flags += "" if m.active else " (stalled)"
        parts = " ".join(f"{t}-{p}" for t, p in sorted(m.owned)) or "-"
        paused = f" paused {' '.join(f'{t}-{p}' for t, p in sorted(m.paused))}" if m.paused \
            else ""
        cells.append(f"{name}{flags}: {parts}{paused}")
    return f"gen {view.generation} {view.state} | " + " | ".join(cells)


def replay_events(target: GroupTarget, events: list[DomainEvent],
                  promises: Promises | None = None, generations: bool = True,
                  on_event: Callable[[int, GroupView | None], None] | None = None,
                  stats: Stats | None = None,
                  wanted: Callable[[list[str]], bool] | None = None) -> Outcome:
    """Run ``events`` on ``target``, judged under what its assignors promise (default:
    Kafka's rules) and whether its client sends generations; stop at the first event that
    shows a violation — with ``wanted``, the first whose violations it accepts (a replay
    looking for the one a file saved plays on past others, which then stand in the
    outcome when it never comes). A story that ends before its group settled is judged for
    I17 on its last view (`ReferenceModel.story_ended`). ``on_event`` hears each event's
    number (from 1) and the view it left, as soon as it has run (a caller that times them);
    ``stats`` counts the judgements and keeps the story's delivery verdict."""
    model = ReferenceModel(promises=promises or Promises(), generations=generations,
                           stats=stats)
    story: list[str] = []
    views: list[GroupView | None] = []
    passed: list[str] = []  # violations played past, none of them ``wanted``
    try:
        for i, event in enumerate(events, 1):
            violations = apply_event(event, target, model)
            past: list[str] = []
            for _ in range(_RESUMES):  # a settle cut short by a violation not wanted
                if (wanted is None or not violations or wanted(violations)
                        or event.op != "settle" or _settled(model)):
                    break
                past += violations
                violations = apply_event(event, target, model)
            views.append(model.last_view)
            if on_event is not None:
                on_event(i, model.last_view)
            story.append(f"{i:>3}. {event.describe()}")
            if model.last_view is not None:
                story.append(f"     {ownership_line(model.last_view)}")
                story += [f"     ! {who}: {text}" for who, text in model.reported]
            model.reported.clear()
            story += [f"     ✗ {v} (not the one sought: the group plays on)" for v in past]
            passed += [v for v in past if v not in passed]
            if violations:
                story += [f"     ✗ {v}" for v in violations]
                if wanted is None or wanted(violations):
                    return Outcome(violations, story, i, views)
                passed += [v for v in violations if v not in passed]
        if ended := model.story_ended():
            story += [f"     ✗ {v} (at the story's end, the group not settled)" for v in ended]
            if wanted is None or wanted(ended):
                return Outcome(ended, story, len(events), views)
            passed += [v for v in ended if v not in passed]
        return Outcome(passed, story, len(events), views)
    finally:
        target.close()
        if stats is not None:
            stats.delivered(last_delivery(views))


def _settled(model: ReferenceModel) -> bool:
    return model.last_view is not None and model.last_view.settled


def save(directory: str | os.PathLike[str], target_name: str, events: list[DomainEvent],
         violations: list[str], seed: int | None, extra: ReplayNotes | None = None) -> Path:
    """Write a replay file; its name says what broke, its digest is of the target, the
    assignor, the invariant and the events (`properties.saved_json`)."""
    found = re.search(r"\bI\d+a?\b", violations[0]) if violations else None
    invariant = found.group(0) if found else "none"
    body: ReplayFile = {"format": FORMAT, "target": target_name, "seed": seed,
                        "invariant": invariant, "violations": violations,
                        "events": write_events(events)}
    notes = extra or {}
    meaning = {"target": notes.get("target", target_name), "assignor": notes.get("assignor"),
               "invariant": invariant, "events": body["events"]}
    return save_as(directory, f"{file_stem(target_name)}-{invariant}", {**body, **notes},
                   meaning)


def load(path: str | os.PathLike[str]) -> ReplayFile:
    """Read and check a replay file (its events must read as events)."""
    data: ReplayFile = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(
            data.get("events"), list):
        raise ValueError(f"{path} is not a groupcheck replay file ({FORMAT})")
    try:
        read_events(data["events"])
    except EventFormatError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return data


def replay_file(path: str | os.PathLike[str],
                make_target: Callable[[str], GroupTarget],
                target_name: str | None = None,
                promises: Promises | None = None,
                wanted: Callable[[list[str]], bool] | None = None) -> tuple[ReplayFile, Outcome]:
    """``path``'s events on a fresh target (`replay_events`, ``wanted`` as there)."""
    data = load(path)
    target = make_target(target_name or data["target"])
    return data, replay_events(target, read_events(data["events"]), promises, wanted=wanted)
