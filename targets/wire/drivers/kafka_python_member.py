"""Member driver for kafka-python's `KafkaConsumer`: ``python -m
groupcheck.targets.wire.drivers.kafka_python_member``.

Each consumer polls on its own thread (`host.ThreadedHost`) with a `ConsumerRebalanceListener`
whose three methods — ``on_partitions_revoked``, ``on_partitions_assigned`` and
``on_partitions_lost`` (kafka-python 3 has it: an evicted member reports its partitions lost)
— report through `host.Listener`. kafka-python applies the change itself, so the listener
only reports; its callbacks run on the client's own IO loop, which also sends the heartbeats.
The generation and member id are read from the coordinator's current generation without its
lock (see `KafkaPythonClient.membership`). Profile ``java``: kafka-python documents its
listener as a port of Java's (the same guarantees, word for word), so it is held to what Java
ships; what it does differently is a finding. Crash: ``"kill"`` (its close always leaves the group).
A ``create``'s ``assignors`` become its ``partition_assignment_strategy`` list of classes;
``hello`` lists the assignors whose class this release has (older ones have no cooperative
module).

Commits (every style): ``sync`` calls ``commit()``, ``async`` ``commit_async(callback=...)``;
the ``default_offset_commit_callback`` reports the auto-commits made between polls, in the
releases that call it for them (3.x; 2.0.2 does not: no event), never the one before a
rebalance or at ``close()`` (called with its defaults, as applications call it). ``revoke``
calls ``commit()`` in the listener where the listener runs in ``poll`` (2.x); kafka-python 3
runs it on its IO thread, where ``commit()`` raises rather than block, and asks a listener that
does IO to be async: there the driver's listener is an ``AsyncConsumerRebalanceListener`` that
awaits ``commit_async()``. What a commit commits is the subscription's consumed offsets, read
where ``commit()`` reads them (no public accessor). The generation of a ``records`` or
``commit`` event is the public ``group_metadata()``'s (None in the releases without it), but
for a commit on the IO thread: the callback's own.
"""

from __future__ import annotations

from typing import Any

from ...client_assignors import KAFKA_PYTHON as ASSIGNORS
from ...client_assignors import load_class
from .commits import OK, Commits, Record, auto_commit, failure, offered
from .host import (
    Listener,
    ThreadedHost,
    TopicPartition,
    assignors_of,
    loadable,
    serve,
    static_settings,
)
from .messages import Command, Hello

__all__ = ["POLL_MS", "KafkaPythonClient", "assignor_class", "commit_reporter", "main",
           "rebalance_listener", "static_membership"]

POLL_MS = 50


def assignor_class(name: str) -> Any:
    return load_class(ASSIGNORS[name])


def static_membership() -> bool:
    """Whether this release's KafkaConsumer takes ``group_instance_id`` (kafka-python 2.0
    has no such setting; 2.1 and later have it)."""
    from kafka import KafkaConsumer

    return "group_instance_id" in KafkaConsumer.DEFAULT_CONFIG


def _tps(partitions: Any) -> list[TopicPartition]:
    return sorted((tp.topic, tp.partition) for tp in partitions)


def _offsets(offsets: Any) -> list[Record]:
    """A ``{TopicPartition: OffsetAndMetadata}`` map as committed offsets."""
    return sorted((tp.topic, tp.partition, int(meta.offset)) for tp, meta in offsets.items())


def commit_reporter(commits: Commits) -> Any:
    """A commit callback (``callback(offsets, response or exception)``) reporting to
    ``commits``."""

    def on_commit(offsets: Any, response: Any) -> None:
        commits.report(_offsets(offsets),
                       failure(response) if isinstance(response, Exception) else "ok")

    return on_commit


def rebalance_listener(listener: Listener, consumer: Any) -> Any:
    """The listener that reports to ``listener``; for style ``revoke`` on a kafka-python that
    runs listeners on its IO thread, the one that commits there (`committing_listener`)."""
    import kafka

    if listener.revoke_commit is not None and hasattr(kafka, "AsyncConsumerRebalanceListener"):
        return committing_listener(listener, consumer)
    from kafka import ConsumerRebalanceListener

    class KafkaPythonReporter(ConsumerRebalanceListener):  # type: ignore[misc]  # untyped base (Any)
        def on_partitions_revoked(self, revoked: Any) -> None:
            listener.callback("revoked", _tps(revoked))

        def on_partitions_assigned(self, assigned: Any) -> None:
            listener.callback("assigned", _tps(assigned))

        def on_partitions_lost(self, lost: Any) -> None:
            listener.callback("lost", _tps(lost))

    return KafkaPythonReporter()


def committing_listener(listener: Listener, consumer: Any) -> Any:
    """Style ``revoke`` on kafka-python 3, whose listener runs on its IO thread, where a
    blocking ``commit()`` raises: the listener kafka-python asks for when a callback does IO
    (async), awaiting ``commit_async()`` inside ``on_partitions_revoked``."""
    from kafka import AsyncConsumerRebalanceListener

    class KafkaPythonCommitter(AsyncConsumerRebalanceListener):  # type: ignore[misc]  # untyped base (Any)
        async def on_partitions_revoked(self, revoked: Any) -> None:
            fields = listener.begin("revoked", _tps(revoked))
            if revoked:
                await _awaited_commit(consumer, listener.commits, fields["generation"])
            listener.finish(fields)

        async def on_partitions_assigned(self, assigned: Any) -> None:
            listener.callback("assigned", _tps(assigned))

        async def on_partitions_lost(self, lost: Any) -> None:
            listener.callback("lost", _tps(lost))

    return KafkaPythonCommitter()


async def _awaited_commit(consumer: Any, commits: Commits, generation: int | None) -> None:
    """``await commit_async()`` of the current positions, reported with the callback's
    generation (``group_metadata()`` takes a lock the polling thread may hold)."""
    before = _offsets(consumer._subscription.all_consumed_offsets())
    if not before:
        return
    try:
        await consumer.commit_async()
    except Exception as exc:  # noqa: BLE001 - the client's error is the outcome
        commits.report_at(before, failure(exc), generation)
    else:
        commits.report_at(before, OK, generation)


class KafkaPythonClient:
    """kafka-python behind `host.ThreadedClient`."""

    def __init__(self) -> None:
        self._producer: Any = None

    def hello(self) -> Hello:
        import kafka

        return {"client": "kafka-python", "version": kafka.__version__,
                "assignors": loadable(ASSIGNORS, assignor_class), "profile": "java",
                "crash": "kill", "static_membership": static_membership(),
                "commit_styles": self.commit_styles()}

    def commit_styles(self) -> list[str]:
        from kafka import KafkaConsumer

        return offered(hasattr(KafkaConsumer, "commit_async"))

    def create(self, command: Command, listener: Listener) -> Any:
        from kafka import KafkaConsumer

        config = command.get("config") or {}
        auto, interval = auto_commit(config)
        consumer = KafkaConsumer(
            bootstrap_servers=command["bootstrap"], group_id=command["group"],
            client_id=config.get("client_id", command["member"]),
            partition_assignment_strategy=[assignor_class(a) for a in assignors_of(command)],
            session_timeout_ms=config.get("session_timeout_ms", 6000),
            heartbeat_interval_ms=config.get("heartbeat_interval_ms", 500),
            max_poll_interval_ms=config.get("max_poll_interval_ms", 6000),
            metadata_max_age_ms=config.get("metadata_max_age_ms", 300000),
            auto_offset_reset=config.get("auto_offset_reset", "earliest"),
            enable_auto_commit=auto,
            **({"auto_commit_interval_ms": interval} if interval is not None else {}),
            **({"default_offset_commit_callback": commit_reporter(listener.commits)}
               if listener.commits.style == "auto" else {}),
            **({"request_timeout_ms": config["request_timeout_ms"]}
               if "request_timeout_ms" in config else {}),
            **static_settings(command, "group_instance_id"))
        self.subscribe(consumer, list(command["topics"]), listener)
        return consumer

    def subscribe(self, consumer: Any, topics: list[str], listener: Listener) -> None:
        consumer.subscribe(topics, listener=rebalance_listener(listener, consumer))

    def unsubscribe(self, consumer: Any) -> None:
        consumer.unsubscribe()

    def assignment(self, consumer: Any) -> list[TopicPartition]:
        return _tps(consumer.assignment())

    def pause(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        from kafka import TopicPartition as KafkaTopicPartition

        consumer.pause(*(KafkaTopicPartition(t, p) for t, p in partitions))

    def resume(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        from kafka import TopicPartition as KafkaTopicPartition

        consumer.resume(*(KafkaTopicPartition(t, p) for t, p in partitions))

    def poll(self, consumer: Any) -> list[Record]:
        batches = consumer.poll(timeout_ms=POLL_MS)
        return [(tp.topic, tp.partition, r.offset) for tp, rs in batches.items() for r in rs]

    def close(self, consumer: Any) -> None:
        consumer.close()  # as applications close it: auto-commit (when on) commits first

    def crash(self, consumer: Any) -> None:
        raise RuntimeError("kafka-python crashes by kill; the harness kills the driver")

    def membership(self, consumer: Any) -> tuple[int | None, str | None]:
        """Read without the coordinator's lock: the public ``group_metadata()`` takes it, and
        a callback runs on the IO loop while the polling thread may hold it (a deadlock)."""
        generation = getattr(consumer._coordinator, "_generation", None)
        if generation is None:
            return None, None
        return int(generation.generation_id), str(generation.member_id or "") or None

    def generation(self, consumer: Any) -> int | None:
        metadata = getattr(consumer, "group_metadata", None)  # absent in older releases
        generation = getattr(metadata(), "generation_id", None) if metadata else None
        return None if generation is None else int(generation)

    def positions(self, consumer: Any) -> list[Record]:
        return _offsets(consumer._subscription.all_consumed_offsets())

    def commit(self, consumer: Any) -> list[Record] | None:
        consumer.commit()
        return None

    def commit_async(self, consumer: Any, commits: Commits) -> None:
        before = self.positions(consumer)
        try:
            consumer.commit_async(callback=commit_reporter(commits))
        except Exception as exc:  # noqa: BLE001 - refused at once: no callback will run
            commits.report(before, failure(exc))

    def paused(self, consumer: Any) -> list[TopicPartition] | None:
        return _tps(consumer.paused())

    def produce(self, bootstrap: str, topic: str, partition: int, value: str) -> None:
        from kafka import KafkaProducer

        if self._producer is None:
            self._producer = KafkaProducer(bootstrap_servers=bootstrap)
        self._producer.send(topic, value.encode(), partition=partition).get(timeout=15)


def warm() -> None:
    """Import the client library ahead of any consumer (the fork server does, once)."""
    import kafka  # noqa: F401


def main() -> None:
    serve(ThreadedHost(KafkaPythonClient()).handle)


if __name__ == "__main__":
    main()
