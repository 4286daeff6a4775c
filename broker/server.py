"""The broker's I/O: connections, dispatch, the coordinator's timers, and steering applied.

What lives here: `BrokerCore`, which owns every piece of broker state and runs on one
asyncio event loop. `broker.Broker` runs it on a thread of its own and gives the harness a
thread-safe face.

Theory of operation
-------------------
asyncio, one loop, one thread: the coordinator is a sans-I/O state machine that must be
driven by one caller at a time, and a loop gives that for free (no locks) while serving
every connection, long-polling Fetch and timers (session and rebalance timeouts, on
`loop_clock`'s clock, which leaves the broker's own stalls out) without a thread each. Like
Kafka's network layer, a connection is served one request at a time: the next request is
read only once the previous response is written, so a client always gets its responses in
order — and a parked JoinGroup or a held SyncGroup holds back what that connection sent
after it, as on a real broker. Reading frames within Kafka's limits (size, idle, stalled
frames, open connections) is `connections.Doorway`'s; a request that cannot be read or is
not served is one line in `notes` and a closed connection, and an exception while answering
is one ``internal error`` line and a closed connection, never the event loop's traceback.

A group request goes to its group's coordinator as an envelope (client = connection
number, request id = correlation id); the coordinator answers at once or later, from
another request or from a timer, and `_deliver` hands each answer to the connection that
waits for it. After each call the group's next deadline is armed as a loop timer. Before
the coordinator sees a JoinGroup or the leader's SyncGroup, `checks` judges what was sent.
Steering (`steering.Rules`) fails a request before dispatch or moves its group's
coordinator to another node (the node it came to then answers NOT_COORDINATOR, as it
does a request of the group that waited there across the move), or delays, holds or
withholds its response after it (closing the connection instead).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable
from typing import Any, cast

from ..impl.group_messages import (
    Envelope,
    Errors,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupResponse,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)
from ..properties.harness import Failures
from . import data_apis, group_apis
from .checks import GroupChecks, is_leader_sync
from .connections import Closed, Doorway, Limits, Notes, listen
from .data_apis import ClusterState
from .faults import implausible
from .group_apis import FAILABLE
from .holds import Holds
from .loop_clock import LoopClock
from .messages import FetchData, GroupData, MetadataData, ResponseData
from .protocol import (
    INVALID_REQUEST,
    FrameError,
    RequestFrame,
    api_versions_data,
    api_versions_valid,
    build,
    decode_request,
    encode_response,
    frame_name,
    millis,
    response_type,
    unsupported_api_versions,
)
from .rounds import RoundLedger
from .steering import Exchange, ExchangeLog, Rule, Rules, Spoken, Who

__all__ = ["FAILABLE", "BrokerCore", "Listener"]

_FETCH, _API_VERSIONS, _DESCRIBE_GROUPS, _LIST_GROUPS = 1, 18, 15, 16
_INVALID_GROUP_ID = 24
_RESPONSES = (JoinGroupResponse, SyncGroupResponse, HeartbeatResponse, LeaveGroupResponse)
Listener = Callable[[Exchange], None]


class BrokerCore:
    """Every piece of the broker's state; to be used from its event loop only."""

    def __init__(self, cluster: ClusterState, *, log_limit: int = 100_000,
                 listener: Listener | None = None, keep_frames: bool = False,
                 limits: Limits | None = None, failures: Failures | None = None) -> None:
        self.cluster = cluster
        self.log = ExchangeLog(log_limit)
        self.rules = Rules()
        self.spoken = Spoken()
        self.checks = GroupChecks(cluster.topics)
        self.listener = listener
        self.keep_frames = keep_frames
        self.notes = Notes(failures=failures)  # connections closed, and why
        self._loop = asyncio.get_running_loop()
        self.clock = LoopClock(self._loop)
        self._waiting: dict[tuple[str, int], tuple[asyncio.Future[Response], Request]] = {}
        self.rounds = RoundLedger()
        self.holds = Holds(self._loop)
        self.doorway = Doorway(limits or Limits(), self.notes, self._serve, self._gone)
        self._members: dict[int, str] = {}
        self._produced: asyncio.Future[None] = self._loop.create_future()
        self._servers: list[asyncio.Server] = []
        cluster.clock = self.now_ms

    def now_ms(self) -> int:
        return self.clock.now_ms()

    async def listen(self, nodes: int = 1) -> int:
        """Listen as ``nodes`` nodes, node 0 on the configured port, the others on any free
        one; node 0's port."""
        for node in range(nodes):
            server = await listen(functools.partial(self.doorway, node=node), self.cluster.host,
                                  self.cluster.port if node == 0 else 0)
            port = int(server.sockets[0].getsockname()[1])
            if node == 0:
                self.cluster.port = port
            else:
                self.cluster.ports.append(port)
            self._servers.append(server)
        return self.cluster.port

    async def close(self) -> None:
        self.clock.close()
        self.holds.close()
        for server in self._servers:
            server.close()
            await server.wait_closed()

    # -- requests --------------------------------------------------------------------------

    def _gone(self, conn: int) -> None:
        self._members.pop(conn, None)

    async def _serve(self, conn: int,
                     payload: bytes) -> tuple[bytes, asyncio.Future[bool] | None] | None:
        """The response bytes (and a future to set once written, or not), or None to
        close."""
        try:
            frame = decode_request(payload)
        except FrameError as e:
            self.notes.add(f"conn {conn}: {frame_name(payload)}: unreadable request: {e}; "
                           "connection closed")
            return None
        if not frame.supported:
            if frame.api_key == _API_VERSIONS:
                return unsupported_api_versions(frame.correlation_id), None
            # Kafka's network layer closes the connection on an API or version it does
            # not serve; so does this broker.
            self.notes.add(f"conn {conn}: {frame.api_name} v{frame.api_version} "
                           "not served; connection closed")
            return None
        try:
            return await self._exchange(conn, frame, payload)
        except Closed:  # steering closes the connection instead of answering
            raise
        except Exception as e:  # noqa: BLE001 - a bug: one line naming the request, then close
            self.notes.internal(f"conn {conn}: {frame.api_name} v{frame.api_version}", e)
            return None

    async def _exchange(self, conn: int, frame: RequestFrame,
                        payload: bytes) -> tuple[bytes, asyncio.Future[bool] | None]:
        who = self._who(conn, frame)
        self.spoken.saw(who, frame.api_key, frame.api_version)
        exchange = self.log.open(connection=conn, who=who, api_key=frame.api_key,
                                 api_version=frame.api_version,
                                 correlation_id=frame.correlation_id, request=frame.body,
                                 received_ms=self.now_ms(), client_id=frame.client_id)
        judged = len(self.checks.verdicts)
        data = await self._answer(conn, frame, who, exchange)
        exchange.verdicts = tuple(self.checks.verdicts[judged:])
        response = build(response_type(frame.api_key, frame.api_version), data)
        exchange.response = response
        sent = await self._steer_response(who, frame.api_key, exchange)
        try:
            exchange.answered_ms, exchange.unread = self.now_ms(), self.doorway.hung_up(conn)
            self.log.answered(exchange)
            out = encode_response(response, frame.correlation_id)
            if self.keep_frames:
                exchange.raw_request, exchange.raw_response = payload, out[4:]
            if self.listener is not None:
                self.listener(exchange)
        except BaseException:  # a release waits for this answer: it is not coming
            if sent is not None and not sent.done():
                sent.set_result(False)
            raise
        return out, sent

    def _who(self, conn: int, frame: RequestFrame) -> Who:
        body = frame.body
        member_id = getattr(body, "member_id", None)
        members = getattr(body, "members", None)
        if member_id is None and frame.api_key == 13 and members:
            member_id = members[0].member_id
        instance_id = getattr(body, "group_instance_id", None)
        return Who(frame.client_id or "", member_id or self._members.get(conn, ""), instance_id)

    async def _answer(self, conn: int, frame: RequestFrame, who: Who,
                      exchange: Exchange) -> ResponseData:
        key, version, body = frame.api_key, frame.api_version, frame.body
        rule = self.rules.take(who, key, "request")
        steered = None if rule is None else self._steer_request(conn, frame, rule, exchange)
        if steered is not None:
            return steered
        if key in group_apis.COORDINATED and self.doorway.nodes.get(conn, 0) != \
                self.cluster.coordinator_of(group_apis.group_named(key, version, body)):
            return group_apis.not_coordinator(key, version, body)
        if key in group_apis.GROUP_KEYS:
            return await self._group_request(conn, frame)
        if key == _FETCH:
            return await self._fetch(version, body)
        if key == _API_VERSIONS:
            if not api_versions_valid(version, body):
                self.notes.add(f"conn {conn}: ApiVersions v{version}: client software name "
                               f"{body.client_software_name!r} or version "
                               f"{body.client_software_version!r} invalid; answered "
                               "INVALID_REQUEST")
                return {"error_code": INVALID_REQUEST, "throttle_time": 0, "api_keys": []}
            return api_versions_data()
        if key == _DESCRIBE_GROUPS:
            return {"throttle_time": 0, "groups": [
                group_apis.describe(self.cluster.groups, g, version) for g in body.groups]}
        if key == _LIST_GROUPS:
            states = list(body.states_filter) if version >= 4 else []
            return group_apis.list_groups(self.cluster.groups, states)
        data = data_apis.HANDLERS[key](self.cluster, version, body)
        if key == 0:
            self._wake_fetchers()
        elif key == 3:
            self.checks.saw_metadata(frame.client_id or "", cast(MetadataData, data))
        return data

    def _steer_request(self, conn: int, frame: RequestFrame, rule: Rule,
                       exchange: Exchange) -> ResponseData | None:
        """A fail rule's answer; a move rule moves the group's coordinator (the request is
        then served, by a node that no longer coordinates it); None: serve the request."""
        key, version, body = frame.api_key, frame.api_version, frame.body
        refused = rule.refusal(version)
        if refused is None and rule.action == "fail":
            who = exchange.who
            refused = implausible(key, rule.error, who.member_id, who.instance_id, body)
        if refused is not None:
            self.notes.refused(f"conn {conn}: {refused}; served unsteered")
            return None
        self.log.steer(exchange, rule.describe())
        if rule.action == "move":
            self.cluster.move(group_apis.group_named(key, version, body), rule.node)
            return None
        return group_apis.failed_data(key, version, body, rule.error)

    def arm(self, rule: Rule) -> None:
        """Arm ``rule``, checked against the version its member last spoke the API at."""
        self.rules.add(rule, self.spoken.of(rule.member, rule.api_key))

    async def _steer_response(self, who: Who, api_key: int,
                              exchange: Exchange) -> asyncio.Future[bool] | None:
        rule = self.rules.take(who, api_key, "response")
        if rule is None:
            return None
        self.log.steer(exchange, rule.describe())
        body, sync = exchange.request, exchange.api == "SyncGroup"
        if sync and rule.action in ("delay", "close"):  # not got while held back, or at all
            self.rounds.withheld(body.group_id, body.generation_id, body.member_id)
        if rule.action == "delay":
            await asyncio.sleep(rule.seconds)
            if sync:
                self.rounds.held(body.group_id, body.generation_id, body.member_id,
                                 self.now_ms() - exchange.received_ms,
                                 read=not self.doorway.hung_up(exchange.connection))
            return None
        if rule.action == "close":
            raise Closed(f"steering: {exchange.api} answer to {rule.member!r} withheld")
        return await self.holds.keep(exchange, rule.tag)

    # -- group requests and the coordinator's timers -----------------------------------------

    async def _group_request(self, conn: int, frame: RequestFrame) -> GroupData:
        key, version, body = frame.api_key, frame.api_version, frame.body
        group_id = group_apis.group_of(key, body)
        if not group_id:  # Kafka's isValidGroupId: these APIs need a non-empty group id
            return group_apis.error_data(key, version, body, _INVALID_GROUP_ID)
        known = self.cluster.groups.get(group_id) is not None
        coordinator = self.cluster.groups.coordinator(group_id, self.now_ms())
        request = group_apis.to_impl(key, version, body, frame.client_id)
        leader = coordinator.leader_id or ""
        leader_client = self.cluster.groups.client_ids.get((group_id, leader), "")
        self.checks.before(group_id, coordinator, request, leader_client, self.now_ms())
        response = await self._submit(group_id, conn, frame.correlation_id, request)
        if group_apis.needs_member_id(version, response):
            assert isinstance(request, JoinGroupRequest)
            assert isinstance(response, JoinGroupResponse)
            rejoin = dataclasses.replace(request, member_id=response.member_id)
            response = await self._submit(group_id, conn, frame.correlation_id, rejoin)
        if not known and not isinstance(request, JoinGroupRequest):
            self.cluster.groups.forget_unused(group_id)
        member_id = getattr(response, "member_id", "")
        if member_id:
            self._members[conn] = member_id
            self.cluster.groups.client_ids[(group_id, member_id)] = frame.client_id or ""
        if self._moved(conn, group_id):  # the coordinator moved while the request waited
            return group_apis.error_data(key, version, body, Errors.NOT_COORDINATOR.value)
        return group_apis.from_impl(key, version, response, coordinator.protocol_type)

    def _moved(self, conn: int, group_id: str) -> bool:
        return self.doorway.nodes.get(conn, 0) != self.cluster.coordinator_of(group_id)

    async def _submit(self, group_id: str, conn: int, correlation_id: int,
                      request: Any) -> Response:
        coordinator = self.cluster.groups.coordinator(group_id, self.now_ms())
        future: asyncio.Future[Response] = self._loop.create_future()
        self._waiting[(str(conn), correlation_id)] = (future, request)
        envelope = Envelope(str(conn), correlation_id, request)
        if isinstance(request, SyncGroupRequest) and is_leader_sync(coordinator, request):
            self.rounds.leader_synced(group_id, request)
        joins = self.rounds.joins_in_flight
        joining = isinstance(request, JoinGroupRequest)
        joins[group_id] = joins.get(group_id, 0) + joining
        try:
            self._deliver(group_id, coordinator.receive(envelope, self._clock(group_id)))
            self._arm(group_id)
            return await future
        finally:
            joins[group_id] -= joining

    def _clock(self, group_id: str) -> int:
        coordinator = self.cluster.groups.get(group_id)
        floor = coordinator.now_ms if coordinator is not None else 0
        return max(self.now_ms(), floor)

    def _deliver(self, group_id: str, envelopes: list[Envelope]) -> None:
        """Hand each answer to its waiting connection; note joins and syncs in the ledger
        (the coordinator's state is the one these answers came from)."""
        coordinator = self.cluster.groups.get(group_id)
        for envelope in envelopes:  # a join's client id, before the round it completes is noted
            waiting = self._waiting.get((envelope.client, envelope.request_id))
            if waiting is not None and isinstance(envelope.message, JoinGroupResponse) and \
                    isinstance(waiting[1], JoinGroupRequest) and envelope.message.member_id:
                self.cluster.groups.client_ids[(group_id, envelope.message.member_id)] = \
                    waiting[1].client_id
        for envelope in envelopes:
            answer = envelope.message
            entry = self._waiting.pop((envelope.client, envelope.request_id), None)
            if entry is None or not isinstance(answer, _RESPONSES):
                continue
            future, request = entry
            if coordinator is not None and answer.error is Errors.NONE and \
                    not self._moved(int(envelope.client), group_id):  # lost: not noted
                if isinstance(answer, JoinGroupResponse):
                    self.rounds.joined(group_id, coordinator, self.cluster.groups.client_ids)
                elif isinstance(request, SyncGroupRequest):
                    self.rounds.synced(group_id, request.generation_id, request.member_id)
            if not future.done():
                future.set_result(answer)

    def _arm(self, group_id: str) -> None:
        coordinator = self.cluster.groups.get(group_id)
        deadline = coordinator.next_deadline() if coordinator is not None else None
        self.clock.arm(group_id, deadline, functools.partial(self._tick, group_id))

    def _tick(self, group_id: str, deadline: int) -> None:
        coordinator = self.cluster.groups.get(group_id)
        if coordinator is not None:
            now = max(self._clock(group_id), deadline)
            self._deliver(group_id, coordinator.advance(now))
            self._arm(group_id)

    def expire(self, group_id: str, member_id: str) -> None:
        """Steering: end a member's session now, as if its session timer had fired."""
        coordinator = self.cluster.groups.get(group_id)
        if coordinator is None:
            raise KeyError(f"no group {group_id!r}")
        self._deliver(group_id, coordinator.expire_session(member_id, self._clock(group_id)))
        self._arm(group_id)

    # -- fetch -----------------------------------------------------------------------------

    async def _fetch(self, version: int, body: Any) -> FetchData:
        """Answer when ``min_bytes`` are there or ``max_wait`` has passed."""
        deadline = self._loop.time() + millis(body.max_wait) / 1000
        while True:
            data, size = data_apis.fetch(self.cluster, version, body)
            remaining = deadline - self._loop.time()
            if size >= int(body.min_bytes) or remaining <= 0:
                return data
            try:
                await asyncio.wait_for(asyncio.shield(self._produced), remaining)
            except TimeoutError:
                pass

    def _wake_fetchers(self) -> None:
        if not self._produced.done():
            self._produced.set_result(None)
        self._produced = self._loop.create_future()

