"""Events as JSON: the registry of event kinds by ``op``, reading a replay file's objects
into typed events and writing them back.

A replay file holds each event as an object whose ``op`` names its kind, then the kind's
fields in their declared order, then an upgrade plan's notes (``bounce``, ``fault``). A field
that is None is left out, and one the file leaves out reads as None, so a file reads and
writes back to the same objects, key for key. Topics are lists of strings, partitions
lists of ``[topic, partition]`` pairs. Bad input — an unknown op, a field missing, unknown
or of the wrong type — is an `EventFormatError` of one line that names both.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import MISSING, Field, fields

from .event_types import (
    Crash,
    DomainEvent,
    Join,
    Leave,
    Pause,
    Rejoin,
    Resume,
    SlowRevoke,
    Stall,
    Subscribe,
    Unsubscribe,
    Wake,
)
from .group_events import (
    ConnectionClosed,
    CoordinatorError,
    CoordinatorMoved,
    Delay,
    DeleteTopic,
    Idle,
    Partitions,
    Poll,
    Produce,
    Settle,
    SyncAnswerOrder,
)
from .static_events import StaticDuplicate, StaticRestart

__all__ = ["EVENT_TYPES", "EventFormatError", "EventRecord", "read_event", "read_events",
           "write_event", "write_events"]

#: every kind of event, by the ``op`` a replay file names it with
EVENT_TYPES: dict[str, type[DomainEvent]] = {kind.op: kind for kind in (
    Join, Leave, Crash, Stall, Wake, Subscribe, Unsubscribe, Pause, Resume, Rejoin, SlowRevoke,
    Partitions, DeleteTopic, Produce, CoordinatorError, Delay, SyncAnswerOrder, Idle, Poll, Settle,
    StaticRestart, StaticDuplicate, ConnectionClosed, CoordinatorMoved)}
#: the notes an upgrade plan adds to any event, written after the kind's own fields
NOTES = ("bounce", "fault")

#: a field's value in a replay file
FieldValue = str | int | bool | list[str] | list[list[str | int]]
#: one event as a replay file holds it
EventRecord = dict[str, FieldValue]
FieldReader = Callable[[object], object]


class EventFormatError(ValueError):
    """An event a replay file cannot hold: one line, naming the op and the field."""


def _text(value: object) -> object:
    if not isinstance(value, str):
        raise TypeError("a string")
    return value


def _number(value: object) -> object:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("an integer")
    return value


def _flag(value: object) -> object:
    if not isinstance(value, bool):
        raise TypeError("true or false")
    return value


def _texts(value: object) -> object:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("a list of strings")
    return tuple(value)


def _pairs(value: object) -> object:
    if not isinstance(value, list) or not all(
            isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)
            and isinstance(v[1], int) and not isinstance(v[1], bool) for v in value):
        raise TypeError("a list of [topic, partition] pairs")
    return tuple((str(t), int(p)) for t, p in value)


#: how a field of each declared type is read (the declared type without its None)
READERS: dict[object, FieldReader] = {
    str: _text, int: _number, bool: _flag, tuple[str, ...]: _texts,
    tuple[tuple[str, int], ...]: _pairs}


@functools.cache
def _fields(kind: type[DomainEvent]) -> tuple[tuple[Field[object], FieldReader], ...]:
    """The kind's fields in the order a file writes them, each with its reader."""
    hints = typing.get_type_hints(kind)
    ordered = [f for f in fields(kind) if f.name not in NOTES] + \
        [f for f in fields(kind) if f.name in NOTES]
    return tuple((f, READERS[_without_none(hints[f.name])]) for f in ordered)


def _without_none(hint: object) -> object:
    if isinstance(hint, types.UnionType):
        return next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def read_event(raw: object) -> DomainEvent:
    """The typed event a replay file's JSON object stands for."""
    if not isinstance(raw, dict):
        raise EventFormatError(f"an event must be a JSON object, not {type(raw).__name__}")
    op = raw.get("op")
    kind = EVENT_TYPES.get(op) if isinstance(op, str) else None
    if kind is None:
        raise EventFormatError(f"unknown event op {op!r}; expected one of "
                               f"{', '.join(EVENT_TYPES)}")
    known = _fields(kind)
    unknown = [k for k in raw if k != "op" and k not in {f.name for f, _ in known}]
    if unknown:
        raise EventFormatError(f"{op} event: unknown field {unknown[0]!r}")
    values: dict[str, object] = {}
    for f, reader in known:
        if f.name not in raw:
            if f.default is MISSING:
                raise EventFormatError(f"{op} event: missing field {f.name!r}")
            continue
        try:
            values[f.name] = reader(raw[f.name])
        except TypeError as exc:
            raise EventFormatError(f"{op} event: field {f.name!r} must be {exc}, not "
                                   f"{raw[f.name]!r}"[:300]) from None
    make = typing.cast(Callable[..., DomainEvent], kind)  # the fields, each read by its type
    return make(**values)


def read_events(raw: object) -> list[DomainEvent]:
    """A replay file's ``events`` list, typed; an error names the event's number (from 1)."""
    if not isinstance(raw, list):
        raise EventFormatError("events must be a JSON list")
    out = []
    for number, item in enumerate(raw, 1):
        try:
            out.append(read_event(item))
        except EventFormatError as exc:
            raise EventFormatError(f"event {number}: {exc}") from None
    return out


def _plain(value: object) -> FieldValue:
    if isinstance(value, tuple):
        texts = [v for v in value if isinstance(v, str)]
        if len(texts) == len(value):
            return texts
        pairs: list[list[str | int]] = [[str(t), int(p)] for t, p in value]
        return pairs
    assert isinstance(value, (str, int, bool))
    return value


def write_event(event: DomainEvent) -> EventRecord:
    """The JSON object a replay file holds for ``event``."""
    out: EventRecord = {"op": event.op}
    for f, _ in _fields(type(event)):
        value = getattr(event, f.name)
        if value is not None:
            out[f.name] = _plain(value)
    return out


def write_events(events: Sequence[DomainEvent]) -> list[EventRecord]:
    return [write_event(e) for e in events]
