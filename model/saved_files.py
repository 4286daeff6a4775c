"""Every file groupcheck saves, read by one reader: what a command may play.

groupcheck writes three kinds of playable file, in several shapes:

* **events** — a state-machine replay file (``groupcheck-replay/1``): the events of one
  story of the state machine (`fuzz`, ``check``'s fuzz engine, BMC traces), played on a
  group target.
* **story** — an audit story: a bare spec (``groupcheck-audit-spec/1``, or a spec of kind
  ``random`` without its format tag), the same spec wrapped as ``{"spec": …}``, or an audit
  counterexample (``groupcheck-audit-chain/1``: the spec with the requests it produced).
* **requests** — assign requests: one request (the prover's, the golden vectors', ``diff``'s
  and ``findings/`` files: the request at the top level, groupcheck's notes under
  ``"groupcheck"``), or a chain of them (``{"requests": [...]}``).

`read` (a path) and `classify` (parsed JSON) give a `SavedFile` whatever the shape; each
command takes the kinds it can play and says which command plays the others. A file says
what it saved as broken (`SavedFile.recorded_violations`) and which members and topics it
knows (`SavedFile.names`): a replay reproduces it only by the same violation
(`reproduced.reproduces`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from ..properties.jsonl_shapes import AssignRequest, JSONObject
from .events import DomainEvent, EventFormatError, read_events
from .replay import FORMAT as REPLAY_FORMAT
from .reproduced import Names
from .story_shapes import CHANGE_OPS, StorySpec

__all__ = ["CHAIN_FORMAT", "KINDS", "REPLAY_FORMAT", "SPEC_FORMAT", "SavedFile",
           "SavedFileError", "classify", "read", "read_text"]

SPEC_FORMAT = "groupcheck-audit-spec/1"
CHAIN_FORMAT = "groupcheck-audit-chain/1"
KINDS = ("events", "story", "requests")


class SavedFileError(ValueError):
    """A file that is no playable groupcheck file, or cannot be read: one line."""


@dataclass(frozen=True)
class SavedFile:
    """One playable file. ``data``: the whole JSON object (its notes: target, assignor,
    invariant, …); ``events``, ``spec`` or ``requests``: what is played, by ``kind``; a
    counterexample of the audit has both its ``spec`` and the ``requests`` it produced."""

    path: str
    kind: str
    data: JSONObject
    events: list[DomainEvent] = field(default_factory=list)
    spec: StorySpec | None = None
    requests: list[AssignRequest] = field(default_factory=list)

    @property
    def note(self) -> JSONObject:
        """groupcheck's notes on a request file (``"groupcheck"``), else {}."""
        found = self.data.get("groupcheck")
        return found if isinstance(found, dict) else {}

    @property
    def target(self) -> str | None:
        """The target the file was saved from, if it says."""
        name = self.data.get("target") or self.note.get("target")
        targets = self.note.get("targets")
        if not name and isinstance(targets, list) and targets:
            name = targets[0]
        return name if isinstance(name, str) and name else None

    @property
    def assignor(self) -> str | None:
        """The assignor the file names (its own, or its first request's)."""
        named = self.data.get("assignor")
        if not isinstance(named, str) and self.requests:
            named = self.requests[0].get("assignor")
        return named if isinstance(named, str) else None

    @property
    def recorded_violations(self) -> list[str]:
        """What the file saved as broken: its violations, else the one a request file's
        notes name, else its bare invariant id ([] for a file that records none); then, as
        bare ids, the invariants its ``reproduces`` field also counts."""
        found = self.data.get("violations") if self.kind != "requests" \
            else self.note.get("violations")
        text = self.note.get("violation")
        inv = self.recorded_invariant
        if isinstance(found, list) and found:
            out = [str(v) for v in found]
        elif isinstance(text, str) and text:
            out = [text]
        else:
            out = [inv] if inv else []
        also = self.data.get("reproduces")
        return out + ([str(i) for i in also] if out and isinstance(also, list) else [])

    @property
    def names(self) -> Names:
        """The members and topics the file knows (what a violation's subject is made of,
        `reproduced.subject_of`)."""
        members: set[str] = set()
        topics: set[str] = set()
        raw = self.data.get("events") if self.kind == "events" else None
        for event in raw if isinstance(raw, list) else ():  # as saved: plain JSON
            if isinstance(event, dict):
                named = event.get("topics")
                members.add(str(event.get("member", "")))
                topics.update(str(t) for t in (named if isinstance(named, list) else ()))
                topics.add(str(event.get("topic", "")))
        if self.spec:
            members.update(str(m.get("id", "")) for m in self.spec.get("members") or ())
            topics.update(str(t) for t in self.spec.get("partitions") or {})
        for request in self.requests:
            members.update(str(m) for m in request.get("members") or ())
            topics.update(str(t) for t in request.get("partitions") or ())
        return Names(frozenset(members - {""}), frozenset(topics - {""}))

    @property
    def recorded_invariant(self) -> str | None:
        """The invariant an audit or state-machine counterexample records as broken."""
        inv = self.data.get("invariant")
        if self.kind == "requests":
            inv = self.note.get("invariant", inv)
        return inv if isinstance(inv, str) and inv != "none" else None


def _is_spec(data: JSONObject) -> bool:
    return data.get("format") == SPEC_FORMAT or (
        data.get("kind") == "random" and isinstance(data.get("members"), list))


def _request(body: Any, where: str) -> AssignRequest:
    """A request as a target takes it: without groupcheck's notes, ``op`` set. One with no
    member is refused: a rebalance always has its leader, so no group asks it."""
    if not body["members"]:
        raise SavedFileError(f"{where}: a request with no member is no rebalance (a group "
                             "always has its leader), so no group sends it")
    request = cast(AssignRequest, {k: v for k, v in body.items() if k != "groupcheck"})
    request.setdefault("op", "assign")
    return request  # its fields are the target's to check: a request is what a client sends


def _story(spec: JSONObject, where: str) -> StorySpec:
    """A story: each change of its steps must be of a kind stories have (its fields are
    read as the story plays)."""
    steps = spec.get("steps") or []
    changes = [c for step in steps if isinstance(step, list) for c in step] \
        if isinstance(steps, list) else [steps]
    for change in changes:
        op = change.get("op") if isinstance(change, dict) else None
        if op not in CHANGE_OPS:
            raise SavedFileError(f"{where}: a story's change must be one of "
                                 f"{', '.join(CHANGE_OPS)}, not {op!r}")
    return cast(StorySpec, spec)


def _requests(items: Any, where: str) -> list[AssignRequest]:
    if not isinstance(items, list) or not all(
            isinstance(r, dict) and isinstance(r.get("members"), dict) for r in items):
        raise SavedFileError(f"{where}: a request of its chain has no members object")
    return [_request(r, where) for r in items]


def classify(data: Any, where: str) -> SavedFile:
    """What the parsed JSON ``data`` of ``where`` holds (`SavedFileError` when it is none of
    groupcheck's playable files)."""
    if not isinstance(data, dict):
        raise SavedFileError(f"{where} must hold one JSON object")
    fmt = data.get("format")
    if fmt == REPLAY_FORMAT:
        if not isinstance(data.get("events"), list):
            raise SavedFileError(f"{where} is a replay file ({REPLAY_FORMAT}) without events")
        try:
            events = read_events(data["events"])
        except EventFormatError as exc:
            raise SavedFileError(f"{where}: {exc}") from None
        return SavedFile(where, "events", data, events=events)
    if _is_spec(data):
        return SavedFile(where, "story", data, spec=_story(data, where))
    if isinstance(data.get("spec"), dict):  # a chain record, or a wrapped spec
        requests = _requests(data["requests"], where) if "requests" in data else []
        return SavedFile(where, "story", data, spec=_story(data["spec"], where),
                         requests=requests)
    if "requests" in data:
        return SavedFile(where, "requests", data, requests=_requests(data["requests"], where))
    if isinstance(data.get("members"), dict):
        return SavedFile(where, "requests", data, requests=[_request(data, where)])
    raise SavedFileError(
        f"{where} is neither an audit story ({SPEC_FORMAT}, a spec, or a counterexample "
        f"{CHAIN_FORMAT}), a request chain, an assign request nor a state-machine replay "
        f"file ({REPLAY_FORMAT})")


def read_text(text: str, where: str) -> SavedFile:
    """`classify` the JSON ``text`` of ``where``."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise SavedFileError(f"{where} is not JSON: {exc}") from None
    return classify(data, where)


def read(path: str | os.PathLike[str]) -> SavedFile:
    """The playable file at ``path`` (``-``: standard input is the caller's business)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise SavedFileError(f"cannot read {path}: {reason}") from None
    return read_text(text, str(path))
