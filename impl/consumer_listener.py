"""The rebalance listener: client profiles, callback invocation, the callback log, errors.

What lives here: everything about *calling the user* during a rebalance — which callback
sets are invoked (`ConsumerBehaviour`: what groupcheck's consumer does under its client
profile), how a throwing callback
is handled (KIP-429, KAFKA-9620), and the log of every invocation the harness checks I7
against. The membership state machine that decides *when* to call lives in `consumer`.

Theory of operation: `CallbackRunner.invoke` logs the call, runs it, and keeps the first
exception; the consumer keeps going (a callback is a notification, KIP-429: its exception
changes no assignment) and `take_error` hands the first exception to ``poll``, wrapped as
Kafka's client does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from .group_messages import Errors
from .javahash import java_string_key
from .types import TopicPartition

__all__ = ["ON_PARTITIONS_ASSIGNED", "ON_PARTITIONS_LOST", "ON_PARTITIONS_REVOKED", "PROFILES",
           "CallbackCall", "CallbackRunner", "ConsumerBehaviour", "ConsumerConfigError",
           "ConsumerError", "ConsumerRebalanceListener", "ConsumerStateError", "RebalanceListener",
           "profile_named"]

ON_PARTITIONS_REVOKED = "on_partitions_revoked"
ON_PARTITIONS_ASSIGNED = "on_partitions_assigned"
ON_PARTITIONS_LOST = "on_partitions_lost"


class ConsumerError(Exception):
    """Kafka's ``KafkaException`` (or the ``ApiException`` named by ``kafka_class``).

    ``error`` is the protocol error code behind it, if any. A callback's exception that is
    not a `ConsumerError` reaches ``poll`` wrapped in one, as its ``__cause__`` (KAFKA-9620).
    """

    def __init__(self, message: str, *, kafka_class: str = "KafkaException",
                 error: Errors | None = None) -> None:
        super().__init__(message)
        self.kafka_class = kafka_class
        self.error = error


class ConsumerStateError(RuntimeError):
    """An event the consumer cannot handle in its state (Kafka: ``IllegalStateException``)."""

    kafka_class = "IllegalStateException"


class ConsumerConfigError(ValueError):
    """A configuration Kafka's client would refuse (``IllegalArgumentException``)."""

    kafka_class = "IllegalArgumentException"


@dataclass(frozen=True)
class ConsumerBehaviour:
    """What groupcheck's consumer does under one client profile, where the KIP texts
    (``kip``) and Kafka's shipped client (``java``) differ; each consumer follows one
    profile and is checked against its own (the judge's reading of a profile is
    ``properties.membership.ClientProfile``).

    - ``assigned_when_empty``: invoke on_partitions_assigned even with nothing added.
    - ``eager_revoked_when_empty``: under EAGER, invoke on_partitions_revoked on every rejoin
      of a valid generation, even with nothing owned.
    - ``revoke_before_assign``: COOPERATIVE onJoinComplete order; False is KIP-429's example
      (on_partitions_assigned(added), then on_partitions_revoked(revoked)).
    - ``restore_pauses``: KIP-822, pauses of partitions still assigned survive a rebalance.
    """

    name: str
    assigned_when_empty: bool
    eager_revoked_when_empty: bool
    revoke_before_assign: bool
    restore_pauses: bool


PROFILES: dict[str, ConsumerBehaviour] = {
    "kip": ConsumerBehaviour("kip", assigned_when_empty=False, eager_revoked_when_empty=False,
                         revoke_before_assign=False, restore_pauses=True),
    "java": ConsumerBehaviour("java", assigned_when_empty=True, eager_revoked_when_empty=True,
                          revoke_before_assign=True, restore_pauses=False),
}


def profile_named(name: str) -> ConsumerBehaviour:
    try:
        return PROFILES[name]
    except KeyError:
        raise ConsumerConfigError(
            f"unknown client profile {name!r}; expected one of {', '.join(PROFILES)}") from None


class ConsumerRebalanceListener(Protocol):
    """Kafka's ``ConsumerRebalanceListener``; partitions arrive sorted by (topic, partition)."""

    def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None: ...

    def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None: ...

    def on_partitions_lost(self, partitions: list[TopicPartition]) -> None: ...


class RebalanceListener:
    """A listener that does nothing; as in Java, ``on_partitions_lost`` defaults to
    ``on_partitions_revoked``. Subclass it and override what you need."""

    def on_partitions_revoked(self, partitions: list[TopicPartition]) -> None:
        return None

    def on_partitions_assigned(self, partitions: list[TopicPartition]) -> None:
        return None

    def on_partitions_lost(self, partitions: list[TopicPartition]) -> None:
        self.on_partitions_revoked(partitions)


@dataclass(frozen=True)
class CallbackCall:
    """One invocation, as the consumer made it: ``generation`` and ``member_id`` are the
    consumer's at the time of the call; ``error`` is ``repr`` of what the callback raised."""

    name: str
    partitions: tuple[TopicPartition, ...]
    generation: int
    member_id: str
    reason: str
    error: str | None = None


def _sorted_partitions(partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """Kafka's TopicPartition order: topic (Java ``String.compareTo``), then partition."""
    return sorted(partitions, key=lambda tp: (java_string_key(tp[0]), tp[1]))


class CallbackRunner:
    """Invokes the listener, logs every call, keeps the first exception (KIP-429)."""

    def __init__(self, listener: ConsumerRebalanceListener) -> None:
        self.listener = listener
        self.log: list[CallbackCall] = []
        self.in_callback = False
        self._first_error: Exception | None = None

    def invoke(self, name: str, partitions: Iterable[TopicPartition], *, generation: int,
               member_id: str, reason: str) -> None:
        ordered = _sorted_partitions(partitions)
        error: Exception | None = None
        self.in_callback = True
        try:
            getattr(self.listener, name)(list(ordered))
        except Exception as exc:  # noqa: BLE001 - a callback may raise anything; BaseException
            error = exc          # (KeyboardInterrupt, SystemExit) propagates, like Java's
        finally:                 # WakeupException / InterruptException.
            self.in_callback = False
        self.log.append(CallbackCall(name, tuple(ordered), generation, member_id, reason,
                                     None if error is None else repr(error)))
        if error is not None and self._first_error is None:
            self._first_error = error

    def take_error(self) -> ConsumerError | None:
        """The first exception since the last call: a `ConsumerError` as it is, anything else
        wrapped as ``KafkaException("User rebalance callback throws an error")`` (KAFKA-9620)."""
        error, self._first_error = self._first_error, None
        if error is None or isinstance(error, ConsumerError):
            return error
        wrapped = ConsumerError("User rebalance callback throws an error")
        wrapped.__cause__ = error
        return wrapped
