"""How the scope prover reads one answer: against a frame of subscriptions and metadata,
once per leader run.

A *frame* (`ConfigFrame`) is what every round of one configuration is judged against: the
subscriptions, the metadata and how many partitions the subscribed topics hold; it is kept
per (metadata, subscriptions). A *reading* (`Reading`) reads an assignment once: whether it
is valid and exclusive (I1, I2's validity half), how much it holds and its sizes. A keyed
session's answers share one assignment per leader run, so `read` keeps one reading per run
and frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import assignment as A
from ..jsonl_shapes import AssignRequest
from .space import Config, TopicPartition

__all__ = ["ConfigFrame", "Reading", "frame_of", "missing", "read"]


class Reading:
    """One assignment read once against the round's subscriptions and metadata: whether it
    is valid and exclusive (I1, I2's validity half), how much it holds, and its sizes. The
    predicates of ``assignment`` run only where this quick reading finds a fault, so their
    messages stay the reference, and a clean reading is exactly their empty answer."""

    def __init__(self, assignment: Mapping[str, list[TopicPartition]],
                 subs: Mapping[str, set[str]], partitions: Mapping[str, int]) -> None:
        held: set[TopicPartition] = set()
        clean = True
        for member, parts in assignment.items():
            topics = subs.get(member, ())
            for tp in parts:
                if tp in held or tp[0] not in topics or not 0 <= tp[1] < partitions.get(
                        tp[0], 0):
                    clean = False
                held.add(tp)
        self.clean = clean
        self.held = held
        self.sizes = [len(parts) for parts in assignment.values()]
        self.sizes += [0] * sum(1 for m in subs if m not in assignment)

    def exclusive_and_valid(self, assignment: Mapping[str, list[TopicPartition]],
                            subs: Mapping[str, list[str]],
                            partitions: Mapping[str, int]) -> list[str]:
        if self.clean:
            return []
        return A.exclusive_ownership(assignment) + A.valid_targets(assignment, subs, partitions)

    def complete(self, assignment: Mapping[str, list[TopicPartition]],
                 subs: Mapping[str, list[str]], partitions: Mapping[str, int],
                 wanted: int) -> list[str]:
        if self.clean and len(self.held) == wanted:
            return []
        return A.complete(assignment, subs, partitions)

    def balanced(self, assignment: Mapping[str, list[TopicPartition]],
                 subs: Mapping[str, list[str]], partitions: Mapping[str, int]) -> list[str]:
        if not self.sizes or max(self.sizes) - min(self.sizes) <= 1:
            return []
        return A.balanced(assignment, subs, partitions)

    def missing(self, wanted: int) -> bool:
        """Some partition of a subscribed topic is held by nobody (valid holders only
        count when the reading is clean; else the full scan decides)."""
        return len(self.held) < wanted if self.clean else True


def missing(assignment: Mapping[str, list[TopicPartition]], subs: Mapping[str, list[str]],
             partitions: Mapping[str, int], reading: Reading, wanted: int) -> bool:
    if reading.clean:
        return reading.missing(wanted)
    held = reading.held
    topics = {t for ts in subs.values() for t in ts if t in partitions}
    return any((t, p) not in held for t in topics for p in range(partitions[t]))


@dataclass(frozen=True)
class ConfigFrame:
    """What every round of one configuration is judged against: subscriptions (lists and
    sets), the metadata and how many partitions the subscribed topics hold."""

    subs: dict[str, list[str]]
    sets: dict[str, set[str]]
    partitions: dict[str, int]
    wanted: int


_FRAMES: dict[Any, ConfigFrame] = {}


def frame_of(config: Config, request: AssignRequest) -> ConfigFrame:
    key = (config.metadata, tuple(m[0] for m in config.members))
    frame = _FRAMES.get(key)
    if frame is None:
        if len(_FRAMES) > 50_000:
            _FRAMES.clear()
        subs = {m: list(v["topics"]) for m, v in request["members"].items()}
        sets = {m: set(ts) for m, ts in subs.items()}
        partitions: dict[str, int] = dict(request["partitions"])
        wanted = sum(partitions[t] for t in set().union(*sets.values()) if t in partitions)
        frame = _FRAMES[key] = ConfigFrame(subs, sets, partitions, wanted)
    return frame


_READINGS: dict[tuple[int, int], tuple[Any, ConfigFrame, Reading]] = {}


def read(response: Any, assignment: Mapping[str, list[TopicPartition]],
         frame: ConfigFrame) -> Reading:
    """The reading of an answer, kept per leader run (``led``) of a keyed session, whose
    answers share one assignment: each entry holds the run and the frame it names, so their
    ids stand for them as long as it lives."""
    led = getattr(response, "led", None)
    if led is None:
        return Reading(assignment, frame.sets, frame.partitions)
    key = (id(led), id(frame))
    hit = _READINGS.get(key)
    if hit is not None:
        return hit[2]
    if len(_READINGS) > 50_000:
        _READINGS.clear()
    reading = Reading(assignment, frame.sets, frame.partitions)
    _READINGS[key] = (led, frame, reading)
    return reading
