"""`Broker`: groupcheck's Kafka broker on loopback, in process, steered by the harness.

What lives here: the configuration (`BrokerConfig`), the thread-safe face the harness uses
(start and close, topics, steering, the request log, the group's view, the verdicts); a group
as the coordinator holds it is a `description.GroupDescription`.

Theory of operation: `start` runs a `server.BrokerCore` on an asyncio loop in a daemon
thread and returns once the port is bound (a port per node: one node, or
``BrokerConfig.nodes``, among which steering moves a group's coordinator). Every other
method hands a function to that loop and waits for its result (`_call`), so the harness's
thread never touches broker state directly and each steering action takes effect between two
requests, never inside one. Steering is per member and per API, the member named by client
id, member id or group instance id (see `steering`). Use it as a context manager.

What fails inside the broker is kept in `failures` (`failure` gives the first): an exception
of its thread or of a timer on its loop, and every ``internal error`` (a request the broker
failed on a bug of its own). The broker serves on; a harness that runs clients on it ends
its run on the first failure instead of judging what the clients did next.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar, get_args

from ..properties.harness import Failures, HarnessError, ThreadFailure
from .checks import Verdict
from .commit_log import CommitAnswer, answered_commits
from .connections import Limits
from .data_apis import ClusterState
from .description import GroupDescription, describe
from .faults import error_code
from .group_apis import GroupHub
from .protocol import MAX_FRAME
from .rounds import Round
from .server import FAILABLE, BrokerCore, Listener
from .steering import Action, Exchange, Held, Rule, api_key_of
from .store import Offsets, Topics

__all__ = ["Broker", "BrokerConfig"]

_T = TypeVar("_T")
_CALL_TIMEOUT = 30.0
THREAD = "groupcheck-broker"
LOG = logging.getLogger("groupcheck.broker")


@dataclass
class BrokerConfig:
    """The broker's settings; the defaults suit a test harness."""

    host: str = "127.0.0.1"
    port: int = 0  # 0: any free port
    initial_rebalance_delay_ms: int = 0  # Kafka's default is 3000
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    auto_create_partitions: int | None = 1  # None: topics only by CreateTopics or steering
    topics: Mapping[str, int] = field(default_factory=dict)
    seed: int = 0
    log_limit: int = 100_000
    keep_frames: bool = False  # keep every request's and response's bytes in the log
    bytes_per_partition: int = 64 * 1024 * 1024
    socket_request_max_bytes: int = MAX_FRAME  # Kafka's socket.request.max.bytes
    connections_max_idle_ms: int = 600_000  # Kafka's connections.max.idle.ms
    partial_frame_timeout_ms: int | None = None  # a stalled frame; None: the idle bound
    max_connections: int = 1000  # past it a new connection is closed at once
    nodes: int = 1  # the nodes it presents itself as, each its own port (node 0: ``port``)

    def limits(self) -> Limits:
        return Limits(request_max_bytes=self.socket_request_max_bytes,
                      idle_ms=self.connections_max_idle_ms,
                      partial_frame_ms=self.partial_frame_timeout_ms,
                      max_connections=self.max_connections)


class Broker:
    """One broker; ``with Broker() as broker: broker.bootstrap``."""

    def __init__(self, config: BrokerConfig | None = None, *,
                 listener: Listener | None = None) -> None:
        self.config = config or BrokerConfig()
        self._listener = listener
        #: what failed inside the broker (its loop, its thread, an internal error)
        self.failures = Failures()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._core: BrokerCore | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> Broker:
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(ready,), daemon=True,
                                        name=THREAD)
        self._thread.start()
        ready.result(timeout=_CALL_TIMEOUT)
        return self

    def _run(self, ready: concurrent.futures.Future[None]) -> None:
        self.failures.guard(THREAD, asyncio.run)(self._main(ready))

    def _loop_failed(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The loop's handler: an exception no task caught (a timer's, say) is the broker's
        failure; a connection that went away is no failure."""
        exc = context.get("exception")
        if isinstance(exc, Exception) and not isinstance(exc, ConnectionError):
            self.failures.record(f"{THREAD} event loop", exc)
            LOG.error("%s: %s: %s", context.get("message", "event loop"),
                      type(exc).__name__, exc)

    async def _main(self, ready: concurrent.futures.Future[None]) -> None:
        c = self.config
        topics = Topics(bytes_per_partition=c.bytes_per_partition)
        groups = GroupHub(initial_rebalance_delay_ms=c.initial_rebalance_delay_ms,
                          min_session_timeout_ms=c.min_session_timeout_ms,
                          max_session_timeout_ms=c.max_session_timeout_ms, seed=c.seed)
        cluster = ClusterState(c.host, c.port, topics, Offsets(), groups, lambda: 0,
                          c.auto_create_partitions)
        asyncio.get_running_loop().set_exception_handler(self._loop_failed)
        try:
            core = BrokerCore(cluster, log_limit=c.log_limit, listener=self._listener,
                              keep_frames=c.keep_frames, limits=c.limits(),
                              failures=self.failures)
            for name, count in c.topics.items():
                topics.create(name, count)
            await core.listen(c.nodes)
        except BaseException as e:
            ready.set_exception(e)
            return
        self._loop, self._core, self._stop = asyncio.get_running_loop(), core, asyncio.Event()
        ready.set_result(None)
        await self._stop.wait()
        await core.close()

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=_CALL_TIMEOUT)
        self._loop = self._core = self._thread = None

    def __enter__(self) -> Broker:
        return self.start() if self._thread is None else self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def bootstrap(self) -> str:
        core = self._running()
        return f"{core.cluster.host}:{core.cluster.port}"

    def _running(self) -> BrokerCore:
        if self._core is None:
            raise RuntimeError("the broker is not running: call start() first")
        if self._thread is not None and not self._thread.is_alive():
            self.failures.check()
            raise HarnessError(f"the {THREAD} thread has ended", thread=THREAD)
        return self._core

    def failure(self) -> ThreadFailure | None:
        """The first thing that failed inside the broker (its event loop, its thread, or a
        request it failed on a bug of its own, an ``internal error``), or None."""
        return self.failures.first

    def _call(self, fn: Callable[[BrokerCore], _T]) -> _T:
        """Run ``fn(core)`` on the broker's loop and return its result."""
        core = self._running()
        assert self._loop is not None
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn(core))
            except BaseException as e:  # handed to the caller's thread
                future.set_exception(e)

        self._loop.call_soon_threadsafe(run)
        return future.result(timeout=_CALL_TIMEOUT)

    def _await(self, make: Callable[[BrokerCore], Coroutine[Any, Any, _T]]) -> _T:
        core = self._running()
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(make(core), self._loop).result(_CALL_TIMEOUT)

    # -- topics ----------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> None:
        self._call(lambda core: core.cluster.topics.create(name, partitions, core.now_ms()))

    def grow_topic(self, name: str, partitions: int) -> None:
        """Add partitions so the topic has ``partitions`` in all."""
        self._call(lambda core: core.cluster.topics.grow(name, partitions, core.now_ms()))

    def delete_topic(self, name: str) -> None:
        def delete(core: BrokerCore) -> None:
            core.cluster.topics.delete(name)
            core.cluster.offsets.forget_topic(name)
        self._call(delete)

    def partitions(self) -> dict[str, int]:
        return self._call(lambda core: core.cluster.topics.partition_counts())

    def log_ends(self, topics: Collection[str] | None = None
                 ) -> dict[tuple[str, int], tuple[int, int]]:
        """Each partition's log start offset and high watermark (``topics``: only theirs)."""
        return self._call(lambda core: core.cluster.topics.log_ends(topics))

    # -- steering --------------------------------------------------------------------------

    def fail_next(self, member: str, api: str | int, error: int | str, count: int = 1) -> None:
        """Answer ``member``'s next ``count`` requests of ``api`` with Kafka error ``error``
        (code or name); the coordinator never sees them. The error must be one Kafka answers
        the API with (`faults`), at the version the member speaks it, when known: ValueError
        otherwise."""
        key = api_key_of(api)
        if key not in FAILABLE:
            raise ValueError(f"steering cannot fail API key {key}: only the group APIs, "
                             "FindCoordinator, OffsetCommit and OffsetFetch")
        rule = Rule(member, key, "fail", count, error=error_code(error))
        self._call(lambda core: core.arm(rule))

    def delay(self, member: str, api: str | int, seconds: float, count: int = 1) -> None:
        """Send ``member``'s next ``count`` responses of ``api`` ``seconds`` late."""
        rule = Rule(member, api_key_of(api), "delay", count, seconds=seconds)
        self._call(lambda core: core.rules.add(rule))

    def hold(self, member: str, api: str | int, count: int = 1, tag: str = "") -> None:
        """Keep ``member``'s next ``count`` responses of ``api`` until `release`; ``tag``
        marks the holds as the caller's (`held`, `cancel`)."""
        rule = Rule(member, api_key_of(api), "hold", count, tag=tag)
        self._call(lambda core: core.rules.add(rule))

    def close_before_answer(self, member: str, api: str | int, count: int = 1) -> None:
        """Close ``member``'s connection instead of sending its next ``count`` answers of
        ``api``: the request reached the coordinator, its answer is lost with the
        connection."""
        rule = Rule(member, api_key_of(api), "close", count)
        self._call(lambda core: core.arm(rule))

    def move_coordinator(self, member: str, api: str | int, node: int | None = None) -> None:
        """When ``member``'s next request of ``api`` arrives, move its group's coordinator to
        ``node`` (None: the next node); the old node answers that request NOT_COORDINATOR,
        and FindCoordinator names the new one. Needs ``BrokerConfig.nodes`` > 1."""
        key = api_key_of(api)
        nodes = self.config.nodes
        if key not in FAILABLE or nodes < 2 or not (node is None or 0 <= node < nodes):
            raise ValueError(f"cannot move the coordinator on API key {key} to node {node}: "
                             f"the group APIs, FindCoordinator, OffsetCommit or OffsetFetch, "
                             f"to one of the broker's {nodes} nodes")
        rule = Rule(member, key, "move", node=node)
        self._call(lambda core: core.arm(rule))

    def coordinator_of(self, group: str) -> int:
        """The node that coordinates ``group``."""
        return self._call(lambda core: core.cluster.coordinator_of(group))

    def address(self, node: int) -> str:
        """``host:port`` of one of the broker's nodes."""
        def find(core: BrokerCore) -> str:
            found = core.cluster.broker(node)
            return f"{found['host']}:{found['port']}"
        return self._call(find)

    def held(self, tag: str | None = None) -> list[Held]:
        """Responses held now (of ``tag`` alone, when given), in the order they were held."""
        return self._call(lambda core: core.holds.held(tag))

    def wait_held(self, count: int, timeout: float = 30.0) -> list[Held]:
        """Wait until at least ``count`` responses are held; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.held()
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(found)} responses held, waited for {count}")
            time.sleep(0.01)

    def release(self, *held: Held) -> list[Held]:
        """Send held responses in this order, each written before the next one; those
        written. One that is no longer held (released already, its member gone) is skipped."""
        ids = [h.hold_id for h in held]
        written = set(self._await(lambda core: core.holds.release(ids)))
        return [h for h in held if h.hold_id in written]

    def cancel(self, member: str, api: str | int, action: Action,
               tag: str | None = None) -> int:
        """Disarm ``member``'s rules of ``action`` (a `steering.Action`) for ``api`` that
        have not fired (of ``tag`` alone, when given); how many there were."""
        if action not in get_args(Action):
            raise ValueError(f"no steering action {action!r}; one of "
                             f"{', '.join(get_args(Action))}")
        key = api_key_of(api)
        return self._call(lambda core: core.rules.drop(member, key, action, tag))

    def armed(self) -> list[Rule]:
        """The rules that have not fired yet, oldest first."""
        return self._call(lambda core: [dataclasses.replace(r) for r in core.rules.pending()])

    def forget(self, member: str) -> int:
        """Disarm every rule aimed at ``member`` (it left or crashed); how many there were."""
        return self._call(lambda core: core.rules.forget(member))

    def clear_rules(self) -> None:
        self._call(lambda core: core.rules.clear())

    def drop_session(self, group: str, member_id: str) -> None:
        """End the member's session now, as if it had stopped heartbeating."""
        self._call(lambda core: core.expire(group, member_id))

    # -- what the broker saw -----------------------------------------------------------------

    def exchanges(self, after: int = -1) -> list[Exchange]:
        """The exchanges kept, past sequence number ``after``, in arrival order."""
        return self._call(lambda core: core.log.since(after))

    def offset_commits(self, after: int = -1, group: str | None = None
                       ) -> tuple[list[CommitAnswer], int]:
        """`commit_log.answered_commits` past exchange ``after``."""
        return self._call(lambda core: answered_commits(core.log.since(after), after, group))

    def steered(self, after: int = -1) -> list[Exchange]:
        """The exchanges steering answered, delayed or held, past sequence number ``after``."""
        return self._call(lambda core: core.log.steered_since(after))

    def fenced(self, after: int = -1) -> list[tuple[int, Exchange]]:
        """The exchanges the coordinator itself answered with a fencing error
        (`steering.FENCING_ERRORS`), numbered in answer order, past number ``after``."""
        return self._call(lambda core: core.log.fenced_since(after))

    def verdicts(self) -> list[Verdict]:
        return self._call(lambda core: list(core.checks.verdicts))

    def violations(self) -> list[Verdict]:
        return [v for v in self.verdicts() if not v.holds]

    def notes(self) -> list[str]:
        """Connections the broker closed, and why (the last 10,000)."""
        return self._call(lambda core: list(core.notes.lines))

    def internal_errors(self) -> int:
        """Requests the broker failed on a bug of its own (each one ``internal error`` note)."""
        return self._call(lambda core: core.notes.internal_errors)

    def open_connections(self) -> int:
        return self._call(lambda core: len(core.doorway.open))

    def rounds(self, group: str) -> list[Round]:
        """The group's generations as the coordinator ran them (subscriptions, the
        leader's assignment, who got a SyncGroup answer): a wire layer's backend reads these."""
        return self._call(lambda core: core.rounds.rounds(group))

    def group_ids(self) -> list[str]:
        """Every group the broker has coordinated, in name order."""
        return self._call(lambda core: list(core.cluster.groups))

    def joins_in_flight(self, group: str) -> int:
        """JoinGroup requests of the group the coordinator has not answered yet."""
        return self._call(lambda core: core.rounds.joins_in_flight.get(group, 0))

    def describe_group(self, group: str) -> GroupDescription | None:
        return self._call(lambda core: describe(core, group))
