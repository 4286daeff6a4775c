"""Wire stories in a bisection: which saved files only a wire target can play, and the wire
target that plays one at a Kafka release.

A *wire story* is a state-machine replay file recorded on a wire target (its ``target`` is
``wire:…``, or ``librdkafka:…``, the old spelling of ``wire:librdkafka:…``) or holding an
event only a wire group performs (a late answer, a connection closed before its answer, a
moved coordinator, an ordered SyncGroup answer, a slow revoke callback, idle wall-clock
time). An assignor-level target (``java@3.0.0:``, ``builtin:…``)
plays a story's member events on its simulated coordinator and none of what happened on
the wire, so its verdict on a wire story would be a false ``absent``: the bisection says
``n/a`` instead (`cannot_play`). Over ``--versions``, each release ``java@V:`` becomes
``wire:java@V:<assignor>`` (each Java member of a mixed group at that release, the other
clients as recorded: they come from their registries or caches as wire targets fetch them),
`story_targets`. A wire target whose Java client names no release (``wire:java:range``)
is a *template*: ``matrix`` and ``bisect`` put it at each release of ``--versions``
(`at_release`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ...model.event_types import SlowRevoke
from ...model.group_events import ConnectionClosed, CoordinatorMoved, Delay, Idle, SyncAnswerOrder
from ...model.saved_files import SavedFile
from ...targets.registry import ADVERSARIAL, wire_clients
from ...targets.target import Target, TargetError

__all__ = ["WIRE_OPS", "at_release", "cannot_play", "is_wire_story", "is_wire_template",
           "on_wire", "recorded_wire", "story_targets"]

#: the events only a wire group performs
WIRE_OPS = frozenset({Delay.op, ConnectionClosed.op, CoordinatorMoved.op, SyncAnswerOrder.op,
                      SlowRevoke.op, Idle.op})
#: the wire target an old target kind names (``librdkafka:…`` is ``wire:librdkafka:…``)
OLD_WIRE_KINDS = {"librdkafka:": "wire:librdkafka:"}


def recorded_wire(saved: object) -> str | None:
    """The wire target (``wire:…``) a state-machine replay file was recorded on, else None."""
    if not isinstance(saved, SavedFile) or saved.kind != "events" or saved.target is None:
        return None
    name = saved.target
    for old, new in OLD_WIRE_KINDS.items():
        if name.startswith(old):
            name = new + name[len(old):]
    return name if name.startswith("wire:") else None


def is_wire_story(saved: object) -> bool:
    """A replay file only a wire target can play (see the module doc)."""
    if not isinstance(saved, SavedFile) or saved.kind != "events":
        return False
    return recorded_wire(saved) is not None or any(e.op in WIRE_OPS for e in saved.events)


def cannot_play(made: Target, saved: object) -> str:
    """Why ``made`` cannot play ``saved`` ('' when it can): a wire story needs a wire
    target."""
    if not is_wire_story(saved) or (made.hints is not None and made.hints.wire):
        return ""
    recorded = recorded_wire(saved)
    where = f"recorded on {recorded}" if recorded else "it holds events only a wire group performs"
    return f"an assignor-level target cannot play wire events ({where})"


def _java_release(target: str) -> str | None:
    """``java@V:`` (a release of the Maven repository) → ``V``; else None."""
    kind, sep, rest = target.partition(":")
    base, at, release = kind.partition("@")
    return release if sep and not rest and base == "java" and at and release else None


def _wire_target(clients: Sequence[str], assignor: str, adversarial: bool,
                 release: str, only_bare: bool) -> str:
    """``wire:…`` with each Java client at ``release`` (``only_bare``: those naming none)."""
    at = tuple(f"java@{release}" if c == "java" or (c.startswith("java@") and not only_bare)
               else c for c in clients)
    group = at[0] if len(at) == 1 else "mixed:" + "+".join(at)
    return f"wire:{group}:{assignor}{ADVERSARIAL if adversarial else ''}"


def _parsed(target: str) -> tuple[tuple[str, ...], str, bool] | None:
    if not target.startswith("wire:"):
        return None
    try:
        return wire_clients(target[len("wire:"):])
    except TargetError:
        return None


def is_wire_template(target: str) -> bool:
    """A wire target with a Java client that names no release (``wire:java:range``)."""
    parsed = _parsed(target)
    return parsed is not None and "java" in parsed[0]


def at_release(target: str, release: str) -> str:
    """The wire template ``target`` with its Java clients at ``release``
    (``wire:java:range``, ``3.4.0`` → ``wire:java@3.4.0:range``); others as they are."""
    parsed = _parsed(target)
    if parsed is None or "java" not in parsed[0]:
        return target
    return _wire_target(*parsed, release, only_bare=True)


def on_wire(target: str, saved: SavedFile, assignor: str | None = None) -> str | None:
    """The wire target that plays the wire story ``saved`` at the Java release ``target``
    names (``java@V:``), with ``assignor`` or the recorded one; None when ``target`` is no
    Java release, or the story has no Java member or no assignor."""
    release = _java_release(target)
    recorded = recorded_wire(saved) or ""
    try:
        clients, named, adversarial = (wire_clients(recorded[len("wire:"):]) if recorded
                                       else (("java",), saved.assignor or "", False))
    except TargetError:
        return None
    which = assignor or named
    java = [c for c in clients if c == "java" or c.startswith("java@")]
    if release is None or not java or not which:
        return None
    return _wire_target(clients, which, adversarial, release, only_bare=False)


def story_targets(saved: object, targets: Sequence[str], named: Collection[str],
                  assignor: str | None = None) -> list[str]:
    """The targets a counterexample is bisected over: ``targets`` as they are, but for a
    wire story each Java release not among ``named`` (``--versions``' releases) on the
    wire (`on_wire`); a release it cannot be moved to stays, and says n/a."""
    if not isinstance(saved, SavedFile) or not is_wire_story(saved):
        return list(targets)
    out = [t if t in named else (on_wire(t, saved, assignor) or t) for t in targets]
    return list(dict.fromkeys(out))

