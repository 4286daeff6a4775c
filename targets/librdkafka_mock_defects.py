"""The librdkafka mock cluster's defects, and the one place they are handled: `JavaMockProxy`.

librdkafka's mock cluster (2.16; `librdkafka_mock.py`) is a test double written for
librdkafka, and three of its answers are wrong for any client that speaks the protocol as
Kafka's brokers define it. Kafka's Java consumer trips on all three:

* **D-apiversions** — an ApiVersions request above the mock's highest version (2; Java opens
  with v4) is answered in a layout that is neither v0 nor the version asked, which Java reads
  as a throttle of 1,179,648 ms. A broker answers such a request with UNSUPPORTED_VERSION and
  its ranges in the v0 layout (KIP-511), and the client retries at the highest it shares.
* **D-flexible** — the mock advertises flexible versions of the group APIs (JoinGroup 6,
  SyncGroup 4, Heartbeat 4, LeaveGroup 4) but misreads their requests, and its LeaveGroup v3
  answer lacks the v3 member list. It reads JoinGroup ≤ 5, SyncGroup ≤ 3, Heartbeat ≤ 3 and
  LeaveGroup ≤ 2 correctly (`MOCK_READS`).
* **D-sync-order** — the mock completes a round as soon as the leader's SyncGroup has given
  every member an assignment, not when every member has sent its SyncGroup; a follower whose
  SyncGroup arrives after that gets INVALID_REQUEST. Like every SyncGroup error the mock
  answers (REBALANCE_IN_PROGRESS while a new round is joining, too), it carries a null
  assignment, which Java rejects as a malformed response, so the client never learns the
  error; a broker writes an empty assignment with an error.

Theory of operation: the proxy listens on loopback, one port per mock broker, and relays
Kafka frames between Java clients and the mock in both directions, connection for
connection. Every frame is read whole (size prefix, then payload) and passed on unchanged
unless one of the rules below applies; requests and responses are decoded with kio's message
schemas, never by hand. Responses go back to the client in the order of its requests, also
when the proxy answers a request itself.

1. ApiVersions above the mock's highest version: answered by the proxy, UNSUPPORTED_VERSION
   in the v0 layout with the mock's ranges (learnt once per broker at start, capped as in 2).
2. ApiVersions answers from the mock: the four group APIs capped to `MOCK_READS`, so the
   client never sends a version the mock misreads.
3. Metadata and FindCoordinator answers: broker addresses point at the proxy's listeners,
   so every connection the client opens goes through the proxy (address translation, not a
   defect).
4. A group leader's SyncGroup waits (at most `SYNC_HOLD_LIMIT`) until every follower of that
   generation whose JoinGroup went through the proxy has sent its own SyncGroup, so the mock
   has parked all of them when the leader's assignments arrive. Followers that talk to the
   mock directly (another client in a mixed group) are neither waited for nor touched.
5. A SyncGroup error answer with a null assignment: the assignment becomes empty (the only
   bytes changed), so the client reads the error code the mock meant.

It serves Kafka's Java client on the librdkafka mock only; no other client and no other
broker is ever put behind it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import struct
import threading
import time
from collections.abc import Awaitable
from typing import Any

from .kafka_frames import (
    decode_request,
    decode_response,
    frame,
    load_kio,
    read_frame,
    request_frame,
)

#: API keys the proxy looks into
API_VERSIONS, METADATA, FIND_COORDINATOR = 18, 3, 10
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 11, 12, 13, 14
#: the highest version of each group API that the mock reads correctly (D-flexible)
MOCK_READS = {JOIN_GROUP: 5, SYNC_GROUP: 3, HEARTBEAT: 3, LEAVE_GROUP: 2}
UNSUPPORTED_VERSION = 35
SYNC_HOLD_LIMIT = 5.0  # seconds a leader's SyncGroup may wait for the proxied followers
SYNC_ORDER_GAP = 0.02  # then it waits this long, so that the mock reads the followers' first
START_TIMEOUT = 10.0


class ProxyError(RuntimeError):
    """The proxy could not start (no mock at the address, or no answer from it)."""


def mock_api_ranges(host: str, port: int) -> dict[int, tuple[int, int]]:
    """The mock broker's advertised API ranges, asked in ApiVersions v0 (which it reads)."""
    kio = load_kio()
    body = kio.index.load_request_schema(API_VERSIONS, 0)()
    with socket.create_connection((host, port), timeout=START_TIMEOUT) as sock:
        sock.sendall(request_frame(API_VERSIONS, 0, 0, body))
        size = struct.unpack(">i", _recv_exact(sock, 4))[0]
        _, answer = decode_response(API_VERSIONS, 0, _recv_exact(sock, size))
    return {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in answer.api_keys}


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ProxyError("the mock closed the connection")
        data += chunk
    return data


def capped(ranges: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """The mock's ranges with the group APIs capped to what it reads (D-flexible)."""
    return {key: (low, min(high, MOCK_READS.get(key, high))) for key, (low, high) in
            ranges.items()}


@dataclasses.dataclass
class _Round:
    """One group's latest generation as the proxy saw it."""

    generation: int = -1
    leader: str = ""
    awaiting: set[str] = dataclasses.field(default_factory=set)  # followers yet to sync
    first_answer: float = 0.0  # when the first JoinGroup answer of this generation passed


class SyncOrder:
    """D-sync-order: which proxied followers of a group's generation have yet to sync."""

    def __init__(self) -> None:
        self.rounds: dict[str, _Round] = {}
        self.joins: dict[str, list[float]] = {}  # group → send times of unanswered joins
        self.changed = asyncio.Condition()

    async def join_sent(self, group: str) -> float:
        async with self.changed:
            sent = time.monotonic()
            self.joins.setdefault(group, []).append(sent)
            return sent

    async def join_answered(self, group: str, sent: float, generation: int, leader: str,
                            member: str, ok: bool) -> None:
        async with self.changed:
            pending = self.joins.get(group, [])
            if sent in pending:
                pending.remove(sent)
            if ok:
                current = self.rounds.setdefault(group, _Round())
                if generation != current.generation:
                    self.rounds[group] = current = _Round(generation, leader,
                                                          first_answer=time.monotonic())
                if member != leader:
                    current.awaiting.add(member)
            self.changed.notify_all()

    async def member_moved(self, group: str, member: str, generation: int | None) -> None:
        """The member synced (``generation``), or rejoined or left (None): no wait for it."""
        async with self.changed:
            current = self.rounds.get(group)
            if current is not None and generation in (None, current.generation):
                current.awaiting.discard(member)
            self.changed.notify_all()

    def _ready(self, group: str, generation: int) -> bool:
        current = self.rounds.get(group)
        if current is None or current.generation != generation:
            return True
        earlier_joins = [t for t in self.joins.get(group, []) if t < current.first_answer]
        return not current.awaiting and not earlier_joins

    async def leader_may_sync(self, group: str, generation: int, member: str) -> bool:
        """Return once every proxied follower of ``generation`` has sent its SyncGroup
        (bounded); True when the leader's had to wait."""
        async with self.changed:
            current = self.rounds.get(group)
            if current is None or current.leader != member or self._ready(group, generation):
                return False
            try:
                await asyncio.wait_for(
                    self.changed.wait_for(lambda: self._ready(group, generation)),
                    SYNC_HOLD_LIMIT)
            except TimeoutError:
                pass  # a follower that never syncs: the mock's own timer decides
            return True


@dataclasses.dataclass
class _Sent:
    """A request relayed to the mock, waiting for its answer."""

    api_key: int
    version: int
    correlation_id: int
    answer: asyncio.Future[bytes]
    join_sent: float = 0.0  # JoinGroup: when it was relayed (`SyncOrder.join_sent`)
    group: str = ""


class _Relay:
    """One client connection and its connection to the mock broker behind it."""

    def __init__(self, proxy: JavaMockProxy, upstream: tuple[str, int],
                 client: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        self.proxy, self.upstream = proxy, upstream
        self.client_reader, self.client_writer = client
        self.answers: asyncio.Queue[asyncio.Future[bytes] | None] = asyncio.Queue()
        self.sent: list[_Sent] = []

    async def run(self) -> None:
        try:
            reader, writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            self.client_writer.close()
            return
        tasks = [asyncio.ensure_future(t) for t in (
            self._requests(writer), self._responses(reader), self._answer())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for end in (writer, self.client_writer):
                end.close()

    async def _requests(self, upstream: asyncio.StreamWriter) -> None:
        """Client → mock, in order; a request the proxy answers itself never reaches it."""
        while True:
            try:
                payload = await read_frame(self.client_reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            api_key, version, correlation_id = struct.unpack_from(">hhi", payload)
            answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
            await self.answers.put(answer)
            own = self.proxy.own_answer(self.upstream, api_key, version, correlation_id)
            if own is not None:
                answer.set_result(own)
                continue
            sent = _Sent(api_key, version, correlation_id, answer)
            synced = await self.proxy.before_sending(api_key, version, payload, sent)
            self.sent.append(sent)
            upstream.write(struct.pack(">i", len(payload)) + payload)
            await upstream.drain()
            if synced is not None:
                await self.proxy.order.member_moved(sent.group, *synced)

    async def _responses(self, upstream: asyncio.StreamReader) -> None:
        """Mock → client: each answer matched to its request, rewritten where a rule says."""
        while True:
            try:
                payload = await read_frame(upstream)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            correlation_id = struct.unpack_from(">i", payload)[0]
            if not self.sent or self.sent[0].correlation_id != correlation_id:
                return  # an answer to nothing asked: end the connection, as a client would
            sent = self.sent.pop(0)
            sent.answer.set_result(await self.proxy.rewrite(sent, payload))

    async def _answer(self) -> None:
        """Answers to the client in the order of its requests."""
        while True:
            answer = await self.answers.get()
            if answer is None:
                return
            self.client_writer.write(await answer)
            await self.client_writer.drain()


class JavaMockProxy:
    """The loopback proxy between Kafka's Java client and one librdkafka mock cluster.

    ``JavaMockProxy(cluster.bootstraps)`` starts it on a thread of its own; give Java
    clients `bootstraps` instead of the mock's, and `close` it before the mock.
    """

    def __init__(self, mock_bootstraps: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="java-mock-proxy",
                                       daemon=True)
        self.thread.start()
        self.order = SyncOrder()
        self.ranges: dict[tuple[str, int], dict[int, tuple[int, int]]] = {}
        self.listeners: dict[tuple[str, int], tuple[str, int]] = {}  # mock → proxy address
        self.servers: list[asyncio.AbstractServer] = []
        self.relays: set[asyncio.Task[None]] = set()
        upstreams = [_address(a) for a in mock_bootstraps.split(",") if a.strip()]
        try:
            own = [self._call(self._listen(u)) for u in upstreams]
        except BaseException:
            self.close()
            raise
        self.bootstraps = ",".join(f"{h}:{p}" for h, p in own)

    def _call(self, coroutine: Awaitable[Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(START_TIMEOUT)  # type: ignore[arg-type]

    async def _listen(self, upstream: tuple[str, int]) -> tuple[str, int]:
        if upstream in self.listeners:
            return self.listeners[upstream]
        loop = asyncio.get_running_loop()
        try:
            self.ranges[upstream] = capped(await loop.run_in_executor(
                None, mock_api_ranges, *upstream))
        except (OSError, ProxyError) as exc:
            raise ProxyError(f"no librdkafka mock broker at {upstream[0]}:{upstream[1]}: "
                             f"{exc}") from None

        def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.ensure_future(_Relay(self, upstream, (reader, writer)).run())
            self.relays.add(task)
            task.add_done_callback(self.relays.discard)

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        self.servers.append(server)
        self.listeners[upstream] = server.sockets[0].getsockname()[:2]
        return self.listeners[upstream]

    # --- the rules ------------------------------------------------------------------------

    def own_answer(self, upstream: tuple[str, int], api_key: int, version: int,
                   correlation_id: int) -> bytes | None:
        """Rule 1 (D-apiversions): the answer the proxy gives itself, or None to relay."""
        ranges = self.ranges[upstream]
        if api_key != API_VERSIONS or version <= ranges.get(API_VERSIONS, (0, 0))[1]:
            return None
        kio = load_kio()
        schema = kio.index.load_response_schema(API_VERSIONS, 0)
        body = schema(error_code=kio.schema.errors.ErrorCode(UNSUPPORTED_VERSION),
                      api_keys=_api_keys(schema, ranges))
        return frame(schema.__header_schema__(correlation_id=correlation_id), body)

    async def before_sending(self, api_key: int, version: int, payload: bytes,
                             sent: _Sent) -> tuple[str, int] | None:
        """Rule 4 (D-sync-order): note joins and leaves, hold a leader's SyncGroup; a
        SyncGroup's (member, generation), to be noted once it is on its way to the mock."""
        if api_key not in (JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP):
            return None
        _, _, _, body = decode_request(payload)
        group = str(body.group_id)
        sent.group = group
        if api_key == JOIN_GROUP:
            if body.member_id:
                await self.order.member_moved(group, str(body.member_id), None)
            sent.join_sent = await self.order.join_sent(group)
        elif api_key == LEAVE_GROUP:
            members = [body.member_id] if version < 3 else [m.member_id for m in body.members]
            for member in members:
                await self.order.member_moved(group, str(member), None)
        else:
            generation, member = int(body.generation_id), str(body.member_id)
            if body.assignments and await self.order.leader_may_sync(group, generation,
                                                                     member):
                await asyncio.sleep(SYNC_ORDER_GAP)
            return member, generation
        return None

    async def rewrite(self, sent: _Sent, payload: bytes) -> bytes:
        """Rules 2 and 3, and the JoinGroup answers rule 4 learns from."""
        if sent.api_key == SYNC_GROUP:
            payload = non_null_assignment(sent.version, payload)
        if sent.api_key not in (API_VERSIONS, METADATA, FIND_COORDINATOR, JOIN_GROUP):
            return struct.pack(">i", len(payload)) + payload
        header, body = decode_response(sent.api_key, sent.version, payload)
        if sent.api_key == JOIN_GROUP:
            await self.order.join_answered(sent.group, sent.join_sent, int(body.generation_id),
                                           str(body.leader), str(body.member_id),
                                           int(body.error_code) == 0)
            return struct.pack(">i", len(payload)) + payload
        if sent.api_key == API_VERSIONS:
            body = dataclasses.replace(body, api_keys=tuple(
                dataclasses.replace(k, max_version=type(k.max_version)(
                    min(int(k.max_version), MOCK_READS.get(int(k.api_key), 1 << 15))))
                for k in body.api_keys))
        elif sent.api_key == METADATA:
            brokers = []
            for broker in body.brokers:
                host, port = await self._listen((str(broker.host), int(broker.port)))
                brokers.append(dataclasses.replace(broker, host=host,
                                                   port=type(broker.port)(port)))
            body = dataclasses.replace(body, brokers=tuple(brokers))
        elif sent.version < 4:
            if int(body.error_code) == 0:
                host, port = await self._listen((str(body.host), int(body.port)))
                body = dataclasses.replace(body, host=host, port=type(body.port)(port))
        else:
            coordinators = []
            for c in body.coordinators:
                if int(c.error_code) == 0:
                    host, port = await self._listen((str(c.host), int(c.port)))
                    c = dataclasses.replace(c, host=host, port=type(c.port)(port))
                coordinators.append(c)
            body = dataclasses.replace(body, coordinators=tuple(coordinators))
        return frame(header, body)

    def close(self) -> None:
        """Stop listening and end every relayed connection."""
        async def stop() -> None:
            for server in self.servers:
                server.close()
            relays = list(self.relays)
            for task in relays:
                task.cancel()
            await asyncio.gather(*relays, return_exceptions=True)

        if self.loop.is_running():
            try:
                self._call(stop())
            finally:
                self.loop.call_soon_threadsafe(self.loop.stop)
                self.thread.join(START_TIMEOUT)
        if not self.loop.is_running() and not self.loop.is_closed():
            self.loop.close()


def non_null_assignment(version: int, payload: bytes) -> bytes:
    """Rule 5 (D-sync-order): a SyncGroup error answer with the mock's null assignment gets
    an empty one, as a broker writes it; any other answer is returned as it is."""
    null = b"\xff\xff\xff\xff"
    if version > MOCK_READS[SYNC_GROUP] or not payload.endswith(null):
        return payload
    try:
        decode_response(SYNC_GROUP, version, payload)
        return payload
    except Exception:  # noqa: BLE001 - kio refuses the null: the case this rule is for
        pass
    fixed = payload[:-len(null)] + b"\0\0\0\0"
    _, body = decode_response(SYNC_GROUP, version, fixed)  # a well-formed answer now
    return fixed if int(body.error_code) != 0 else payload


def _api_keys(schema: type[Any], ranges: dict[int, tuple[int, int]]) -> tuple[Any, ...]:
    """ApiVersions v0 entries of ``ranges``, in the entry class of ``schema``."""
    import typing

    hint = typing.get_type_hints(schema)["api_keys"]
    entry = typing.get_args(hint)[0]
    return tuple(entry(api_key=key, min_version=low, max_version=high)
                 for key, (low, high) in sorted(ranges.items()))


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.strip().rpartition(":")
    return host.strip("[]"), int(port)
