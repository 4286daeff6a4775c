"""Member driver for aiokafka: ``python -m groupcheck.targets.wire.drivers.aiokafka_member``.

Every `AIOKafkaConsumer` of the process lives in one asyncio loop, as an aiokafka application's
would. A thread reads stdin and hands each command to the loop; commands of one member run in
order (a lock per member) while other members go on; each member's poll task calls
``getmany`` while it polls. The rebalance listener is aiokafka's `ConsumerRebalanceListener`
with coroutine methods (a slow revoke awaits, so it slows this member's rebalance, not the
loop). aiokafka applies an assignment itself; the listener only reports. The generation and
member id are read from the consumer's coordinator (aiokafka has no public accessor).

Crash (``"crash": "command"``): aiokafka has no API to end a consumer without leaving, so the
driver does what a dead process amounts to — it cancels the coordinator's coordination and
heartbeat tasks (no LeaveGroup, no heartbeat), closes the fetcher and the network client, and
reports nothing more of that member. aiokafka speaks the eager protocol only and has no
``lost`` callback. Profile ``java``: aiokafka documents its listener with Java's text (the
same guarantees), so it is held to what Java ships; what it does differently is a finding.
A ``create``'s ``assignors`` become its ``partition_assignment_strategy`` tuple of classes;
``hello`` lists the assignors whose class this release has.

Commits: ``sync`` and ``revoke`` await ``commit()`` (in the poll task after a batch, in the
revoke callback); aiokafka has no asynchronous commit of its own (no ``async``) and no hook
on its auto-commits (``auto`` writes no ``commit`` event). What ``commit()`` commits is the
assignment's consumed offsets, read where ``commit()`` reads them (no public accessor); no
public accessor gives the generation either, so a ``records`` or ``commit`` event has none.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
from typing import TYPE_CHECKING, Any

from ...client_assignors import AIOKAFKA as ASSIGNORS
from ...client_assignors import load_class
from .commits import OK, Commits, Record, auto_commit, failure, offered, refusal, style_of
from .fatal import fatal
from .host import (
    DriverOutput,
    assignors_of,
    command_of,
    loadable,
    pair,
    parts,
    static_settings,
)
from .messages import CallbackFields, Command, EventFields, Hello

if TYPE_CHECKING:  # Unpack is Python 3.11's; the drivers run on 3.9
    from typing import Unpack

__all__ = ["POLL_MS", "AiokafkaHost", "AiokafkaMember", "amain", "assignor_class", "main",
           "static_membership"]

POLL_MS = 50


def assignor_class(name: str) -> Any:
    return load_class(ASSIGNORS[name])


def static_membership() -> bool:
    """Whether this release's AIOKafkaConsumer takes ``group_instance_id`` (KIP-345)."""
    from aiokafka import AIOKafkaConsumer

    return "group_instance_id" in inspect.signature(AIOKafkaConsumer).parameters


def _tps(partitions: Any) -> list[tuple[str, int]]:
    return sorted((tp.topic, tp.partition) for tp in partitions)


class AiokafkaMember:
    """One AIOKafkaConsumer, its listener and its poll task."""

    def __init__(self, out: DriverOutput, name: str, style: str = "none") -> None:
        self.out, self.name, self.style = out, name, style
        self.commits = Commits(out, name, style, lambda: None)
        self.consumer: Any = None
        self.lock = asyncio.Lock()
        self.polling = asyncio.Event()
        self.polling.set()
        self.slow_ms = 0
        self.muted = False
        self.task: asyncio.Task[None] | None = None

    def event(self, name: str, **fields: Unpack[EventFields]) -> None:
        if not self.muted:
            self.out.event(name, self.name, **fields)

    def membership(self) -> tuple[int | None, str | None]:
        coordinator = getattr(self.consumer, "_coordinator", None)
        if coordinator is None:
            return None, None
        return int(coordinator.generation), str(coordinator.member_id) or None

    async def callback(self, kind: str, partitions: Any) -> None:
        generation, member_id = self.membership()
        fields: CallbackFields = {"kind": kind, "partitions": parts(_tps(partitions)),
                                  "generation": generation, "memberId": member_id}
        self.event("callback_start", **fields)
        if kind == "revoked" and partitions and self.slow_ms:
            slow, self.slow_ms = self.slow_ms, 0
            await asyncio.sleep(slow / 1000.0)
        if kind == "revoked" and partitions and self.style == "revoke":
            await self.commit()
        self.event("callback_end", **fields, paused=parts(_tps(self.consumer.paused())))

    def positions(self) -> list[Record]:
        """What ``commit()`` commits: the assignment's consumed offsets."""
        subscription = self.consumer._subscription.subscription
        assignment = getattr(subscription, "assignment", None)
        offsets = assignment.all_consumed_offsets() if assignment is not None else {}
        return sorted((tp.topic, tp.partition, int(m.offset)) for tp, m in offsets.items())

    async def commit(self) -> None:
        """The synchronous commit of the current positions, reported when it returned."""
        before = self.positions()
        if not before:
            return
        try:
            await self.consumer.commit()
        except Exception as exc:  # noqa: BLE001 - the client's error is the outcome
            self.commits.report(before, failure(exc))
        else:
            self.commits.report(before, OK)

    def listener(self) -> Any:
        from aiokafka.abc import ConsumerRebalanceListener

        member = self

        class AiokafkaReporter(ConsumerRebalanceListener):  # type: ignore[misc]  # untyped base (Any)
            async def on_partitions_revoked(self, revoked: Any) -> None:
                await member.callback("revoked", revoked)

            async def on_partitions_assigned(self, assigned: Any) -> None:
                await member.callback("assigned", assigned)

        return AiokafkaReporter()

    async def poll_loop(self) -> None:
        while True:
            await self.polling.wait()
            try:
                batches = await self.consumer.getmany(timeout_ms=POLL_MS)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - an exception from poll is an event
                self.event("error", message=f"{type(exc).__name__}: {exc}", raised_by="poll")
                if fatal(exc):
                    self.polling.clear()
                await asyncio.sleep(POLL_MS / 1000.0)
                continue
            records = [[tp.topic, tp.partition, r.offset]
                       for tp, rs in batches.items() for r in rs]
            if records:
                self.event("records", records=records, generation=None)
            if records and self.style == "sync":
                await self.commit()


class AiokafkaHost:
    """The loop side: runs each command as a task and acks it when the call returned."""

    def __init__(self, out: DriverOutput) -> None:
        self.out = out
        self.members: dict[str, AiokafkaMember] = {}
        self.producer: Any = None
        self.done = asyncio.Event()

    def hello(self) -> Hello:
        import aiokafka

        return {"client": "aiokafka", "version": aiokafka.__version__,
                "assignors": loadable(ASSIGNORS, assignor_class), "profile": "java",
                "crash": "command", "static_membership": static_membership(),
                "commit_styles": self.commit_styles()}

    def commit_styles(self) -> list[str]:
        from aiokafka import AIOKafkaConsumer

        return offered(hasattr(AIOKafkaConsumer, "commit_async"))

    async def handle(self, command: Command) -> None:
        cmd, number = command.get("cmd"), int(command.get("id", -1))
        if cmd == "hello":
            try:
                self.out.ack(number, **self.hello())
            except Exception as exc:  # noqa: BLE001 - a release that cannot load says so
                self.out.ack(number, f"{type(exc).__name__}: {exc}")
            return
        member = self.members.get(str(command.get("member", "")))
        if cmd == "create":
            refused = refusal(command, self.commit_styles())
            if refused:
                self.out.ack(number, refused)
                return
            member = self.members[command["member"]] = AiokafkaMember(
                self.out, command["member"], style_of(command))
        try:
            if member is not None:
                async with member.lock:
                    await getattr(self, f"_do_{cmd}")(member, command)
            else:
                await getattr(self, f"_do_{cmd}")(command)
        except Exception as exc:  # noqa: BLE001 - reported in the ack
            self.out.ack(number, f"{type(exc).__name__}: {exc}")
        else:
            self.out.ack(number)

    async def _do_create(self, m: AiokafkaMember, command: Command) -> None:
        from aiokafka import AIOKafkaConsumer

        config = command.get("config") or {}
        auto, interval = auto_commit(config)
        m.consumer = AIOKafkaConsumer(
            bootstrap_servers=command["bootstrap"], group_id=command["group"],
            client_id=config.get("client_id", command["member"]),
            partition_assignment_strategy=tuple(assignor_class(a)
                                                for a in assignors_of(command)),
            session_timeout_ms=config.get("session_timeout_ms", 6000),
            heartbeat_interval_ms=config.get("heartbeat_interval_ms", 500),
            max_poll_interval_ms=config.get("max_poll_interval_ms", 6000),
            rebalance_timeout_ms=config.get("max_poll_interval_ms", 6000),
            metadata_max_age_ms=config.get("metadata_max_age_ms", 300000),
            auto_offset_reset=config.get("auto_offset_reset", "earliest"),
            enable_auto_commit=auto,
            **({"auto_commit_interval_ms": interval} if interval is not None else {}),
            **({"request_timeout_ms": config["request_timeout_ms"]}
               if "request_timeout_ms" in config else {}),
            **static_settings(command, "group_instance_id"))
        m.consumer.subscribe(list(command["topics"]), listener=m.listener())
        await m.consumer.start()
        m.task = asyncio.ensure_future(m.poll_loop())

    async def _do_subscribe(self, m: AiokafkaMember, command: Command) -> None:
        before = _tps(m.consumer.assignment())
        m.consumer.subscribe(list(command["topics"]), listener=m.listener())
        m.event("subscribed", topics=list(command["topics"]), before=parts(before),
                after=parts(_tps(m.consumer.assignment())))

    async def _do_unsubscribe(self, m: AiokafkaMember, command: Command) -> None:
        m.consumer.unsubscribe()

    async def _do_pause(self, m: AiokafkaMember, command: Command) -> None:
        from aiokafka import TopicPartition

        owned = set(_tps(m.consumer.assignment()))
        mine = sorted(tp for tp in map(pair, command["partitions"]) if tp in owned)
        m.consumer.pause(*(TopicPartition(t, p) for t, p in mine))
        m.event("paused", partitions=parts(mine))

    async def _do_resume(self, m: AiokafkaMember, command: Command) -> None:
        from aiokafka import TopicPartition

        wanted = sorted(map(pair, command["partitions"]))
        m.consumer.resume(*(TopicPartition(t, p) for t, p in wanted))
        m.event("resumed", partitions=parts(wanted))

    async def _do_stop_polling(self, m: AiokafkaMember, command: Command) -> None:
        m.polling.clear()

    async def _do_start_polling(self, m: AiokafkaMember, command: Command) -> None:
        m.polling.set()

    async def _do_slow_revoke(self, m: AiokafkaMember, command: Command) -> None:
        m.slow_ms = int(command["ms"])

    async def _stop_task(self, m: AiokafkaMember) -> None:
        if m.task is not None:
            m.task.cancel()
            await asyncio.gather(m.task, return_exceptions=True)
            m.task = None

    async def _do_close(self, m: AiokafkaMember, command: Command) -> None:
        m.slow_ms = 0
        await self._stop_task(m)
        await m.consumer.stop()
        m.event("closed")

    async def _do_crash(self, m: AiokafkaMember, command: Command) -> None:
        m.muted = True
        await self._stop_task(m)
        coordinator = m.consumer._coordinator
        coordinator._coordination_task.cancel()
        await asyncio.gather(coordinator._coordination_task, return_exceptions=True)
        await coordinator._stop_heartbeat_task()
        await m.consumer._fetcher.close()
        await m.consumer._client.close()

    async def _do_produce(self, command: Command) -> None:
        from aiokafka import AIOKafkaProducer

        if self.producer is None:
            self.producer = AIOKafkaProducer(bootstrap_servers=command["bootstrap"])
            await self.producer.start()
        await self.producer.send_and_wait(command["topic"], str(command.get("value", ""))
                                          .encode(), partition=int(command["partition"]))

    async def _do_shutdown(self, command: Command) -> None:
        for m in self.members.values():
            if not m.muted and m.consumer is not None and not m.consumer._closed:
                async with m.lock:
                    await self._stop_task(m)
                    await m.consumer.stop()
        if self.producer is not None:
            await self.producer.stop()
        self.done.set()


async def amain() -> None:
    loop = asyncio.get_running_loop()
    host = AiokafkaHost(DriverOutput())
    pending: set[asyncio.Task[None]] = set()

    def submit(line: str) -> None:
        command = command_of(line)
        if command is not None:
            task = loop.create_task(host.handle(command))
            pending.add(task)
            task.add_done_callback(pending.discard)

    def read() -> None:
        for line in sys.stdin:
            if line.strip():
                loop.call_soon_threadsafe(submit, line)
        loop.call_soon_threadsafe(host.done.set)

    threading.Thread(target=read, daemon=True).start()
    await host.done.wait()
    await asyncio.wait(list(pending), timeout=15)  # the shutdown's own ack goes out


def warm() -> None:
    """Import the client library ahead of any consumer (the fork server does, once)."""
    import aiokafka  # noqa: F401


def main() -> None:
    asyncio.run(amain())


if __name__ == "__main__":
    main()
