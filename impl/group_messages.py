"""The classic group protocol's requests and responses, as plain immutable values.

These are what travels between the sans-I/O consumer (`consumer`) and the sans-I/O group
coordinator (`coordinator`), over whatever network the caller provides. Field names follow
Kafka's JoinGroup v9 / SyncGroup v5 / Heartbeat v4 / LeaveGroup v5 schemas in snake_case.
A request is addressed from a *client* (a connection name chosen by the caller), so a new
member can be answered before it has a member id.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["NO_GENERATION", "UNKNOWN_MEMBER_ID", "Envelope", "Errors", "HeartbeatRequest",
           "HeartbeatResponse", "JoinGroupMember", "JoinGroupRequest", "JoinGroupResponse",
           "LeaveGroupRequest", "LeaveGroupResponse", "Request", "Response", "SyncGroupRequest",
           "SyncGroupResponse"]

UNKNOWN_MEMBER_ID = ""
NO_GENERATION = -1


class Errors(enum.Enum):
    """Kafka error codes the classic group protocol uses."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    MEMBER_ID_REQUIRED = 79
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16


@dataclass(frozen=True)
class JoinGroupMember:
    """One member's entry in the leader's JoinGroup response."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinGroupRequest:
    """``protocols`` lists (assignor name, subscription bytes) in the client's preference order."""

    member_id: str
    protocols: tuple[tuple[str, bytes], ...]
    group_instance_id: str | None = None
    session_timeout_ms: int = 45_000
    rebalance_timeout_ms: int = 300_000
    protocol_type: str = "consumer"
    client_id: str = "consumer"
    reason: str | None = None


@dataclass(frozen=True)
class JoinGroupResponse:
    error: Errors
    generation_id: int = NO_GENERATION
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = UNKNOWN_MEMBER_ID
    members: tuple[JoinGroupMember, ...] = ()
    skip_assignment: bool = False


@dataclass(frozen=True)
class SyncGroupRequest:
    """The leader sends every member's assignment; followers send none."""

    member_id: str
    generation_id: int
    group_instance_id: str | None = None
    protocol_name: str | None = None
    assignments: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class SyncGroupResponse:
    error: Errors
    assignment: bytes = b""
    protocol_name: str | None = None


@dataclass(frozen=True)
class HeartbeatRequest:
    member_id: str
    generation_id: int
    group_instance_id: str | None = None


@dataclass(frozen=True)
class HeartbeatResponse:
    error: Errors


@dataclass(frozen=True)
class LeaveGroupRequest:
    """Members leave by member id; an admin removes a static member by instance id."""

    members: tuple[tuple[str, str | None], ...]
    reason: str | None = None


@dataclass(frozen=True)
class LeaveGroupResponse:
    error: Errors
    member_errors: tuple[tuple[str, str | None, Errors], ...] = field(default=())


Request = JoinGroupRequest | SyncGroupRequest | HeartbeatRequest | LeaveGroupRequest
Response = JoinGroupResponse | SyncGroupResponse | HeartbeatResponse | LeaveGroupResponse


@dataclass(frozen=True)
class Envelope:
    """A message on the wire: ``client`` is the connection it belongs to; ``request_id``
    pairs a response with its request (responses to parked requests come later)."""

    client: str
    request_id: int
    message: Request | Response
