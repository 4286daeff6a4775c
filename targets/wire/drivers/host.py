"""The driver side of the member-driver contract, for the drivers written in Python.

A driver reads commands from stdin and writes acks and events to stdout
(``docs/reference/member-driver-contract.md``, "Driving your own client"). `DriverOutput`
numbers and stamps every event (``seq`` per process, ``ts`` = ``time.monotonic_ns()``,
CLOCK_MONOTONIC) and writes whole lines under a lock, so threads of several consumers never
interleave. `ThreadedHost` runs each consumer of a blocking client (confluent-kafka,
kafka-python) on a thread of its own: the thread creates the consumer, then loops — a command
from its queue if there is one, else one ``poll`` — so the client is only ever called from the
thread that owns it, as an application would, and every command is acked from that thread once
the client call has returned. Callbacks go through `Listener.callback`, which logs their start,
runs the client's own change (where the client wants the application to apply it), and logs
their end. A revoke or lost callback that hands the partitions back itself (librdkafka's
``unassign``) logs its end just before that call: the client may rejoin before the call returns
(librdkafka's JoinGroup goes out from its own thread while the call is served), and another
member's assignment must not reach the harness before the line that ends this ownership; an
assign logs its end once its call returned. A member's commit style (`commits`): ``sync`` and
``async`` commit after each poll that returned records, ``revoke`` inside the revoke callback.
`serve` is the stdin loop. This module and the drivers built on it import only the standard
library, `messages` (the lines' shapes), `commits` and `client_assignors` (the client's own
library lazily): a client's release runs them on its own interpreter (``release_envs``' driver
bundle), Python 3.9 or newer.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, Any, Protocol, cast

from .commits import Commits, Record, refusal, style_of
from .fatal import fatal
from .messages import (
    Ack,
    AckError,
    CallbackFields,
    Command,
    DriverEvent,
    EventFields,
    Hello,
    JsonPartition,
)

if TYPE_CHECKING:  # Unpack is Python 3.11's; the drivers run on 3.9
    from typing import Unpack

__all__ = ["IDLE_SECONDS", "Listener", "MemberThread", "DriverOutput", "Record", "ThreadedClient",
           "ThreadedHost", "TopicPartition", "assignors_of", "command_of", "loadable", "pair",
           "parts", "serve", "static_settings"]

TopicPartition = tuple[str, int]
IDLE_SECONDS = 0.2  # how long a stalled member's thread blocks on its queue per turn


class DriverOutput:
    """Acks and events as JSON lines on one stream, one writer at a time."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stdout
        self.lock = threading.Lock()
        self.seq = 0

    def _write(self, message: Ack | DriverEvent) -> None:
        self.stream.write(json.dumps(message) + "\n")
        self.stream.flush()

    def event(self, name: str, member: str, **fields: Unpack[EventFields]) -> None:
        with self.lock:
            self._write({"event": name, "member": member, "seq": self.seq,
                         "ts": time.monotonic_ns(), **fields})
            self.seq += 1

    def ack(self, number: int, error: str | None = None, **fields: Unpack[Hello]) -> None:
        failure: AckError = {"error": error} if error else {}
        with self.lock:
            self._write({"ack": number, **fields, **failure})


def assignors_of(command: Command) -> list[str]:
    """A ``create``'s assignors in preference order: its ``assignors`` list, else its one
    ``assignor``."""
    return [str(a) for a in command.get("assignors") or [command["assignor"]]]


def static_settings(command: Command, key: str) -> dict[str, str]:
    """``{key: instance id}`` for a ``create`` whose config names a group instance id
    (KIP-345), else nothing: a dynamic member's client is configured as before."""
    given = (command.get("config") or {}).get("group_instance_id")
    return {key: str(given)} if given else {}


def loadable(table: dict[str, str], load: Callable[[str], Any]) -> list[str]:
    """The names of ``table`` whose class this release of the client has."""
    found = []
    for name in table:
        try:
            load(name)
        except (ImportError, AttributeError):
            continue
        found.append(name)
    return found


def parts(partitions: Iterable[TopicPartition]) -> list[JsonPartition]:
    return [[t, p] for t, p in sorted(partitions)]


def pair(partition: JsonPartition) -> TopicPartition:
    """A command's ``[topic, partition]`` as a partition."""
    topic, number = partition
    return str(topic), int(number)


class Listener:
    """What every client's rebalance callback reports, whatever the client; ``commits``
    reports the member's commits, ``revoke_commit`` is its commit inside a revoke callback
    (style ``revoke``: before the callback ends, so before the client's own change)."""

    def __init__(self, out: DriverOutput, member: str,
                 membership: Callable[[], tuple[int | None, str | None]],
                 paused: Callable[[], list[TopicPartition] | None],
                 commits: Commits | None = None) -> None:
        self.out, self.member, self.membership, self.paused = out, member, membership, paused
        self.slow_ms = 0
        self.commits = commits or Commits(out, member, "none", lambda: None)
        self.revoke_commit: Callable[[], None] | None = None

    def callback(self, kind: str, partitions: list[TopicPartition],
                 apply: Callable[[], None] | None = None) -> None:
        fields = self.begin(kind, partitions)
        if kind == "revoked" and partitions and self.revoke_commit is not None:
            self.revoke_commit()
        self.finish(fields, apply)

    def begin(self, kind: str, partitions: list[TopicPartition]) -> CallbackFields:
        """A callback's start (and a slow revoke's wait); `finish` ends it."""
        generation, member_id = self.membership()
        fields: CallbackFields = {"kind": kind, "partitions": parts(partitions),
                                  "generation": generation, "memberId": member_id}
        self.out.event("callback_start", self.member, **fields)
        if kind == "revoked" and partitions and self.slow_ms:
            slow, self.slow_ms = self.slow_ms, 0
            time.sleep(slow / 1000.0)
        return fields

    def finish(self, fields: CallbackFields, apply: Callable[[], None] | None = None) -> None:
        """A callback's end: after an assign's change, before a revoke's (see the module doc)."""
        if apply is not None and fields["kind"] == "assigned":
            apply()
        now_paused = self.paused()
        self.out.event("callback_end", self.member, **fields,
                       paused=None if now_paused is None else parts(now_paused))
        if apply is not None and fields["kind"] != "assigned":
            apply()


class ThreadedClient(Protocol):
    """One blocking client library, as `ThreadedHost` drives it."""

    def hello(self) -> Hello: ...

    def commit_styles(self) -> list[str]: ...

    def create(self, command: Command, listener: Listener) -> Any: ...

    def subscribe(self, consumer: Any, topics: list[str], listener: Listener) -> None: ...

    def unsubscribe(self, consumer: Any) -> None: ...

    def assignment(self, consumer: Any) -> list[TopicPartition]: ...

    def pause(self, consumer: Any, partitions: list[TopicPartition]) -> None: ...

    def resume(self, consumer: Any, partitions: list[TopicPartition]) -> None: ...

    def poll(self, consumer: Any) -> list[Record]: ...

    def close(self, consumer: Any) -> None: ...

    def crash(self, consumer: Any) -> None: ...

    def membership(self, consumer: Any) -> tuple[int | None, str | None]: ...

    def generation(self, consumer: Any) -> int | None: ...  # the public API's, else None

    def positions(self, consumer: Any) -> list[Record]: ...  # what a commit of them commits

    def commit(self, consumer: Any) -> list[Record] | None: ...  # sync; what it committed

    def commit_async(self, consumer: Any, commits: Commits) -> None: ...  # outcome: commits

    def paused(self, consumer: Any) -> list[TopicPartition] | None: ...

    def produce(self, bootstrap: str, topic: str, partition: int, value: str) -> None: ...


class MemberThread(threading.Thread):
    """One consumer on a thread of its own: commands from its queue, else a poll."""

    def __init__(self, client: ThreadedClient, out: DriverOutput, create: Command) -> None:
        super().__init__(name=f"member-{create['member']}", daemon=True)
        self.client, self.out, self.create_command = client, out, create
        self.member = str(create["member"])
        self.commands: queue.Queue[Command] = queue.Queue()
        self.polling = True
        self.consumer: Any = None
        self.style = style_of(create)
        self.listener = Listener(out, self.member, self._membership, self._paused,
                                 Commits(out, self.member, self.style, self._generation))
        if self.style == "revoke":
            self.listener.revoke_commit = self._commit_sync

    def _membership(self) -> tuple[int | None, str | None]:
        return (None, None) if self.consumer is None else self.client.membership(self.consumer)

    def _generation(self) -> int | None:
        return self.client.generation(self.consumer) if self.consumer is not None else None

    def _commit_sync(self) -> None:
        self.listener.commits.sync(lambda: self.client.positions(self.consumer),
                                   lambda: self.client.commit(self.consumer))

    def _paused(self) -> list[TopicPartition] | None:
        return self.client.paused(self.consumer) if self.consumer is not None else None

    def run(self) -> None:
        try:
            self.consumer = self.client.create(self.create_command, self.listener)
        except Exception as exc:  # noqa: BLE001 - the client's error is the answer
            self.out.ack(self.create_command["id"], f"{type(exc).__name__}: {exc}")
            return
        self.out.ack(self.create_command["id"])
        while True:
            try:
                command = self.commands.get(timeout=0 if self.polling else IDLE_SECONDS)
            except queue.Empty:
                command = None
            if command is not None:
                if self._run(command):
                    return
            elif self.polling:
                self._poll()

    def _poll(self) -> None:
        try:
            records = self.client.poll(self.consumer)
        except Exception as exc:  # noqa: BLE001 - an exception from poll is an event
            self.out.event("error", self.member, message=f"{type(exc).__name__}: {exc}",
                           raised_by="poll")
            self.polling = self.polling and not fatal(exc)
            return
        if not records:
            return
        self.out.event("records", self.member, records=[list(r) for r in records],
                       generation=self._generation())
        if self.style == "sync":
            self._commit_sync()
        elif self.style == "async":
            self.client.commit_async(self.consumer, self.listener.commits)

    def _run(self, command: Command) -> bool:
        """Run one command and ack it; True when the consumer is gone."""
        cmd = command["cmd"]
        error = None
        try:
            getattr(self, f"_do_{cmd}")(command)
        except Exception as exc:  # noqa: BLE001 - reported in the ack
            error = f"{type(exc).__name__}: {exc}"
            self.out.event("error", self.member, message=f"{cmd}: {error}")
        done = cmd in ("close", "crash")
        if cmd == "close":
            self.out.event("closed", self.member)
        self.out.ack(command["id"], error)
        return done

    def _do_subscribe(self, command: Command) -> None:
        before = self.client.assignment(self.consumer)
        self.client.subscribe(self.consumer, list(command["topics"]), self.listener)
        after = self.client.assignment(self.consumer)
        self.out.event("subscribed", self.member, topics=list(command["topics"]),
                       before=parts(before), after=parts(after))

    def _do_unsubscribe(self, command: Command) -> None:
        self.client.unsubscribe(self.consumer)

    def _do_pause(self, command: Command) -> None:
        owned = set(self.client.assignment(self.consumer))
        mine = sorted(tp for tp in map(pair, command["partitions"]) if tp in owned)
        self.client.pause(self.consumer, mine)
        self.out.event("paused", self.member, partitions=parts(mine))

    def _do_resume(self, command: Command) -> None:
        wanted = sorted(map(pair, command["partitions"]))
        self.client.resume(self.consumer, wanted)
        self.out.event("resumed", self.member, partitions=parts(wanted))

    def _do_stop_polling(self, command: Command) -> None:
        self.polling = False

    def _do_start_polling(self, command: Command) -> None:
        self.polling = True

    def _do_slow_revoke(self, command: Command) -> None:
        self.listener.slow_ms = int(command["ms"])

    def _do_close(self, command: Command) -> None:
        self.listener.slow_ms = 0
        self.client.close(self.consumer)

    def _do_crash(self, command: Command) -> None:
        self.client.crash(self.consumer)


class ThreadedHost:
    """Many consumers of one blocking client in this process."""

    def __init__(self, client: ThreadedClient, out: DriverOutput | None = None) -> None:
        self.client, self.out = client, out or DriverOutput()
        self.members: dict[str, MemberThread] = {}

    def handle(self, command: Command) -> bool:
        """Dispatch one command; False once the driver should exit."""
        cmd, number = command.get("cmd"), command.get("id", -1)
        if cmd == "hello":
            try:
                self.out.ack(number, **self.client.hello())
            except Exception as exc:  # noqa: BLE001 - a release that cannot load says so
                self.out.ack(number, f"{type(exc).__name__}: {exc}")
        elif cmd == "create":
            self._create(command)
        elif cmd == "produce":
            self._answer(number, lambda: self.client.produce(
                command["bootstrap"], command["topic"], int(command["partition"]),
                str(command.get("value", ""))))
        elif cmd == "shutdown":
            self.shutdown()
            self.out.ack(number)
            return False
        elif command.get("member") in self.members:
            self.members[command["member"]].commands.put(command)
        else:
            self.out.ack(number, f"unknown command or member: {json.dumps(command)[:200]}")
        return True

    def _create(self, command: Command) -> None:
        """A consumer on a thread of its own; a commit style the client lacks is refused."""
        refused = refusal(command, self.client.commit_styles())
        if refused:
            self.out.ack(command["id"], refused)
            return
        thread = MemberThread(self.client, self.out, command)
        self.members[thread.member] = thread
        thread.start()

    def _answer(self, number: int, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - reported in the ack
            self.out.ack(number, f"{type(exc).__name__}: {exc}")
        else:
            self.out.ack(number)

    def shutdown(self) -> None:
        for thread in self.members.values():
            if thread.is_alive():
                thread.commands.put({"id": -1, "cmd": "close"})
        for thread in self.members.values():
            thread.join(30)


def command_of(line: str) -> Command | None:
    """One line of stdin as a command; None when it is not a JSON object."""
    try:
        parsed = json.loads(line)
    except ValueError:
        return None
    # any JSON object: each command's handler reads (and converts) the fields it needs
    return cast(Command, parsed) if isinstance(parsed, dict) else None


def serve(handle: Callable[[Command], bool], stream: IO[str] | None = None) -> None:
    """Read commands until ``shutdown`` (or the end of stdin); the client's warnings go to
    stderr, which the harness keeps."""
    import faulthandler
    import logging
    import os
    import signal

    faulthandler.register(signal.SIGUSR1, file=sys.stderr)  # a stack dump on demand
    level = os.environ.get("GROUPCHECK_DRIVER_LOG", "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for line in stream or sys.stdin:
        command = command_of(line) if line.strip() else None
        if command is not None and not handle(command):
            return
