"""Member driver for librdkafka (confluent-kafka's `Consumer`): ``python -m
groupcheck.targets.wire.drivers.librdkafka_member``.

Each consumer polls on its own thread (`host.ThreadedHost`). librdkafka wants the application
to apply a rebalance itself inside the callback — ``assign`` / ``unassign`` under eager,
``incremental_assign`` / ``incremental_unassign`` under cooperative — so the callback's end is
logged after that call returned. The generation is read from the serialized consumer group
metadata (``CGMDv2:``, a native int32 generation, then NUL-terminated group and member ids):
the Python client has no accessor for it. librdkafka cannot end a consumer without leaving the
group (its close always sends LeaveGroup), so this driver says ``"crash": "kill"``: each member
gets a process of its own and a crash is SIGKILL.

A ``create`` with ``assignors`` sets the whole list as ``partition.assignment.strategy``
(comma-separated, in preference order); a list librdkafka refuses (it takes no list mixing
eager and cooperative assignors) fails the create with librdkafka's own error. The callbacks
apply a change incrementally when the list is all cooperative assignors — the one case in
which librdkafka's group speaks the cooperative protocol (confluent-kafka exposes no
accessor for the protocol). ``hello`` lists the assignors this release has: each of Kafka's
names is tried as the strategy of a consumer that is created and closed again without ever
contacting a broker.

Commits (every style): ``sync`` and ``revoke`` call ``commit(asynchronous=False)``, which
returns what it committed; ``async`` calls ``commit(asynchronous=True)``; the ``on_commit``
callback (served by ``poll``) reports the async commits and the auto-commits, librdkafka's
commit on revoke included. librdkafka's ``_NO_OFFSET`` (nothing new to commit: no request
sent) is no commit. The generation of a ``records`` or ``commit`` event is the group
metadata's, as for the callbacks.
"""

from __future__ import annotations

import sys
from typing import Any

from .commits import Commits, Record, auto_commit, failure, offered
from .host import (
    Listener,
    ThreadedHost,
    TopicPartition,
    assignors_of,
    serve,
    static_settings,
)
from .messages import Command, Hello

__all__ = ["ASSIGNORS", "COOPERATIVE", "POLL_SECONDS", "LibrdkafkaClient",
           "available_assignors", "commit_reporter", "group_metadata", "main",
           "static_membership"]

#: Kafka's assignor names, in the order ``hello`` lists the ones this release has
ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
COOPERATIVE = ("cooperative-sticky",)
POLL_SECONDS = 0.05


def available_assignors() -> list[str]:
    """The assignors this librdkafka takes: a consumer per name, created and closed, never
    connected (no ``bootstrap.servers``)."""
    from confluent_kafka import Consumer, KafkaException

    found = []
    for name in ASSIGNORS:
        try:
            probe = Consumer({"group.id": "groupcheck-probe", "log_level": 0,
                              "partition.assignment.strategy": name})
        except KafkaException:
            continue
        probe.close()
        found.append(name)
    return found


def static_membership() -> bool:
    """Whether this librdkafka takes ``group.instance.id`` (KIP-345): a probe consumer, as
    for the assignors."""
    from confluent_kafka import Consumer, KafkaException

    try:
        probe = Consumer({"group.id": "groupcheck-probe", "log_level": 0,
                          "group.instance.id": "groupcheck-probe"})
    except KafkaException:
        return False
    probe.close()
    return True


def group_metadata(consumer: Any) -> tuple[int | None, str | None]:
    raw = bytes(consumer.consumer_group_metadata())
    if not raw.startswith(b"CGMDv2:") or len(raw) < 11:
        memberid = getattr(consumer, "memberid", None)  # absent before confluent-kafka 2.0
        return None, (str(memberid() or "") or None) if memberid is not None else None
    generation = int.from_bytes(raw[7:11], sys.byteorder, signed=True)
    _group, _, rest = raw[11:].partition(b"\0")
    member_id, _, _ = rest.partition(b"\0")
    return generation, member_id.decode("utf-8", "replace")


def _tps(parts: list[Any]) -> list[TopicPartition]:
    return sorted((p.topic, p.partition) for p in parts)


def _offsets(parts: list[Any]) -> list[Record]:
    """The valid offsets of a list of ``TopicPartition`` (librdkafka's -1001 is none)."""
    return sorted((p.topic, p.partition, p.offset) for p in parts or [] if p.offset >= 0)


def _nothing_to_commit(error: Any) -> bool:
    from confluent_kafka import KafkaError

    code = getattr(error, "code", None)
    return code is not None and code() == KafkaError._NO_OFFSET


def commit_reporter(commits: Commits) -> Any:
    """The ``on_commit`` callback: each async or auto commit's outcome, per ``commits``."""

    def on_commit(error: Any, partitions: list[Any]) -> None:
        if _nothing_to_commit(error):
            return
        failed = [p.error for p in partitions or [] if p.error is not None]
        first = error if error is not None else (failed[0] if failed else None)
        commits.report(_offsets(partitions), "ok" if first is None else str(first.str()))

    return on_commit


class LibrdkafkaClient:
    """confluent-kafka behind `host.ThreadedClient`."""

    def __init__(self) -> None:
        self.cooperative: dict[int, bool] = {}
        self._producer: Any = None

    def hello(self) -> Hello:
        import confluent_kafka

        return {"client": "librdkafka", "version": confluent_kafka.libversion()[0],
                "assignors": available_assignors(), "profile": "librdkafka", "crash": "kill",
                "static_membership": static_membership(), "commit_styles": self.commit_styles()}

    def commit_styles(self) -> list[str]:
        from confluent_kafka import Consumer

        return offered("asynchronous" in (Consumer.commit.__doc__ or ""))

    def create(self, command: Command, listener: Listener) -> Any:
        from confluent_kafka import Consumer

        config = command.get("config") or {}
        assignors = assignors_of(command)
        auto, interval = auto_commit(config)
        style = listener.commits.style
        consumer = Consumer({
            "bootstrap.servers": command["bootstrap"], "group.id": command["group"],
            "client.id": config.get("client_id", command["member"]),
            "partition.assignment.strategy": ",".join(assignors),
            "session.timeout.ms": config.get("session_timeout_ms", 6000),
            "heartbeat.interval.ms": config.get("heartbeat_interval_ms", 500),
            "max.poll.interval.ms": config.get("max_poll_interval_ms", 6000),
            "topic.metadata.refresh.interval.ms": config.get("metadata_max_age_ms", 300000),
            "auto.offset.reset": config.get("auto_offset_reset", "earliest"),
            "enable.auto.commit": auto,
            **({"auto.commit.interval.ms": interval} if interval is not None else {}),
            **({"on_commit": commit_reporter(listener.commits)}
               if style in ("auto", "async") else {}),
            "log_level": 3, **static_settings(command, "group.instance.id"),
            **({"socket.timeout.ms": config["request_timeout_ms"]}
               if "request_timeout_ms" in config else {})})
        self.cooperative[id(consumer)] = all(a in COOPERATIVE for a in assignors)
        self.subscribe(consumer, list(command["topics"]), listener)
        return consumer

    def subscribe(self, consumer: Any, topics: list[str], listener: Listener) -> None:
        cooperative = self.cooperative[id(consumer)]

        def on_assign(c: Any, ps: list[Any]) -> None:
            listener.callback("assigned", _tps(ps), lambda: (
                c.incremental_assign if cooperative else c.assign)(ps))

        def on_revoke(c: Any, ps: list[Any]) -> None:
            listener.callback("revoked", _tps(ps), lambda: (
                c.incremental_unassign(ps) if cooperative else c.unassign()))

        def on_lost(c: Any, ps: list[Any]) -> None:
            listener.callback("lost", _tps(ps), lambda: (
                c.incremental_unassign(ps) if cooperative else c.unassign()))

        consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)

    def unsubscribe(self, consumer: Any) -> None:
        consumer.unsubscribe()

    def assignment(self, consumer: Any) -> list[TopicPartition]:
        return _tps(consumer.assignment())

    def pause(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        consumer.pause([KafkaTopicPartition(t, p) for t, p in partitions])

    def resume(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        from confluent_kafka import TopicPartition as KafkaTopicPartition

        consumer.resume([KafkaTopicPartition(t, p) for t, p in partitions])

    def poll(self, consumer: Any) -> list[Record]:
        message = consumer.poll(POLL_SECONDS)
        if message is None:
            return []
        if message.error() is not None:
            raise RuntimeError(str(message.error().str()))
        return [(message.topic(), message.partition(), message.offset())]

    def close(self, consumer: Any) -> None:
        consumer.close()

    def crash(self, consumer: Any) -> None:
        raise RuntimeError("librdkafka cannot crash in-process; the harness kills the driver")

    def membership(self, consumer: Any) -> tuple[int | None, str | None]:
        return group_metadata(consumer)

    def generation(self, consumer: Any) -> int | None:
        return group_metadata(consumer)[0]

    def positions(self, consumer: Any) -> list[Record]:
        return _offsets(consumer.position(consumer.assignment()))

    def commit(self, consumer: Any) -> list[Record] | None:
        from confluent_kafka import KafkaException

        try:
            return _offsets(consumer.commit(asynchronous=False))
        except KafkaException as exc:
            if _nothing_to_commit(exc.args[0] if exc.args else None):
                return []
            raise

    def commit_async(self, consumer: Any, commits: Commits) -> None:
        try:
            consumer.commit(asynchronous=True)
        except Exception as exc:  # noqa: BLE001 - refused at once: on_commit will not run
            if not _nothing_to_commit(exc.args[0] if exc.args else None):
                commits.report(self.positions(consumer), failure(exc))

    def paused(self, consumer: Any) -> list[TopicPartition] | None:
        return None  # confluent-kafka cannot tell which partitions are paused

    def produce(self, bootstrap: str, topic: str, partition: int, value: str) -> None:
        from confluent_kafka import Producer

        if self._producer is None:
            self._producer = Producer({"bootstrap.servers": bootstrap, "log_level": 3})
        self._producer.produce(topic, value.encode(), partition=partition)
        if self._producer.flush(15) != 0:
            raise TimeoutError(f"a record to {topic}-{partition} was not delivered in 15s")


def warm() -> None:
    """Import the client library ahead of any consumer (the fork server does, once)."""
    import confluent_kafka  # noqa: F401


def main() -> None:
    serve(ThreadedHost(LibrdkafkaClient()).handle)


if __name__ == "__main__":
    main()
