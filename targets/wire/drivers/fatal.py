"""Which errors a poll raises end the member's polling, as they end an application's.

Part of the drivers' bundle: the standard library only, Python 3.9 or newer.
"""

from __future__ import annotations

__all__ = ["fatal"]


def fatal(exc: BaseException) -> bool:
    """Whether ``exc`` from a poll is fatal to the consumer: a fenced static member
    (KIP-345: Kafka's clients document FencedInstanceIdException as fatal; an application
    that polled on would rejoin under the same instance id and fence its twin in turn) or an
    error the client itself marks fatal (librdkafka's ``KafkaError.fatal()``)."""
    if "FencedInstanceId" in type(exc).__name__:
        return True
    error = exc.args[0] if exc.args else None
    check = getattr(error, "fatal", None)
    return bool(check()) if callable(check) else False
