"""The broker's connections as Kafka's network layer keeps them: the frame size bound, idle
and stalled connections closed, a cap on open connections, and one log line per close.

What lives here: `Limits` (Kafka's socket.request.max.bytes, connections.max.idle.ms,
max.connections.per.ip, and the bound on a partial frame), `Notes` (the broker's log of
connections it closed, and why: bounded, and one `logging` line each), and `Doorway`, which
serves one connection: it reads each request frame within the limits, hands it to the
broker, writes the answer, and is the boundary no exception crosses.

Theory of operation
-------------------
A connection carries one request at a time (Kafka mutes a channel while a request is in
flight): the next frame is read only once the answer to the last is written. So the idle
clock runs only while the broker waits for a frame's first byte, and a JoinGroup parked for
the whole rebalance timeout, or a Fetch waiting for data, never counts as idle — a
deliberate difference from Kafka, whose idle check looks at socket activity alone. Once a
frame's first byte is in, each later byte must come within the partial-frame bound (by
default the idle bound: Kafka counts any byte as activity, so a frame dribbled byte by byte
lives as long as its bytes keep coming). The 4-byte size is judged before a byte of the
body is read: above socket.request.max.bytes, or negative, the connection is closed at once.
The body is gathered as it arrives, never allocated from the size.

A client may close its connection while requests it sent are still unread behind one in
flight (Kafka's Java consumer closes the coordinator's connection when a request outlives
``request.timeout.ms``). Kafka's broker still serves what it had received and drops the
answers; so does this one, and `Doorway.hung_up` tells the broker that the client hung up
first, so that an answer written after it is marked as never read (`Exchange.unread`).

Past ``max_connections`` open connections a new one is closed at once (Kafka's
max.connections.per.ip: every client of a loopback broker has one address; KIP-402's
broker-wide max.connections makes the acceptor wait instead, which would leave a client's
connect hanging). A request that is no request, a size refused, a stalled or idle
connection: each is one line in `Notes` and the connection is closed. An exception from the
broker itself is one line too, marked ``internal error`` and counted, so that a test or the
fuzzer sees a bug without the event loop printing a traceback; its whole traceback is kept
(`Notes.failures`) for a harness that must not judge a client by what a broker bug did.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import traceback
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..properties.harness import Failures
from .protocol import MAX_FRAME

__all__ = ["Closed", "Doorway", "Limits", "Notes"]

LOG = logging.getLogger("groupcheck.broker")
_CHUNK = 1 << 20
#: What serving a frame gives back: the answer's bytes and a future to set once it is
#: written (True) or cannot be (False: the client went away), or None to close the connection.
Answer = tuple[bytes, "asyncio.Future[bool] | None"] | None


@dataclass(frozen=True)
class Limits:
    """Kafka's connection limits; the defaults are Kafka's but for ``max_connections``."""

    request_max_bytes: int = MAX_FRAME  # socket.request.max.bytes
    idle_ms: int = 600_000  # connections.max.idle.ms
    partial_frame_ms: int | None = None  # None: idle_ms, counted from the last byte
    max_connections: int = 1000  # Kafka: max.connections.per.ip, unbounded by default

    @property
    def stall_ms(self) -> int:
        return self.idle_ms if self.partial_frame_ms is None else self.partial_frame_ms


class Closed(Exception):
    """The connection is to be closed; the message says why, in one line."""


class Notes:
    """Connections the broker closed, and why: the last ``limit`` lines, each also logged
    once on the ``groupcheck.broker`` logger."""

    def __init__(self, limit: int = 10_000, failures: Failures | None = None) -> None:
        self.lines: deque[str] = deque(maxlen=limit)
        self.internal_errors = 0
        #: every internal error in full (type, message, traceback), for whoever runs the
        #: broker as part of a harness: a bug of the broker's is no client's doing
        self.failures = failures if failures is not None else Failures()

    def add(self, line: str, level: int = logging.WARNING) -> None:
        self.lines.append(line)
        LOG.log(level, "%s", line)

    def refused(self, line: str) -> None:
        """A steering rule the broker could not apply: one line, and a failure (the harness
        asked for an answer Kafka never gives)."""
        self.failures.record("groupcheck-broker (steering)", ValueError(line))
        self.add(line, logging.ERROR)

    def internal(self, where: str, error: BaseException) -> None:
        """A bug of the broker's: one line, with the innermost frame that raised (kept in
        full in ``failures``)."""
        self.internal_errors += 1
        self.failures.record(f"groupcheck-broker ({where})", error)
        frames = traceback.extract_tb(error.__traceback__)
        at = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
        self.add(f"{where}: internal error {type(error).__name__}: {error}{at}; "
                 "connection closed", logging.ERROR)


async def read_frame(reader: asyncio.StreamReader, limits: Limits) -> bytes | None:
    """The next request's payload; None when the client closed between two requests."""
    try:
        async with asyncio.timeout(limits.idle_ms / 1000):
            head = await reader.read(4)
    except TimeoutError:
        raise Closed(f"idle for {limits.idle_ms} ms (connections.max.idle.ms)") from None
    if not head:
        return None
    if len(head) < 4:
        head += await _gather(reader, 4 - len(head), limits, len(head), 4)
    size = int.from_bytes(head, "big", signed=True)
    if not 0 <= size <= limits.request_max_bytes:
        raise Closed(f"frame size {size} refused (socket.request.max.bytes "
                     f"{limits.request_max_bytes})")
    return await _gather(reader, size, limits, 0, size)


async def _gather(reader: asyncio.StreamReader, count: int, limits: Limits, have: int,
                  total: int) -> bytes:
    """``count`` more bytes of a frame, each within the partial-frame bound of the last;
    ``have`` of the ``total`` bytes this part of the frame has (for the log line)."""
    parts: list[bytes] = []
    left = count
    while left:
        try:
            async with asyncio.timeout(limits.stall_ms / 1000):
                chunk = await reader.read(min(left, _CHUNK))
        except TimeoutError:
            raise Closed(f"partial frame stalled: {have + count - left} of {total} bytes, none "
                         f"for {limits.stall_ms} ms") from None
        if not chunk:
            raise Closed(f"frame cut short: {have + count - left} of {total} bytes, then the "
                         "client closed")
        parts.append(chunk)
        left -= len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


class _Reader(asyncio.StreamReader):
    """A stream reader that remembers the client hung up (its end of the stream arrived),
    while requests it sent before are still buffered."""

    hung_up = False

    def feed_eof(self) -> None:
        self.hung_up = True
        super().feed_eof()


async def listen(serve: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
                 host: str, port: int) -> asyncio.Server:
    """`asyncio.start_server`, its readers `_Reader`s."""
    loop = asyncio.get_running_loop()
    return await loop.create_server(
        lambda: asyncio.StreamReaderProtocol(_Reader(limit=2 ** 16), serve), host, port)


class Doorway:
    """Serves connections: ``serve(conn, payload)`` answers one frame, ``gone(conn)`` is
    told when a connection ends."""

    def __init__(self, limits: Limits, notes: Notes,
                 serve: Callable[[int, bytes], Awaitable[Answer]],
                 gone: Callable[[int], None]) -> None:
        self.limits, self.notes = limits, notes
        self._serve, self._gone = serve, gone
        self._numbers = itertools.count(1)
        self.open: set[int] = set()
        self.nodes: dict[int, int] = {}  # connection -> the node it was made to
        self._readers: dict[int, asyncio.StreamReader] = {}

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       node: int = 0) -> None:
        conn = next(self._numbers)
        if len(self.open) >= self.limits.max_connections:
            self.notes.add(f"conn {conn}: refused, {len(self.open)} connections open "
                           f"(max_connections {self.limits.max_connections})")
            writer.transport.abort()
            return
        self.open.add(conn)
        self.nodes[conn] = node
        self._readers[conn] = reader
        try:
            await self._run(conn, reader, writer)
        except Closed as e:
            self.notes.add(f"conn {conn}: {e}; connection closed")
        except (ConnectionError, asyncio.CancelledError):
            pass  # the client went away, or the broker is closing
        except Exception as e:  # noqa: BLE001 - the boundary: one line, never the loop's handler
            self.notes.internal(f"conn {conn}", e)
        finally:
            self.open.discard(conn)
            self._gone(conn)
            self.nodes.pop(conn, None)
            self._readers.pop(conn, None)
            writer.close()

    def hung_up(self, conn: int) -> bool:
        """The client of ``conn`` closed its end: an answer written now is never read."""
        reader = self._readers.get(conn)
        return isinstance(reader, _Reader) and reader.hung_up

    async def _run(self, conn: int, reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> None:
        while True:
            payload = await read_frame(reader, self.limits)
            if payload is None:
                return
            out = await self._serve(conn, payload)
            if out is None:
                return
            written = False
            try:
                writer.write(out[0])
                await writer.drain()
                written = True
            finally:  # whoever waits for this answer is told, written or not
                if out[1] is not None and not out[1].done():
                    out[1].set_result(written)
