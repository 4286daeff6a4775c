"""``groupcheck upgrade``'s engine: a rolling upgrade played on the wire and judged at every
step, a failure shrunk and saved, and the certification table's rows.

Theory of operation. Each path of an upgrade (`plan.plans_for`) is checked first:
every release it names must start (its member driver's ``hello``; a release that cannot be
installed here is `UpgradeUnavailable`) and must have every assignor its bounces ask of it
(else the path is "not supported by the release", judged by the release's own account of
itself, never an error of the harness). The story (`plan.story`) then runs on a
fresh group of groupcheck's broker through the model (`model.replay.replay_events`): I1 and
I5 at every moment, I6 on every claim, I10 on every member's bytes, records only from
owned, unpaused partitions, and after every restart the group settles within I11's bound.
Each event is timed, so each bounce has its rebalances and seconds. A violation — or a
client that refuses to start with the configuration the bounce gives it, or a member the
coordinator refuses for good (INCONSISTENT_GROUP_PROTOCOL: the step ends at once, naming it) —
fails the path: the story is shrunk (fewer members, fewer faults, the same cause; `shrink`,
within a budget) and saved as a replay file that names both releases, the path and the bounce.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from ...model.event_shrink import invariant_of
from ...model.event_types import DomainEvent, Join
from ...model.events import write_events
from ...model.group_events import Settle
from ...model.replay import FORMAT, replay_events
from ...model.stats import Stats
from ...properties.delivery import DeliveryVerdict
from ...properties.group import GroupView
from ...properties.saved_json import save_as
from ...targets.registry import client_setup, resolve
from ...targets.settings import Settings
from ...targets.target import Target, TargetError
from ...targets.wire.clients import ClientInfo, ClientUnavailable, hello
from ..delivery_line import DeliveryJson, delivery_json
from ..progress import Meter, ProgressFn, silent
from .plan import Plan, Side, story
from .shrink import cause_of, shrink_upgrade

__all__ = ["UNSUPPORTED", "VERDICTS", "BounceStats", "UpgradeOutcome", "UpgradeUnavailable",
           "distinct", "play"]

UNSUPPORTED = "not supported by the release"
#: the verdicts of one path
VERDICTS = ("certified", "fails", UNSUPPORTED, "unavailable")


class UpgradeUnavailable(RuntimeError):
    """A release named by an upgrade cannot run here (not installable, no runtime)."""


@dataclass(frozen=True)
class BounceStats:
    """One bounce: every member restarted once on ``side``."""

    bounce: int
    side: str
    rebalances: int
    seconds: float
    slowest_settle: float


class ReleaseSaid(TypedDict):
    """What a release said it is when asked (its driver's ``hello``)."""

    client: str
    version: str
    profile: str


class BrokeAt(TypedDict):
    """Where a path broke: the bounce, the event (from 1), the release running then, the
    member the event names (else the last one restarted) and how many were restarted."""

    bounce: int
    event: int
    release: str
    member: str | None
    restarted: int


class BounceJson(TypedDict):
    bounce: int
    side: str
    rebalances: int
    seconds: float
    slowest_settle: float


#: one row of ``upgrade --json`` and of the certification table's JSON file
UpgradeRow = TypedDict("UpgradeRow", {
    "client": str, "from": str, "to": str, "path": str, "primary": bool, "verdict": str,
    "reason": str, "members": int, "clients": dict[str, ReleaseSaid],
    "bounces": list[BounceJson], "violations": list[str], "broke_at": BrokeAt | None,
    "replay": str | None, "seconds": float, "delivery": DeliveryJson | None})


@dataclass
class UpgradeOutcome:
    """One path played: its verdict, why, each bounce's figures and the finding file."""

    plan: Plan
    verdict: str
    reason: str = ""
    members: int = 0
    bounces: list[BounceStats] = field(default_factory=list)
    clients: dict[str, ReleaseSaid] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)
    story: list[str] = field(default_factory=list)
    broke_at: BrokeAt | None = None
    replay: str | None = None
    seconds: float = 0.0
    #: the story's delivery verdict (I17; none where the target keeps no delivery log) and
    #: the commit styles its members took
    delivery: list[DeliveryVerdict] = field(default_factory=list)
    commit_styles: dict[str, None] = field(default_factory=dict)

    def to_json(self) -> UpgradeRow:
        p = self.plan
        return {"client": client_family(p.source.client, p.dest.client),
                "from": p.source.target, "to": p.dest.target, "path": p.path,
                "primary": p.primary, "verdict": self.verdict, "reason": self.reason,
                "members": self.members, "clients": self.clients,
                "bounces": [_bounce_json(b) for b in self.bounces],
                "violations": self.violations,
                "broke_at": self.broke_at, "replay": self.replay,
                "seconds": round(self.seconds, 1),
                "delivery": delivery_json(self.delivery, self.commit_styles)}


def _bounce_json(b: BounceStats) -> BounceJson:
    return {"bounce": b.bounce, "side": b.side, "rebalances": b.rebalances,
            "seconds": b.seconds, "slowest_settle": b.slowest_settle}


def client_family(*clients: str) -> str:
    """``java@3.4.0`` and ``java@4.0.0-SNAPSHOT`` → ``java``; two families → ``a → b``."""
    names = list(dict.fromkeys(c.partition("@")[0] for c in clients))
    return " → ".join(names)


def _check_side(side: Side, settings: Settings) -> tuple[ClientInfo, list[str]]:
    """The release's account of itself, and the assignors of ``side`` it lacks;
    `UpgradeUnavailable` (one line) when it cannot start here."""
    try:
        classpath, _ = client_setup(side.client, settings)
        info = hello(side.client, classpath)
    except (ClientUnavailable, TargetError) as exc:
        raise UpgradeUnavailable(str(exc).splitlines()[0]) from None
    return info, [a for a in side.assignors if a not in info.assignors]


def _checked(plan: Plan, settings: Settings) -> tuple[dict[str, ReleaseSaid], str]:
    """Each release's client, version and profile; why the path is not supported ('')."""
    clients: dict[str, ReleaseSaid] = {}
    for side in (plan.source, *plan.bounces):
        info, lacking = _check_side(side, settings)
        clients[side.client] = {"client": info.client, "version": info.version,
                                "profile": info.profile}
        if lacking:
            return clients, (f"{side.client} ({info.client} {info.version}) has no "
                             f"{', '.join(lacking)} (it has {', '.join(info.assignors)})")
    return clients, ""


class _Clock:
    """Each event's end time and the group's generation then."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.ends: list[float] = []
        self.generations: list[int] = []

    def __call__(self, _number: int, view: GroupView | None) -> None:
        self.ends.append(time.monotonic())
        last = self.generations[-1] if self.generations else 0
        self.generations.append(view.generation if view is not None else last)

    def bounces(self, events: list[DomainEvent], plan: Plan) -> list[BounceStats]:
        out = []
        for bounce in range(len(plan.bounces) + 1):
            ran = [i for i, e in enumerate(events[:len(self.ends)]) if e.bounce == bounce]
            if not ran:
                continue
            first, last = ran[0], ran[-1]
            began = self.ends[first - 1] if first else self.start
            before = self.generations[first - 1] if first else 0
            settles = [self.ends[i] - (self.ends[i - 1] if i else self.start)
                       for i in ran if isinstance(events[i], Settle)]
            side = plan.source if bounce == 0 else plan.bounces[bounce - 1]
            out.append(BounceStats(bounce, side.label(), self.generations[last] - before,
                                   round(self.ends[last] - began, 2),
                                   round(max(settles, default=0.0), 2)))
        return out


def _where(events: list[DomainEvent], number: int, plan: Plan) -> BrokeAt:
    """The bounce, member and release at event ``number`` (from 1)."""
    event = events[number - 1]
    bounce = event.bounce or 0
    side = plan.source if bounce == 0 else plan.bounces[bounce - 1]
    restarted = [e.member for e in events[:number] if isinstance(e, Join) and e.bounce == bounce]
    return {"bounce": bounce, "event": number, "release": side.label(),
            "member": event.who or (restarted[-1] if restarted else None),
            "restarted": len(restarted) if bounce else 0}


def play(plan: Plan, settings: Settings, *, members: int = 4, seed: int = 0,
         faults: float = 0.3, shrink_seconds: float = 240.0,
         failures: Path | None = None, progress: ProgressFn = silent) -> UpgradeOutcome:
    """Play one path of an upgrade (see the module docstring); ``progress`` hears of every
    event played."""
    began = time.monotonic()
    clients, lacking = _checked(plan, settings)
    if lacking:
        return UpgradeOutcome(plan, UNSUPPORTED, lacking, members,
                              clients=clients)
    try:
        target = resolve(plan.source.target, settings=settings)
    except TargetError as exc:
        raise UpgradeUnavailable(str(exc).splitlines()[0]) from None
    events = story(plan, members, seed, faults)
    clock = _Clock()
    meter = Meter(progress, "upgrade",
                  f"{plan.source.label()} → {plan.dest.label()} ({plan.path})")

    def played(number: int, view: GroupView | None) -> None:
        clock(number, view)
        meter.tick(number, note=f"of {len(events)} events, {members} members, seed {seed}")

    stats = Stats()
    outcome = replay_events(_group(target), events, on_event=played, stats=stats)
    result = UpgradeOutcome(plan, "certified", "", members, clock.bounces(events, plan),
                            clients, outcome.violations, outcome.story,
                            delivery=stats.delivery, commit_styles=stats.commit_styles)
    if outcome.violations:
        result.verdict = "fails"
        broke_at = result.broke_at = _where(events, outcome.events_run, plan)
        said = _last_said(outcome.story)
        result.reason = (f"bounce {broke_at['bounce']}: {outcome.violations[0]}"
                         + (f" ({said})" if said and said.split(": ", 1)[-1]
                            not in outcome.violations[0] else ""))
        meter.tick(outcome.events_run, 1, f"fails at bounce {broke_at['bounce']}; "
                                          f"shrinking (up to {shrink_seconds:.0f}s)")
        kept, violations = _shrunk(events[:outcome.events_run], target, outcome.violations,
                                   outcome.story, shrink_seconds, broke_at["member"])
        if failures is not None:
            result.replay = str(save_upgrade(failures, plan, kept, violations, seed, result))
    result.seconds = time.monotonic() - began
    return result


def _last_said(story: list[str]) -> str:
    """What a client or the group reported last in the story (``who: text``), '' for
    nothing: the client's own words for why a step broke."""
    said = [line.strip()[2:] for line in story if line.strip().startswith("! ")]
    return said[-1] if said else ""


def distinct(lines: list[str]) -> list[str]:
    """``lines`` with each run of one repeated line kept once."""
    return [line for i, line in enumerate(lines) if i == 0 or lines[i - 1] != line]


def _group(target: Target) -> Any:
    assert target.group is not None
    return target.group()


def _shrunk(events: list[DomainEvent], target: Target, violations: list[str],
            story: list[str], seconds: float, member: str | None
            ) -> tuple[list[DomainEvent], list[str]]:
    """Fewer members (``member``, where it broke, stays) and fewer faults, as long as the
    failure keeps its cause (`shrink`)."""
    if not invariant_of(violations[0]) or seconds <= 0:
        return events, violations
    return shrink_upgrade(events, lambda: _group(target), violations,
                          cause_of(violations, story), seconds, keep=member)


def save_upgrade(folder: Path, plan: Plan, events: list[DomainEvent], violations: list[str],
                 seed: int, outcome: UpgradeOutcome) -> Path:
    """A replay file for ``groupcheck replay``: its target is the upgrade's first release
    (every join names its own client), its name both releases, the path and the bounce."""
    where = outcome.broke_at
    invariant = invariant_of(violations[0]) if violations else "none"
    body = {"format": FORMAT, "target": plan.source.target, "seed": seed,
            "invariant": invariant or "none", "violations": violations,
            "events": write_events(events),
            "upgrade": {"from": plan.source.target, "to": plan.dest.target, "path": plan.path,
                        "bounce": where["bounce"] if where else None,
                        "member": where["member"] if where else None,
                        "release": where["release"] if where else None,
                        "clients": outcome.clients}}
    meaning = {"from": plan.source.target, "to": plan.dest.target, "path": plan.path,
               "bounce": where["bounce"] if where else None,
               "invariant": invariant or "none", "events": body["events"]}

    def stem(side: Side) -> str:
        return re.sub(r"[^A-Za-z0-9.-]+", "_", f"{side.client}-{'+'.join(side.assignors)}")

    path_name = plan.path.replace(" ", "-")
    name = (f"upgrade-{stem(plan.source)}-to-{stem(plan.dest)}-{path_name}-"
            f"bounce{where['bounce'] if where else 0}-{invariant or 'none'}")
    return save_as(folder, name, body, meaning)
