"""I15, errors that reach the application: a client's poll() raises no exception for an
error the client retries on its own, and none of its own making (`raised_to_application`).

Kafka's client handles a retriable coordinator error (one whose exception is a
``RetriableException``: the coordinator moved, is not available or is still loading) by
finding the coordinator again and retrying; the application never sees it. A client that
raises one from poll() hands the application a failure it is not meant to handle. An
exception of the client's own making (a language-level error naming no Kafka error: Kafka's
Java consumer 3.0.0 throws IllegalStateException from poll() when its own cooperative
assignor's answer breaks KIP-429's rules) is a bug the application can do nothing about.
"""

from __future__ import annotations

from collections.abc import Iterable

from .group import RaisedError

__all__ = ["exception_type", "raised_to_application"]


def exception_type(text: str) -> str:
    """The exception's type as the member drivers write it first (``IllegalStateException:
    …``)."""
    return text.split(":", 1)[0].strip()


def raised_to_application(raised: Iterable[RaisedError]) -> list[str]:
    """A violation for each exception raised for a retriable error or of the client's own
    making."""
    out = []
    for r in raised:
        if r.retriable:
            out.append(f"I15: {r.member}'s poll() raised {r.error} to the application, an "
                       f"error its client should retry on its own ({r.text})")
        elif r.internal:
            out.append(f"I15: {r.member}'s poll() raised {exception_type(r.text)} to the "
                       f"application, an exception of the client's own making ({r.text})")
    return out
