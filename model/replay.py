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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..properties.group import GroupTarget, GroupView
from ..properties.saved_json import file_stem, save_as
from .events import Event, apply_event
from .promises import Promises
from .spec import ReferenceModel

__all__ = ["Outcome", "load", "replay_events", "replay_file", "save"]

FORMAT = "groupcheck-replay/1"


@dataclass
class Outcome:
    violations: list[str]
    story: list[str] = field(default_factory=list)
    events_run: int = 0
    #: the group's view after each event run (None where the event showed none)
    views: list[GroupView | None] = field(default_factory=list)


def _describe(event: Event) -> str:
    op = event["op"]
    who = event.get("member", "")
    if op == "join":
        no_ud = "" if event.get("cooperative_user_data", True) else ", no cooperative user data"
        runs = f" on {event['client']}" if event.get("client") else ""
        return (f"{who} joins{runs}, subscribed to {', '.join(event['topics'])} with "
                f"[{', '.join(event['assignors'])}] ({event.get('profile', 'kip')} profile, "
                f"subscription v{event.get('subscription_version', 3)}, user data "
                f"v{event.get('user_data_version', 1)}"
                f"{no_ud})")
    if op in ("leave", "crash", "stall", "wake"):
        return {"leave": f"{who} leaves the group", "crash": f"{who} crashes",
                "stall": f"{who} stalls (stops polling)",
                "wake": f"{who} wakes up with its stale state"}[op]
    if op == "subscribe":
        return f"{who} subscribes to {', '.join(event['topics'])}"
    if op == "unsubscribe":
        return f"{who} unsubscribes"
    if op == "partitions":
        return f"topic {event['topic']} has {event['count']} partitions"
    if op == "delete_topic":
        return f"topic {event['topic']} is deleted"
    if op in ("pause", "resume"):
        parts = ", ".join(f"{t}-{p}" for t, p in event["partitions"])
        return f"{who} {op}s {parts}"
    if op == "rejoin":
        return f"{who} asks to rejoin the group (enforceRebalance, KIP-568)"
    if op == "slow_revoke":
        return f"{who}'s next revoke callback lasts until another member has its partitions"
    if op == "error":
        return f"the coordinator answers {who}'s next {event['api']} with {event['error']}"
    if op == "delay":
        return f"the coordinator answers {who}'s next {event['api']} {event['ms']} ms late"
    if op == "sync_order":
        when = "before" if event["leader_first"] else "after"
        return (f"in the next rebalance the leader's SyncGroup answer goes out {when} "
                f"{who}'s")
    if op == "idle":
        return f"nothing happens for {event['ms']} ms (no record arrives; the members poll on)"
    if op == "produce":
        return f"a record arrives on {event['topic']}-{event['partition']}"
    if op == "poll":
        return f"{event.get('steps', 1)} protocol step(s)"
    if op == "settle":
        return "the group runs until it settles"
    return json.dumps(event)


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


def replay_events(target: GroupTarget, events: list[Event],
                  promises: Promises | None = None, generations: bool = True,
                  on_event: Callable[[int, GroupView | None], None] | None = None) -> Outcome:
    """Run ``events`` on ``target``, judged under what its assignors promise (default:
    Kafka's rules) and whether its client sends generations; stop at the first event that
    shows a violation. ``on_event`` hears each event's number (from 1) and the view it left,
    as soon as it has run (a caller that times them)."""
    model = ReferenceModel(promises=promises or Promises(), generations=generations)
    story: list[str] = []
    views: list[GroupView | None] = []
    try:
        for i, event in enumerate(events, 1):
            violations = apply_event(event, target, model)
            views.append(model.last_view)
            if on_event is not None:
                on_event(i, model.last_view)
            story.append(f"{i:>3}. {_describe(event)}")
            if model.last_view is not None:
                story.append(f"     {ownership_line(model.last_view)}")
                story += [f"     ! {who}: {text}" for who, text in model.reported]
            model.reported.clear()
            if violations:
                story += [f"     ✗ {v}" for v in violations]
                return Outcome(violations, story, i, views)
        return Outcome([], story, len(events), views)
    finally:
        target.close()


def save(directory: str | os.PathLike[str], target_name: str, events: list[Event],
         violations: list[str], seed: int | None, extra: dict[str, Any] | None = None) -> Path:
    """Write a replay file; its name says what broke, its digest is of the target, the
    assignor, the invariant and the events (`properties.saved_json`)."""
    found = re.search(r"\bI\d+a?\b", violations[0]) if violations else None
    invariant = found.group(0) if found else "none"
    body = {"format": FORMAT, "target": target_name, "seed": seed, "invariant": invariant,
            "violations": violations, "events": events, **(extra or {})}
    meaning = {"target": body["target"], "assignor": body.get("assignor"),
               "invariant": invariant, "events": events}
    return save_as(directory, f"{file_stem(target_name)}-{invariant}", body, meaning)


def load(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a replay file."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(
            data.get("events"), list):
        raise ValueError(f"{path} is not a groupcheck replay file ({FORMAT})")
    return data


def replay_file(path: str | os.PathLike[str],
                make_target: Callable[[str], GroupTarget],
                target_name: str | None = None,
                promises: Promises | None = None) -> tuple[dict[str, Any], Outcome]:
    data = load(path)
    target = make_target(target_name or data["target"])
    return data, replay_events(target, data["events"], promises)
