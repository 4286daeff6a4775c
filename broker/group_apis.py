"""The group APIs on the wire: kio's JoinGroup, SyncGroup, Heartbeat and LeaveGroup to and
from `impl`'s sans-I/O coordinator, and DescribeGroups and ListGroups read from it.

What lives here: `GroupHub` (one `GroupCoordinator` per group id, created on first use,
with the broker's settings) and the translations, each version-aware: a request of any
served version becomes an `impl.group_messages` request; a coordinator response becomes the
plain data of the version asked (`protocol.build` makes it a kio entity).

Theory of operation: the coordinator decides everything; this module only renames. Where
versions differ: JoinGroup v0 has no rebalance timeout (Kafka uses the session timeout);
JoinGroup below v4 predates KIP-394, so the broker lets such a member in on its first join
(`needs_member_id` tells the caller to rejoin it at once with the id the coordinator drew);
LeaveGroup below v3 names one member at top level (KIP-345 made it a list); the protocol
name is nullable only from JoinGroup v7 on, so older versions get "".
"""

from __future__ import annotations

import zlib
from typing import Any

from ..impl.coordinator import GroupCoordinator
from ..impl.coordinator_state import GroupState
from ..impl.group_messages import (
    Errors,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)
from .messages import (
    DescribedGroup,
    DescribedMember,
    GroupData,
    GroupMember,
    ListedGroup,
    ListGroupsData,
    ResponseData,
    TopicFetchedOffsets,
)
from .protocol import millis

__all__ = ["COORDINATED", "FAILABLE", "GROUP_KEYS", "GroupHub", "describe", "error_data",
           "failed_data", "from_impl", "group_named", "group_of", "list_groups",
           "needs_member_id", "not_coordinator", "to_impl"]

_JOIN, _HEARTBEAT, _LEAVE, _SYNC, _DESCRIBE, _LIST = 11, 12, 13, 14, 15, 16
GROUP_KEYS = frozenset({_JOIN, _HEARTBEAT, _LEAVE, _SYNC})
#: the LeaveGroup errors that concern one leaving member: UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID
_MEMBER_LEAVE_ERRORS = frozenset({25, 82})
#: APIs a fail rule may answer with an error (`failed_data` builds their answers): the
#: group APIs, FindCoordinator, OffsetCommit and OffsetFetch
FAILABLE = GROUP_KEYS | {8, 9, 10}
#: APIs only the group's coordinator node answers (NOT_COORDINATOR from another node)
COORDINATED = GROUP_KEYS | {8, 9}
_NOT_COORDINATOR = 16
_CLIENT_HOST = "/127.0.0.1"


class GroupHub:
    """Every group this broker coordinates (it coordinates them all)."""

    def __init__(self, *, initial_rebalance_delay_ms: int = 0, min_session_timeout_ms: int = 6000,
                 max_session_timeout_ms: int = 1_800_000, seed: int = 0) -> None:
        self.initial_rebalance_delay_ms = initial_rebalance_delay_ms
        self.min_session_timeout_ms = min_session_timeout_ms
        self.max_session_timeout_ms = max_session_timeout_ms
        self.seed = seed
        self._groups: dict[str, GroupCoordinator] = {}
        self.client_ids: dict[tuple[str, str], str] = {}

    def __iter__(self) -> Any:
        return iter(sorted(self._groups))

    def get(self, group_id: str) -> GroupCoordinator | None:
        return self._groups.get(group_id)

    def coordinator(self, group_id: str, now_ms: int) -> GroupCoordinator:
        """The group's coordinator; a new one starts its clock at ``now_ms``."""
        found = self._groups.get(group_id)
        if found is None:
            found = GroupCoordinator(
                group_id, initial_rebalance_delay_ms=self.initial_rebalance_delay_ms,
                min_session_timeout_ms=self.min_session_timeout_ms,
                max_session_timeout_ms=self.max_session_timeout_ms,
                seed=self.seed ^ zlib.crc32(group_id.encode()))
            found.advance(now_ms)
            self._groups[group_id] = found
        return found

    def forget_unused(self, group_id: str) -> None:
        """Drop a group that holds nothing: a Heartbeat, SyncGroup or LeaveGroup naming a
        group the broker never had is answered as Kafka answers it (UNKNOWN_MEMBER_ID) and
        leaves no group behind, as Kafka's coordinator creates a group only on JoinGroup."""
        found = self._groups.get(group_id)
        if found is not None and found.state is GroupState.EMPTY and not found.members \
                and not found.pending_members and found.generation_id == 0:
            del self._groups[group_id]


def group_of(api_key: int, body: Any) -> str:
    return str(body.group_id)


def group_named(api_key: int, version: int, body: Any) -> str:
    """The (first) group a request of `FAILABLE` names: FindCoordinator's key, OffsetFetch
    v8+'s first group, every other's group id."""
    if api_key == 10:
        keys = (body.key,) if version < 4 else body.coordinator_keys
        return str(keys[0]) if keys else ""
    if api_key == 9 and version >= 8:
        return str(body.groups[0].group_id) if body.groups else ""
    return str(body.group_id)


def not_coordinator(api_key: int, version: int, body: Any) -> ResponseData:
    """The answer of a node that does not coordinate the request's group."""
    return failed_data(api_key, version, body, _NOT_COORDINATOR)


def to_impl(api_key: int, version: int, body: Any, client_id: str | None) -> Request:
    """The coordinator's request for a kio group request of any served version."""
    if api_key == _JOIN:
        session = millis(body.session_timeout)
        rebalance = millis(body.rebalance_timeout) if version >= 1 else session
        return JoinGroupRequest(
            member_id=body.member_id,
            protocols=tuple((p.name, bytes(p.metadata)) for p in body.protocols),
            group_instance_id=body.group_instance_id if version >= 5 else None,
            session_timeout_ms=session, rebalance_timeout_ms=rebalance,
            protocol_type=body.protocol_type, client_id=client_id or "",
            reason=body.reason if version >= 8 else None)
    if api_key == _SYNC:
        return SyncGroupRequest(
            member_id=body.member_id, generation_id=int(body.generation_id),
            group_instance_id=body.group_instance_id if version >= 3 else None,
            protocol_name=body.protocol_name if version >= 5 else None,
            assignments=tuple((a.member_id, bytes(a.assignment)) for a in body.assignments))
    if api_key == _HEARTBEAT:
        return HeartbeatRequest(
            member_id=body.member_id, generation_id=int(body.generation_id),
            group_instance_id=body.group_instance_id if version >= 3 else None)
    if api_key == _LEAVE:
        if version < 3:
            return LeaveGroupRequest(members=((body.member_id, None),))
        return LeaveGroupRequest(members=tuple((m.member_id, m.group_instance_id)
                                               for m in body.members))
    raise ValueError(f"API {api_key} is not a group request")


def needs_member_id(version: int, response: Response) -> bool:
    """A JoinGroup below v4 that the coordinator answered with MEMBER_ID_REQUIRED."""
    return (version < 4 and isinstance(response, JoinGroupResponse)
            and response.error is Errors.MEMBER_ID_REQUIRED)


def from_impl(api_key: int, version: int, response: Response,
              protocol_type: str | None) -> GroupData:
    """The plain data of the kio response for ``response`` at ``version``."""
    code = response.error.value
    if isinstance(response, JoinGroupResponse):
        name = response.protocol_name
        return {
            "throttle_time": 0, "error_code": code, "generation_id": response.generation_id,
            "protocol_type": protocol_type if code == 0 else None,
            "protocol_name": name if name is not None or version >= 7 else "",
            "leader": response.leader, "skip_assignment": response.skip_assignment,
            "member_id": response.member_id,
            "members": [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                         "metadata": m.metadata} for m in response.members]}
    if isinstance(response, SyncGroupResponse):
        return {"throttle_time": 0, "error_code": code,
                "protocol_type": protocol_type if code == 0 else None,
                "protocol_name": response.protocol_name, "assignment": response.assignment}
    if isinstance(response, HeartbeatResponse):
        return {"throttle_time": 0, "error_code": code}
    if isinstance(response, LeaveGroupResponse):
        members: list[GroupMember] = [
            {"member_id": m, "group_instance_id": i, "error_code": e.value}
            for m, i, e in response.member_errors]
        if version < 3 and code == 0 and response.member_errors:
            code = response.member_errors[0][2].value
        return {"throttle_time": 0, "error_code": code, "members": members}
    raise ValueError(f"not a group response: {type(response).__name__}")


def error_data(api_key: int, version: int, body: Any, code: int) -> GroupData:
    """A group API's answer carrying only ``code`` (for steering). A LeaveGroup from v3
    (KIP-345) answers a member's own error per member under a top-level NONE, and an error of
    the group or its coordinator at top level with no member listed, as Kafka's coordinator
    does."""
    if api_key == _LEAVE and version >= 3:
        if code in _MEMBER_LEAVE_ERRORS:
            return {"throttle_time": 0, "error_code": 0, "members": [
                {"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                 "error_code": code} for m in body.members]}
        return {"throttle_time": 0, "error_code": code, "members": []}
    return {"throttle_time": 0, "error_code": code, "generation_id": -1, "protocol_name": None
            if version >= 7 else "", "leader": "", "member_id": getattr(body, "member_id", ""),
            "members": [], "assignment": b""}


def describe(hub: GroupHub, group_id: str, version: int) -> DescribedGroup:
    """One group as DescribeGroups shows it: member metadata and assignments only while
    Stable, as Kafka's classic group does."""
    coordinator = hub.get(group_id)
    if coordinator is None:
        return {"error_code": 0, "group_id": group_id, "group_state": "Dead",
                "protocol_type": "", "protocol_data": "", "members": []}
    stable = coordinator.state is GroupState.STABLE
    members: list[DescribedMember] = []
    for member_id, view in coordinator.members.items():
        members.append({
            "member_id": member_id, "group_instance_id": view.instance_id,
            "client_id": hub.client_ids.get((group_id, member_id), ""),
            "client_host": _CLIENT_HOST,
            "member_metadata": (view.metadata or b"") if stable else b"",
            "member_assignment": (view.assignment or b"") if stable else b""})
    return {"error_code": 0, "group_id": group_id, "group_state": coordinator.state.value,
            "protocol_type": coordinator.protocol_type or "",
            "protocol_data": (coordinator.protocol_name or "") if stable else "",
            "members": members, "authorized_operations": -2147483648}


def list_groups(hub: GroupHub, states: list[str]) -> ListGroupsData:
    wanted = {s.lower() for s in states}
    groups: list[ListedGroup] = []
    for group_id in hub:
        coordinator = hub.get(group_id)
        assert coordinator is not None
        state = coordinator.state.value
        if wanted and state.lower() not in wanted:
            continue
        groups.append({"group_id": group_id, "protocol_type": coordinator.protocol_type or "",
                       "group_state": state, "group_type": "classic"})
    return {"throttle_time": 0, "error_code": 0, "groups": groups}


def failed_data(api_key: int, version: int, body: Any, code: int) -> ResponseData:
    """The answer to a request that steering fails with ``code`` (an API of `FAILABLE`)."""
    if api_key in GROUP_KEYS:
        return error_data(api_key, version, body, code)
    if api_key == 10:
        return {"throttle_time": 0, "error_code": code, "error_message": None, "node_id": -1,
                "host": "", "port": -1, "coordinators": [
                    {"key": k, "error_code": code, "error_message": None, "node_id": -1,
                     "host": "", "port": -1} for k in getattr(body, "coordinator_keys", ())]}
    if api_key == 8:
        return {"throttle_time": 0, "topics": [
            {"name": t.name, "partitions": [{"partition_index": p.partition_index,
                                             "error_code": code} for p in t.partitions]}
            for t in body.topics]}
    if api_key == 9:
        return _offset_fetch_failed(version, body, code)
    raise ValueError(f"steering cannot fail API key {api_key}")


#: OffsetFetch errors Kafka answers per partition, the group's error left at none: a topic the
#: principal may not describe, a partition with a pending transactional commit (KIP-447)
_PER_PARTITION = frozenset({29, 88})  # TOPIC_AUTHORIZATION_FAILED, UNSTABLE_OFFSET_COMMIT


def _offset_fetch_failed(version: int, body: Any, code: int) -> ResponseData:
    """OffsetFetch failed with ``code``: a group's error at the top (v2-v7) or on each group
    (v8+); a partition's error on every partition asked for, as v0-1 carry every error."""
    per_partition = code in _PER_PARTITION or version < 2
    group_code = 0 if per_partition else code

    def topics(asked: Any) -> list[TopicFetchedOffsets]:
        return [{"name": t.name, "partitions": [
            {"partition_index": i, "committed_offset": -1, "committed_leader_epoch": -1,
             "metadata": None, "error_code": code} for i in t.partition_indexes]}
            for t in (asked or ())] if per_partition else []

    if version >= 8:
        return {"throttle_time": 0, "error_code": 0, "topics": [], "groups": [
            {"group_id": g.group_id, "topics": topics(g.topics), "error_code": group_code}
            for g in body.groups]}
    return {"throttle_time": 0, "error_code": group_code, "topics": topics(body.topics),
            "groups": []}
