"""What the state machine may do to a group (`MachineConfig`), and the configurations for
a target's assignor: in process (every rule; a cooperative-sticky group also bounces along
the KIP-429 upgrade path) and on the wire (real clients: fewer, slower rules)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .promises import Promises

__all__ = ["ERRORS", "UPGRADE_PATH", "MachineConfig", "config_for", "wire_config"]

#: the errors an injected answer carries, per API, unless the engine hands the machine a
#: target's own table (`MachineConfig.fault_table`): the ones every target plays and the
#: model predicts (a fenced member, a rebalance to rejoin)
ERRORS: Mapping[str, tuple[str, ...]] = {
    "sync": ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS"),
    "heartbeat": ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS")}


@dataclass(frozen=True)
class MachineConfig:
    """What the machine may do. ``strategies``: assignor lists a joining member may use;
    ``upgrades``: lists a bouncing member may move to (KIP-429 rolling upgrade);
    ``promises``: what the target's assignors promise (balance contracts, stickiness);
    ``group_forms``: several members with one subscription join at once (large equal
    groups, where stickiness shows); ``rejoins``: the leader may ask for a rebalance
    (KIP-568), a rebalance with unchanged membership (I4a)."""

    strategies: tuple[tuple[str, ...], ...]
    upgrades: tuple[tuple[str, ...], ...] = ()
    profiles: tuple[str, ...] = ("kip",)
    user_data_versions: tuple[int, ...] = (1,)
    subscription_versions: tuple[int, ...] = (3,)
    topics: dict[str, int] = field(default_factory=lambda: {"t0": 3, "t1": 2, "t2": 6})
    max_members: int = 6
    faults: bool = True  # stalls, crashes and injected errors
    pauses: bool = True
    stalls: bool = True  # with faults: members stop polling and wake up later
    crashes: bool = True  # with faults
    metadata: bool = True  # topics grow and are deleted
    unsubscribes: bool = True
    subscriptions: bool = True  # members change their subscription
    slow_revokes: bool = False  # a revoke callback outlasts the rebalance (wire targets)
    delays: bool = False  # with faults: the coordinator answers one member late (wire)
    sync_orders: bool = False  # the leader's SyncGroup answer before or after a member's
    initial_members: int = 0  # members that join (and settle) before the rules start
    promises: Promises = field(default_factory=Promises)
    group_forms: bool = True
    rejoins: bool = True
    #: the members' client sends a generation with its claims (KIP-792, or in the
    #: cooperative user data); without one, claims are not judged for it (I6)
    generations: bool = True
    #: on a target that runs static members (KIP-345), joins may carry an instance id and
    #: static members restart and are started twice
    statics: bool = False
    #: with faults: the errors the coordinator may answer each API with (an API the target
    #: names, an error it can play); a table with no API injects none
    fault_table: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(ERRORS))
    #: the commit styles a joining member's application may take (the member-driver
    #: contract's: ``none``, ``auto``, ``sync``, ``async``, ``revoke``), those the target's
    #: clients all offer; with one style nothing is drawn
    commit_styles: tuple[str, ...] = ("none",)
    #: with faults: the coordinator may close a member's connection instead of answering
    #: (a backend that can: groupcheck's broker); binds `ConnectionRules`
    closes: bool = False
    #: with faults: the group's coordinator may move to another broker (a backend of two
    #: nodes or more: groupcheck's broker); binds `MoveRules`
    moves: bool = False


#: assignor lists a member may move between in a rolling upgrade (KIP-429): first to
#: [old, cooperative-sticky] (still EAGER), then to [cooperative-sticky]; and back down.
UPGRADE_PATH = (("range",), ("range", "cooperative-sticky"), ("cooperative-sticky",))


def config_for(assignor: str, *, profiles: tuple[str, ...] = ("kip", "java"),
               user_data_versions: tuple[int, ...] = (1,),
               promises: Promises | None = None) -> MachineConfig:
    """The machine for a group whose members use ``assignor``; a cooperative-sticky group
    also sees members bounce along the KIP-429 upgrade path (two bounces up, and down)."""
    if assignor == "cooperative-sticky":
        return MachineConfig(strategies=UPGRADE_PATH, upgrades=UPGRADE_PATH,
                             profiles=profiles, user_data_versions=user_data_versions,
                             promises=promises or Promises())
    return MachineConfig(strategies=((assignor,),), profiles=profiles,
                         user_data_versions=user_data_versions,
                         promises=promises or Promises())


def wire_config(assignor: str, *, adversarial: bool = False, steering: bool = False,
                profiles: tuple[str, ...] = ("librdkafka",)) -> MachineConfig:
    """Real clients on a real wire (member drivers, a backend cluster): one strategy per
    group, fixed topics (the mock cannot grow one), no unsubscribe (commits are not
    observed); a crash is real (no LeaveGroup, no heartbeat). ``adversarial`` adds members
    that stop polling past ``max.poll.interval.ms`` while their client keeps heartbeating,
    and revoke callbacks slower than the rebalance. ``steering`` (a backend that aims at one
    member: groupcheck's broker) adds late answers and ordered SyncGroup answers. Each
    member is judged by its own client's profile; ``profiles`` only labels the join
    events. Groups do not form at once and the leader asks for no rebalance (seconds per
    event on a real wire). Static members (KIP-345) join, restart and are started twice on a
    group whose clients all take a group instance id."""
    return MachineConfig(strategies=((assignor,),), profiles=profiles, max_members=3,
                         topics={"t0": 3, "t1": 2}, initial_members=2, crashes=True,
                         stalls=adversarial, metadata=False, unsubscribes=False,
                         slow_revokes=adversarial, delays=steering, sync_orders=steering,
                         group_forms=False, rejoins=False, statics=True)
