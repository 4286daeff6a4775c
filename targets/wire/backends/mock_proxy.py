"""A recording TCP proxy in front of one broker: the coordinator's side of the group.

Theory of operation: the proxy listens on loopback and opens one upstream connection per
client connection; two pump threads per pair move whole Kafka frames (an int32 size, then the
message). Requests are read far enough to know their API, version, correlation id and client
id (the request header); JoinGroup responses and SyncGroup requests and responses are decoded
in full with kafka-python's message classes (Kafka's own JSON schemas, every version, flexible
ones included — no byte layout is written here). From them `GroupLedger` keeps, per
generation, what the coordinator handed out: the leader, the protocol, every member's
subscription bytes (the leader's JoinGroup response lists them all), the assignment bytes the
leader sent, and which members got their SyncGroup answer; per member, when its last
SyncGroup was answered without error and when it last sent its coordinator a group request
(`GroupLedger.silent`). The client id names the member (each consumer's ``client.id`` is its
harness name), so member ids map to harness names.

The proxy changes no byte of what it forwards. Two hooks exist for a backend's workarounds
(the mock's defects, see `mock`): ``hold`` may delay forwarding a request, ``answer`` may
answer a request in the broker's place (the frame it returns goes to the client, nothing goes
up), ``rewrite`` may replace a response on its way to the client. A frame it cannot decode
is forwarded and reported in `GroupLedger.errors`. Anything else a pump or the acceptor
raises is the proxy's own failure (`failures`), which ends the run as a harness error.
"""

from __future__ import annotations

import io
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ....properties.harness import Failures

__all__ = ["MAX_FRAME", "GroupLedger", "Proxy", "ProxyRound", "Request"]

JOIN_GROUP, SYNC_GROUP = 11, 14
#: what a joined member sends its coordinator to stay in its group (`silence.COORDINATOR_APIS`:
#: JoinGroup, Heartbeat, LeaveGroup, SyncGroup)
STAY_APIS = frozenset({JOIN_GROUP, 12, 13, SYNC_GROUP})
MAX_FRAME = 64 * 1024 * 1024  # larger frames are a broken stream, never allocated


@dataclass
class ProxyRound:
    """One generation as the coordinator ran it, as the proxy saw it."""

    generation: int
    protocol: str
    leader: str  # member id
    members: dict[str, bytes] = field(default_factory=dict)  # member id → subscription
    assignments: dict[str, bytes] = field(default_factory=dict)  # from the leader's sync
    synced: set[str] = field(default_factory=set)  # members answered without error
    sync_sent: set[str] = field(default_factory=set)  # members whose SyncGroup went up
    leader_sync_ns: int = 0  # when the leader's SyncGroup reached the proxy

    @property
    def complete(self) -> bool:
        return bool(self.members) and self.synced >= set(self.members)


@dataclass(frozen=True)
class Request:
    api_key: int
    version: int
    client_id: str
    body: Any = None  # decoded SyncGroup request


class GroupLedger:
    """What the proxy saw of the group, under one lock; `cond` wakes waiters."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.rounds: dict[int, ProxyRound] = {}
        self.names: dict[str, str] = {}  # member id → client id (harness name)
        self.joining: dict[str, int] = {}  # client id → JoinGroup requests in flight
        self.errors: list[str] = []
        #: client id → (generation, when) of its last SyncGroup answered without error, and
        #: when it last sent a request of `STAY_APIS` (``time.monotonic_ns``)
        self.synced_at: dict[str, tuple[int, int]] = {}
        self.asked_at: dict[str, int] = {}

    def latest(self) -> ProxyRound | None:
        with self.cond:
            return self.rounds[max(self.rounds)] if self.rounds else None

    def joins_in_flight(self) -> int:
        with self.cond:
            return sum(self.joining.values())

    def silent(self, quiet_ms: int) -> dict[str, int]:
        """Client id → generation, for each member that has sent its coordinator nothing for
        ``quiet_ms`` or more since its SyncGroup was answered without error (the broker's
        `silence.silent_after_sync`, from what the proxy saw)."""
        now = time.monotonic_ns()
        with self.cond:
            return {who: generation for who, (generation, at) in sorted(self.synced_at.items())
                    if self.asked_at.get(who, 0) <= at and now - at >= quiet_ms * 1_000_000}


def _decode(kind: Any, frame: bytes, version: int) -> Any:
    return kind.decode(frame, version=version, header=True)


class Proxy:
    """Forwards ``127.0.0.1:<port>`` to ``upstream``, recording the group in ``ledger``."""

    def __init__(self, upstream: tuple[str, int],
                 hold: Callable[[Request], None] | None = None,
                 answer: Callable[[Request, int], bytes | None] | None = None,
                 rewrite: Callable[[Request, bytes], bytes] | None = None,
                 trace: bool = False) -> None:
        self.upstream, self.hold, self.answer = upstream, hold, answer
        self.rewrite = rewrite
        self.trace = trace  # one stderr line per group request and answer
        self.ledger = GroupLedger()
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._server.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._closed = False
        self.failures = Failures()  # of its threads: the run is then the harness's to end
        threading.Thread(target=self.failures.guard("proxy-accept", self._accept), daemon=True,
                         name="proxy-accept").start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
                upstream = socket.create_connection(self.upstream)
            except OSError:
                return
            self._sockets += [client, upstream]
            pending: dict[int, Request] = {}
            lock = threading.Lock()
            threading.Thread(target=self.failures.guard("proxy-requests", self._requests),
                             args=(client, upstream, pending, lock), daemon=True).start()
            threading.Thread(target=self.failures.guard("proxy-responses", self._responses),
                             args=(upstream, client, pending, lock), daemon=True).start()

    # --- frames ---------------------------------------------------------------------------

    @staticmethod
    def _read_frame(sock: socket.socket) -> bytes | None:
        head = _read_exactly(sock, 4)
        if head is None:
            return None
        size = struct.unpack(">i", head)[0]
        if not 0 <= size <= MAX_FRAME:
            return None
        return _read_exactly(sock, size)

    def _requests(self, src: socket.socket, dst: socket.socket, pending: dict[int, Request],
                  lock: threading.Lock) -> None:
        from kafka.protocol.api_header import RequestHeader

        while (frame := self._read_frame(src)) is not None:
            request: Request | None = None
            reply: bytes | None = None
            try:
                header = RequestHeader.decode(io.BytesIO(frame), flexible=False)
                request = self._note_request(frame, int(header.request_api_key),
                                             int(header.request_api_version),
                                             str(header.client_id or ""))
                if self.answer is not None:
                    reply = self.answer(request, int(header.correlation_id))
                if reply is None:
                    with lock:
                        pending[int(header.correlation_id)] = request
                if self.hold is not None:
                    self.hold(request)
            except Exception as exc:  # noqa: BLE001 - recorded; the frame still goes up
                self._error(f"request: {type(exc).__name__}: {exc}")
            if reply is not None:
                with lock:
                    if not _send(src, reply):
                        break
                continue
            if not _send(dst, frame):
                break
            if request is not None and request.api_key == SYNC_GROUP \
                    and request.body is not None:
                self._sync_sent(request)
        _shut(src, dst)
        self._forget(pending, lock)

    def _responses(self, src: socket.socket, dst: socket.socket, pending: dict[int, Request],
                   lock: threading.Lock) -> None:
        while (frame := self._read_frame(src)) is not None:
            correlation = struct.unpack(">i", frame[:4])[0] if len(frame) >= 4 else -1
            with lock:
                request = pending.pop(correlation, None)
            if request is not None:
                try:
                    self._note_response(frame, request)
                    if self.rewrite is not None:
                        frame = self.rewrite(request, frame)
                except Exception as exc:  # noqa: BLE001 - recorded; the frame still goes down
                    self._error(f"response: {type(exc).__name__}: {exc}")
            with lock:  # the request side may answer on this socket too
                if not _send(dst, frame):
                    break
        _shut(src, dst)
        self._forget(pending, lock)

    def _forget(self, pending: dict[int, Request], lock: threading.Lock) -> None:
        """A closed connection (a crashed member's) gets no more answers: its JoinGroups
        are no longer in flight, or the group would never look settled."""
        with lock:
            gone = [r for r in pending.values() if r.api_key == JOIN_GROUP]
            pending.clear()
        if gone:
            with self.ledger.cond:
                for r in gone:
                    self.ledger.joining[r.client_id] = max(
                        0, self.ledger.joining.get(r.client_id, 0) - 1)
                self.ledger.cond.notify_all()

    # --- what the frames say ----------------------------------------------------------------

    def _note_request(self, frame: bytes, api_key: int, version: int,
                      client_id: str) -> Request:
        ledger = self.ledger
        if api_key in STAY_APIS:
            self._trace(f"{client_id} → api {api_key} v{version}")
            with ledger.cond:
                ledger.asked_at[client_id] = time.monotonic_ns()
        if api_key == JOIN_GROUP:
            from kafka.protocol.consumer.group import JoinGroupRequest

            join = _decode(JoinGroupRequest, frame, version)
            with ledger.cond:
                ledger.joining[client_id] = ledger.joining.get(client_id, 0) + 1
            return Request(api_key, version, client_id, join)
        if api_key != SYNC_GROUP:
            return Request(api_key, version, client_id)
        from kafka.protocol.consumer.group import SyncGroupRequest

        body = _decode(SyncGroupRequest, frame, version)
        if body.assignments:
            with ledger.cond:
                round_ = ledger.rounds.get(int(body.generation_id))
                if round_ is not None and str(body.member_id) == round_.leader:
                    round_.assignments = {str(a.member_id): bytes(a.assignment)
                                          for a in body.assignments}
                    round_.leader_sync_ns = time.monotonic_ns()
                ledger.cond.notify_all()
        return Request(api_key, version, client_id, body)

    def _sync_sent(self, request: Request) -> None:
        with self.ledger.cond:
            round_ = self.ledger.rounds.get(int(request.body.generation_id))
            if round_ is not None:
                round_.sync_sent.add(str(request.body.member_id))
            self.ledger.cond.notify_all()

    def _note_response(self, frame: bytes, request: Request) -> None:
        ledger = self.ledger
        round_: ProxyRound | None
        if request.api_key == JOIN_GROUP:
            from kafka.protocol.consumer.group import JoinGroupResponse

            body = _decode(JoinGroupResponse, frame, request.version)
            self._trace(f"{request.client_id} ← join error {body.error_code} generation "
                        f"{body.generation_id} leader {body.leader} me {body.member_id}")
            with ledger.cond:
                ledger.joining[request.client_id] = max(
                    0, ledger.joining.get(request.client_id, 0) - 1)
                if int(body.error_code) == 0:
                    generation = int(body.generation_id)
                    round_ = ledger.rounds.setdefault(generation, ProxyRound(
                        generation, str(body.protocol_name or ""), str(body.leader)))
                    ledger.names[str(body.member_id)] = request.client_id
                    for m in body.members or ():
                        round_.members[str(m.member_id)] = bytes(m.metadata)
                ledger.cond.notify_all()
        elif request.api_key == SYNC_GROUP and request.body is not None:
            from kafka.protocol.consumer.group import SyncGroupResponse

            body = _decode(SyncGroupResponse, frame, request.version)
            self._trace(f"{request.client_id} ← sync error {body.error_code} generation "
                        f"{request.body.generation_id}")
            with ledger.cond:
                round_ = ledger.rounds.get(int(request.body.generation_id))
                if int(body.error_code) == 0:
                    ledger.synced_at[request.client_id] = (int(request.body.generation_id),
                                                           time.monotonic_ns())
                    if round_ is not None:
                        round_.synced.add(str(request.body.member_id))
                ledger.cond.notify_all()

    def _trace(self, text: str) -> None:
        """One line per group request and answer on stderr when tracing."""
        if self.trace:
            print(f"proxy {time.monotonic():.3f} {text}", file=sys.stderr, flush=True)

    def _error(self, message: str) -> None:
        with self.ledger.cond:
            self.ledger.errors.append(message)

    def close(self) -> None:
        self._closed = True
        self._server.close()
        for sock in self._sockets:
            _close(sock)


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        try:
            chunk = sock.recv(n - got)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send(sock: socket.socket, frame: bytes) -> bool:
    try:
        sock.sendall(struct.pack(">i", len(frame)) + frame)
        return True
    except OSError:
        return False


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass


def _shut(a: socket.socket, b: socket.socket) -> None:
    for sock in (a, b):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
