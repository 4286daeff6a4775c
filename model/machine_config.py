"""What the state machine may do to a group (`MachineConfig`), and the configurations for
a target's assignor: in process (every rule; a cooperative-sticky group also bounces along
the KIP-429 upgrade path) and on the wire (real clients: fewer, slower rules)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .promises import Promises


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
    slow_revokes: bool = False  # a revoke callback outlasts the rebalance (wire targets)
    initial_members: int = 0  # members that join (and settle) before the rules start
    promises: Promises = field(default_factory=Promises)
    group_forms: bool = True
    rejoins: bool = True




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


def wire_config(assignor: str, *, adversarial: bool = False) -> MachineConfig:
    """Real clients on a mock cluster (librdkafka): one strategy per group (mixed lists
    crash the mock), fixed topics, no unsubscribe; ``adversarial`` adds members that stop
    polling past ``max.poll.interval.ms`` — for good (a crash: librdkafka keeps heartbeating
    from its own thread, so this is how its process looks to the group) or until they wake —
    and revoke callbacks slower than the rebalance."""
    return MachineConfig(strategies=((assignor,),), profiles=("librdkafka",), max_members=3,
                         topics={"t0": 3, "t1": 2}, initial_members=2, crashes=adversarial,
                         stalls=adversarial, metadata=False, unsubscribes=False,
                         slow_revokes=adversarial, group_forms=False, rejoins=False)
