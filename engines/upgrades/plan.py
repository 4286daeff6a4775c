"""What a rolling upgrade plays: its two ends, its path, and the seeded story of bounces.

An end (`Side`) is a wire target of one client at a release with an assignor list in
preference order (``wire:librdkafka@2.3.0:range``, ``wire:java@3.4.0:cooperative-sticky,range``).
The path follows KIP-429:

* **same protocol** — both lists are EAGER, or both COOPERATIVE, and they share an assignor:
  one rolling bounce moves every member to the new release and list;
* **two-bounce** — the protocol changes (or the lists share nothing): the first bounce moves
  every member to the new release with the new list followed by the old one's other assignors
  (``[cooperative-sticky, range]`` on the way up, ``[range, cooperative-sticky]`` on the way
  down), so the group always has an assignor in common; the second moves them to the new list;
* **one-bounce** — the shortcut users try: straight to the new list in one bounce. Where the
  path is two-bounce it is played too, as a second verdict; it may fail by design.

A list is COOPERATIVE when every assignor in it is (Kafka's consumer falls back to EAGER as
soon as one assignor does not support COOPERATIVE, KIP-429). `story` draws, from a seed, the
events of one play: the group forms and consumes, then each member in turn leaves or crashes
and starts again on the bounce's release and list (its members commit in turn by `STYLES`,
each keeping its style across restarts), and between restarts the state machine's faults may
come — an error or a late answer aimed at one member, a stall, a topic that grows.
A stall here is shorter than ``max.poll.interval.ms`` (the member wakes before the group
expels it): past it every client's stalled member owns its partitions until it polls again,
which is what ``wire:…:adversarial`` targets judge, not an upgrade.
Every event carries the bounce it belongs to (0: the group forming).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...model.event_types import Crash, DomainEvent, Join, Leave, Stall, Wake
from ...model.group_events import CoordinatorError, Delay, Partitions, Produce, Settle
from ...model.machine_rules import DELAYS, ERRORS
from ...targets.registry import wire_clients
from ...targets.wire.round_records import COOPERATIVE_PROTOCOLS
from ..errors import EngineInputError

__all__ = ["PATHS", "Plan", "Side", "parse_side", "plans_for", "protocol", "story"]

PATHS = ("same protocol", "two-bounce", "one-bounce")
#: how a member leaves before it restarts
EXITS = {"leave": Leave, "crash": Crash}


@dataclass(frozen=True)
class Side:
    """One end of an upgrade: a client (at a release) and its assignor list."""

    client: str
    assignors: tuple[str, ...]

    @property
    def target(self) -> str:
        return f"wire:{self.client}:{','.join(self.assignors)}"

    @property
    def protocol(self) -> str:
        return protocol(self.assignors)

    def label(self) -> str:
        return f"{self.client} [{', '.join(self.assignors)}]"


@dataclass(frozen=True)
class Plan:
    """One path from ``source`` to ``dest``: the release and list of each bounce."""

    source: Side
    dest: Side
    path: str
    bounces: tuple[Side, ...]

    @property
    def primary(self) -> bool:
        """The path KIP-429 prescribes (the one-bounce shortcut of a two-bounce path is a
        second verdict)."""
        return self.path != "one-bounce"


def protocol(assignors: tuple[str, ...]) -> str:
    return "COOPERATIVE" if all(a in COOPERATIVE_PROTOCOLS for a in assignors) else "EAGER"


def parse_side(text: str) -> Side:
    """``wire:<client>[@<release>]:<assignor>[,<assignor>…]`` → a `Side`."""
    if not text.startswith("wire:"):
        raise EngineInputError(f"upgrade: {text!r} is not a wire target "
                               "(wire:<client>@<release>:<assignor>[,<assignor>…])")
    try:
        clients, assignor, adversarial = wire_clients(text[len("wire:"):])
    except ValueError as exc:
        raise EngineInputError(f"upgrade: {exc}") from None
    if len(clients) != 1 or adversarial or clients[0].startswith("cmd="):
        raise EngineInputError(f"upgrade: {text} must name one client (a mixed group is the "
                               "upgrade from one client to another)")
    assignors = tuple(a.strip() for a in assignor.split(","))
    if not all(assignors) or len(set(assignors)) != len(assignors):
        raise EngineInputError(f"upgrade: {text} has an empty or repeated assignor")
    return Side(clients[0], assignors)


def plans_for(source: Side, dest: Side) -> list[Plan]:
    """The paths to play: the prescribed one first, then the one-bounce shortcut where the
    prescribed path takes two bounces."""
    if source.protocol == dest.protocol and set(source.assignors) & set(dest.assignors):
        return [Plan(source, dest, "same protocol", (dest,))]
    bridge = dest.assignors + tuple(a for a in source.assignors if a not in dest.assignors)
    return [Plan(source, dest, "two-bounce", (Side(dest.client, bridge), dest)),
            Plan(source, dest, "one-bounce", (dest,))]


#: the commit styles members take in turn: every client offers both, and ``auto`` is every
#: client's default, so an upgrade is judged for delivery as fleets run (issue: delivery)
STYLES = ("auto", "sync")


def _join(member: str, side: Side, topics: tuple[str, ...], bounce: int,
          style: str) -> DomainEvent:
    return Join(member, topics, side.assignors, client=side.client, rolling=True,
                bounce=bounce, commit_style=style)


def _error(rng: random.Random, member: str, _partitions: dict[str, int]) -> list[DomainEvent]:
    api = rng.choice(sorted(ERRORS))
    return [CoordinatorError(member, api, rng.choice(ERRORS[api]))]


def _delay(rng: random.Random, member: str, _partitions: dict[str, int]) -> list[DomainEvent]:
    api = rng.choice(sorted(DELAYS))
    return [Delay(member, api, rng.choice(DELAYS[api]))]


def _stall(_rng: random.Random, member: str, _partitions: dict[str, int]) -> list[DomainEvent]:
    """Shorter than max.poll.interval.ms: the member stays in."""
    return [Stall(member), Wake(member)]


def _grow(rng: random.Random, _member: str, partitions: dict[str, int]) -> list[DomainEvent]:
    topic = rng.choice(sorted(partitions))
    partitions[topic] += 1
    return [Partitions(topic, partitions[topic])]


#: the faults a plan draws between restarts, in the order of the draw
FAULTS: dict[str, Callable[[random.Random, str, dict[str, int]], list[DomainEvent]]] = {
    "error": _error, "delay": _delay, "stall": _stall, "grow": _grow}


def _fault(rng: random.Random, members: list[str], partitions: dict[str, int],
           bounce: int) -> list[DomainEvent]:
    """One of the state machine's faults, aimed at one member where it has an aim."""
    member = rng.choice(members)
    events = FAULTS[rng.choice(tuple(FAULTS))](rng, member, partitions)
    return [replace(e, bounce=bounce, fault=True) for e in events] + \
        [Settle(bounce=bounce, fault=True)]


def _record(rng: random.Random, partitions: dict[str, int], bounce: int) -> DomainEvent:
    topic = rng.choice(sorted(partitions))
    return Produce(topic, rng.randrange(partitions[topic]), bounce=bounce)


def story(plan: Plan, members: int = 4, seed: int = 0, faults: float = 0.3) -> list[DomainEvent]:
    """The events of one play of ``plan``: ``members`` members on topics with two
    partitions each per member in all, every member bounced once per bounce (leaving or
    crashing, drawn from ``seed``), and after a restart a fault with probability
    ``faults``."""
    rng = random.Random(f"{seed}:{plan.source.target}>{plan.dest.target}:{plan.path}")
    names = [f"m{i}" for i in range(1, members + 1)]
    partitions = {"t0": members, "t1": members}
    topics = tuple(sorted(partitions))
    events: list[DomainEvent] = [Partitions(t, n, bounce=0) for t, n in partitions.items()]
    styles = {m: STYLES[i % len(STYLES)] for i, m in enumerate(names)}
    events += [_join(m, plan.source, topics, 0, styles[m]) for m in names]
    events += [Settle(bounce=0), _record(rng, partitions, 0)]
    for bounce, side in enumerate(plan.bounces, 1):
        for member in names:
            exit_op = rng.choice(("leave", "crash"))
            events += [EXITS[exit_op](member, bounce=bounce),
                       _join(member, side, topics, bounce, styles[member]),
                       Settle(bounce=bounce),
                       _record(rng, partitions, bounce)]
            if rng.random() < faults:
                events += _fault(rng, names, partitions, bounce)
    return events
