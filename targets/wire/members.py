"""A wire group's members as the harness keeps them (`WireMember`), what a callback's end
in the merged log does to one (`apply_callback`), and the consumer settings a member starts
with (`member_config`: a static member's group instance id, refused on a client without; its
commit style, refused on a client whose driver does not offer it).

A member's ownership is exactly its recorded intervals: a partition is owned from the end of
the assign callback that gave it to the end of the revoke or lost callback that took it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ...properties.group import CallbackRecord, MemberSpec, MemberView, TopicPartition
from .clients import ClientInfo
from .driver_process import DriverProcess
from .drivers.messages import COMMIT_STYLES, DEFAULT_COMMIT_STYLE, DriverConfig
from .log import Entry

__all__ = ["AUTO_COMMIT_INTERVAL_MS", "CommitStyleRefused", "StaticMembershipRefused",
           "WireMember", "apply_callback", "member_config", "member_view", "offered_styles"]

AUTO_COMMIT_INTERVAL_MS = 500  # a member in commit style "auto"


class StaticMembershipRefused(ValueError):
    """A static member (a group instance id, KIP-345) on a client that has no such setting:
    refused before it starts, never played as a dynamic member."""


class CommitStyleRefused(ValueError):
    """A member whose commit style its client's driver does not offer: refused before it
    starts, never played in another style."""


def member_config(base: DriverConfig, client: ClientInfo, member: str,
                  spec: MemberSpec) -> DriverConfig:
    """``base`` with the member's client id, its commit style and, for a static member, its
    instance id."""
    config: DriverConfig = {**base, "client_id": member, **_commit_config(client, member, spec)}
    if spec.group_instance_id is None:
        return config
    if not client.static_membership:
        raise StaticMembershipRefused(
            f"wire: {member} is a static member (group instance id "
            f"{spec.group_instance_id!r}) but {client.name} {client.version} has no static "
            "membership (KIP-345)")
    config["group_instance_id"] = spec.group_instance_id
    return config


def offered_styles(clients: Iterable[ClientInfo]) -> tuple[str, ...]:
    """The commit styles every one of ``clients`` offers, in the contract's order."""
    offered = [set(c.commit_styles) for c in clients]
    return tuple(s for s in COMMIT_STYLES if all(s in styles for styles in offered))


def _commit_config(client: ClientInfo, member: str, spec: MemberSpec) -> DriverConfig:
    """The style's settings: auto-commit on, with its interval, exactly for ``auto``; none
    for ``none`` (a driver that does not know commit styles gets today's config)."""
    style = spec.commit_style
    if style == DEFAULT_COMMIT_STYLE:
        return {}
    if style not in client.commit_styles:
        raise CommitStyleRefused(
            f"wire: {member} commits in style {style!r} but {client.name} {client.version} "
            f"offers {', '.join(client.commit_styles)}")
    if style == "auto":
        return {"commit_style": style, "enable_auto_commit": True,
                "auto_commit_interval_ms": AUTO_COMMIT_INTERVAL_MS}
    return {"commit_style": style, "enable_auto_commit": False}


@dataclass
class WireMember:
    client: ClientInfo
    driver: DriverProcess
    source: int
    spec: MemberSpec
    subscription: frozenset[str]
    owned: set[TopicPartition] = field(default_factory=set)
    marks: set[TopicPartition] = field(default_factory=set)  # the app's pause marks
    member_id: str = ""
    generation: int = -1
    assigns: int = 0
    joined_owned: frozenset[TopicPartition] = frozenset()
    polling: bool = True
    cooperative: bool = False  # every assignor of its list is cooperative (KIP-429)
    #: per partition, the offset after the last record handed to it (its position as read)
    read: dict[TopicPartition, int] = field(default_factory=dict)


def apply_callback(m: WireMember, e: Entry) -> CallbackRecord:
    """The member after a callback's end entry; the callback as the model reads it."""
    before = tuple(sorted(m.owned))
    if e.kind == "assigned":
        m.owned |= set(e.partitions)
        m.assigns += 1
        m.joined_owned = frozenset(m.owned)
    else:
        m.owned -= set(e.partitions)
    m.member_id, m.generation = e.member_id, e.generation
    if e.paused is not None:  # the client says which partitions it holds paused
        m.marks = set(e.paused)
    return CallbackRecord(e.seq, e.member, e.kind, e.partitions, before, e.generation,
                          e.member_id, started=e.started)


def member_view(name: str, m: WireMember, listed: bool) -> MemberView:
    """The member as a view shows it (``listed``: in the coordinator's latest generation)."""
    return MemberView(name, m.member_id, m.generation, frozenset(m.owned),
                      frozenset(m.marks & m.owned), m.subscription,
                      "COOPERATIVE" if m.cooperative else "EAGER", m.client.profile, listed,
                      m.polling, 0, m.assigns, m.joined_owned)
