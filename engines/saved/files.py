"""State-machine replay files and request files, played again and shrunk.

* Events (``groupcheck-replay/1``) run on a fresh group of the target, judged under what
  its assignors promise; shrinking removes events while the same invariant still breaks
  (`model.shrink`), each try on a fresh group.
* Requests — one saved ``assign`` request or a chain of them — go to the target one by one,
  each answer judged as the prover judges a round (`saved.requests`); shrinking makes the
  first failing request smaller (a member, a topic, a partition, a claim or a subscription
  less, `requests.smaller_requests`) while the same invariant still breaks.

A replay says ``reproduced`` only for the violation the file saved (`verdict`); one that
shows another says so, and one that shows none says ``not reproduced``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from ...audit.delivery_picture import delivery_svg
from ...audit.picture import events_timeline, html_page, svg
from ...model.event_shrink import invariant_of, minimize
from ...model.events import write_events
from ...model.replay import Outcome, ReplayFile, replay_events
from ...model.reproduced import reproduces
from ...model.saved_files import SavedFile, SavedFileError
from ...model.saved_files import classify as classify_saved
from ...model.saved_files import read as read_saved
from ...properties.jsonl_shapes import AssignRequest, JSONObject
from ...targets.registry import NO_SETTINGS
from ...targets.settings import Settings
from ...targets.target import Target
from ..battery.fuzz import machine_config
from ..battery.results import invariant_id
from ..errors import EngineInputError
from ..progress import Meter, ProgressFn, silent
from ..resolving import group_factory, group_target, resolved, story_settings
from .requests import answer_table, replay_request, smaller_requests

__all__ = ["Replayed", "SavedFile", "SavedFileError", "classify_saved", "read_saved",
           "replay_events_file", "replay_requests_file", "shrink_events_file",
           "shrink_requests_file"]


class RequestFile(AssignRequest, total=False):
    """A request file: the request, and ``groupcheck``'s notes beside it (their keys
    depend on the engine that wrote the file, hence a plain JSON object)."""

    groupcheck: JSONObject


@dataclass
class Replayed:
    """A file played once: what to print, its picture (events only) and the verdict: the
    saved violation ``reproduced``, a ``different`` one shown instead, or neither."""

    lines: list[str]
    reproduced: bool
    page: str = ""
    different: bool = False


def verdict(lines: list[str], saved: SavedFile, seen: list[str]) -> Replayed:
    """``reproduced`` only by the violation the file saved (`model.reproduced`); another
    one is said to be different; none is ``not reproduced``."""
    same = reproduces(saved.recorded_violations, seen, saved.names)
    if same is not None:
        return Replayed([*lines, f"reproduced: {same}"], True)
    if seen:
        return Replayed([*lines, f"not reproduced: the saved violation was "
                                 f"{saved.recorded_violations[0]}; this replay shows a "
                                 f"different one: {seen[0]}"], False, different=True)
    return Replayed([*lines, "not reproduced: every invariant held"], False)


def replay_events_file(saved: SavedFile, *, target: str | None, assignor: str | None,
                       timeout: float | None = None, drawn: bool = False,
                       settings: Settings = NO_SETTINGS,
                       progress: ProgressFn = silent) -> Replayed:
    """The file's events on a fresh group of ``target`` (else the file's), judged under
    the target's promises; with ``drawn`` the ownership timeline too. ``progress`` hears
    of every event (a story of real clients takes seconds an event)."""
    name = target or saved.target
    if not name:
        raise EngineInputError(f"cannot replay {saved.path}: it names no target; give --target")
    resolved_target = group_target(name, assignor or saved.assignor, timeout,
                                   story_settings(settings, [saved]))
    assert resolved_target.group is not None
    promises = (machine_config(resolved_target).promises
                if resolved_target.hints is not None and not drawn else None)
    meter = Meter(progress, "replay", name)
    try:
        outcome = replay_events(resolved_target.group(), saved.events, promises,
                                generations=resolved_target.hints is None
                                or resolved_target.hints.generations,
                                on_event=lambda i, _: meter.tick(
                                    i, note=f"of {len(saved.events)} events"),
                                wanted=_saved_one(saved))
    finally:
        resolved_target.close()
    lines = [f"replaying {saved.path} ({len(saved.events)} events) on {name}"]
    if saved.data.get("note") and not drawn:
        lines.append(f"note: {saved.data['note']}")
    lines += outcome.story
    out = verdict(lines, saved, outcome.violations)
    if drawn:
        timeline = events_timeline(f"{saved.path} on {name}",
                                   saved.events[:len(outcome.views)], outcome.views,
                                   outcome.violations)
        out.page = html_page(f"groupcheck replay {saved.path}",
                             [svg(timeline), *delivery_pictures(outcome)],
                             "\n".join(outcome.story))
    return out


def delivery_pictures(outcome: Outcome) -> list[str]:
    """The delivery drawing of the story's last delivery log, when the target keeps one."""
    return [delivery_svg(outcome.delivery)] if outcome.delivery is not None else []


def _saved_one(saved: SavedFile) -> Callable[[list[str]], bool] | None:
    """What a replay of ``saved`` plays on to: the violation it recorded (any, when none)."""
    if not saved.recorded_violations:
        return None
    return lambda seen: reproduces(saved.recorded_violations, seen, saved.names) is not None


def shrink_events_file(saved: SavedFile, *, target: str | None, assignor: str | None,
                       invariant: str | None, seconds: float,
                       settings: Settings = NO_SETTINGS,
                       progress: ProgressFn = silent) -> tuple[ReplayFile, list[str]]:
    """The fewest events found that still break the invariant: the record and its story;
    ``progress`` hears of every try."""
    name = target or saved.target
    if not name:
        raise EngineInputError(f"{saved.path} names no target: give --target")
    factory = group_factory(name, assignor, settings)
    recorded = saved.data.get("violations")
    first = recorded[0] if isinstance(recorded, list) and recorded else ""
    wanted = invariant or invariant_of(str(first))
    started = time.perf_counter()
    meter = Meter(progress, "shrink", name, seconds)
    events, found = minimize(list(saved.events), factory, wanted, seconds=seconds,
                             on_replay=lambda tries, kept: meter.tick(
                                 tries, note=f"{kept} events kept"))
    if not found:
        raise EngineInputError(f"shrink: the events do not show {wanted or 'a violation'} "
                               f"on {name}")
    # an events file is a replay file: the shrunk one keeps its notes (not the shrink's time)
    record: ReplayFile = {**cast(ReplayFile, saved.data), "target": name,
                          "events": write_events(events), "violations": found,
                          "shrink": {"from": len(saved.events), "to": len(events)}}
    lines = [f"shrunk {wanted} on {name} from {len(saved.events)} to {len(events)} events "
             f"({time.perf_counter() - started:.1f}s)",
             "\n".join(replay_events(factory(), events).story)]
    return record, lines


def _request_target(saved: SavedFile, target: str | None, assignor: str | None,
                    timeout: float | None, settings: Settings) -> tuple[str, Target]:
    name = target or saved.target
    if not name:
        raise EngineInputError(f"cannot replay {saved.path}: it names no target; give --target")
    made = resolved(name, assignor or saved.assignor, timeout, settings)
    if made.assign is None:
        made.close()
        raise EngineInputError(f"{name} has no assign function to replay a request on")
    return name, made


def replay_requests_file(saved: SavedFile, *, target: str | None, assignor: str | None,
                         timeout: float | None = None,
                         settings: Settings = NO_SETTINGS) -> Replayed:
    """Each saved request on ``target`` (else the file's), each answer judged, until one
    shows the violation the file saved (or the target fails: ``ERROR``, ``TIMEOUT``)."""
    name, made = _request_target(saved, target, assignor, timeout, settings)
    lines: list[str] = []
    seen: list[str] = []
    try:
        for n, request in enumerate(saved.requests, 1):
            which = ("one assign request" if len(saved.requests) == 1
                     else f"request {n} of {len(saved.requests)}")
            lines.append(f"replaying {saved.path} ({which}, {len(request['members'])} "
                         f"members, {request.get('assignor')}) on {name}")
            response, found = replay_request(made, request)
            if response is not None:
                lines.append(answer_table(response))
            seen += found
            if reproduces(saved.recorded_violations, found, saved.names) is not None:
                break
    finally:
        made.close()
    return verdict(lines, saved, seen)


def _failing(made: Target, requests: list[AssignRequest], invariant: str | None
             ) -> tuple[AssignRequest, str] | None:
    """The first request whose answer breaks ``invariant`` (any, when None), and which."""
    for request in requests:
        _, found = replay_request(made, request)
        hits = [invariant_id(v) for v in found]
        if hits and (invariant is None or invariant in hits):
            return request, invariant or hits[0]
    return None


def _shrunk(made: Target, request: AssignRequest, invariant: str,
            deadline: float, meter: Meter) -> tuple[AssignRequest, int]:
    """Delta debugging: the smallest request found that still breaks ``invariant``."""
    def keeps(candidate: AssignRequest) -> bool:
        return invariant in {invariant_id(v) for v in replay_request(made, candidate)[1]}

    current, runs, improved = request, 0, True
    while improved and time.monotonic() < deadline:
        improved = False
        for candidate in smaller_requests(current):
            runs += 1
            meter.tick(runs, note=f"{len(current['members'])} members kept")
            if keeps(candidate):
                current, improved = candidate, True
                break
            if time.monotonic() >= deadline:
                break
    return current, runs


def shrink_requests_file(saved: SavedFile, *, target: str | None, assignor: str | None,
                         invariant: str | None, seconds: float, timeout: float | None = None,
                         settings: Settings = NO_SETTINGS, progress: ProgressFn = silent
                         ) -> tuple[RequestFile, list[str]]:
    """The first failing request of the file, made as small as it goes while the same
    invariant still breaks on the target: a request file, and the lines that tell it;
    ``progress`` hears of every try."""
    name, made = _request_target(saved, target, assignor, timeout, settings)
    wanted = invariant or saved.recorded_invariant
    try:
        failing = _failing(made, saved.requests, wanted)
        if failing is None:
            raise EngineInputError(f"shrink: {saved.path} does not fail on {name}: no "
                                   f"request shows {wanted or 'a violation'}")
        request, inv = failing
        started = time.monotonic()
        small, runs = _shrunk(made, request, inv, started + seconds,
                              Meter(progress, "shrink", name, seconds))
        response, found = replay_request(made, small)
    finally:
        made.close()
    before, after = len(request["members"]), len(small["members"])
    record: RequestFile = {**small, "groupcheck": {
        **saved.note, "target": name, "invariant": inv, "violation": found[0] if found else "",
        "shrink": {"from": before, "to": after, "runs": runs}}}
    lines = [f"shrunk {inv} on {name} from {before} to {after} member(s) "
             f"({runs} runs, {time.monotonic() - started:.1f}s)"]
    if response is not None:
        lines.append(answer_table(response))
    lines.append(found[0] if found else "")
    return record, lines
