"""A group as its coordinator holds it (`GroupDescription`, its `MemberDescription`s), read
from the broker's state on the broker's own loop (`describe`): what DescribeGroups answers."""

from __future__ import annotations

from dataclasses import dataclass

from .server import BrokerCore

__all__ = ["GroupDescription", "MemberDescription", "describe"]


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    client_id: str
    instance_id: str | None
    metadata: bytes | None
    assignment: bytes | None


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    state: str
    generation: int
    protocol_type: str | None
    protocol_name: str | None
    leader: str | None
    members: tuple[MemberDescription, ...]


def describe(core: BrokerCore, group: str) -> GroupDescription | None:
    """``group`` as ``core``'s coordinator holds it (None: a group it never coordinated)."""
    coordinator = core.cluster.groups.get(group)
    if coordinator is None:
        return None
    clients = core.cluster.groups.client_ids
    members = tuple(MemberDescription(m, clients.get((group, m), ""), v.instance_id,
                                      v.metadata, v.assignment)
                    for m, v in coordinator.members.items())
    return GroupDescription(group, coordinator.state.value, coordinator.generation_id,
                            coordinator.protocol_type, coordinator.protocol_name,
                            coordinator.leader_id, members)
