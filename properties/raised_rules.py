"""I15, errors that reach the application: a client's poll() raises no exception for an
error the client retries on its own (`retriable_raised`).

Kafka's client handles a retriable coordinator error (one whose exception is a
``RetriableException``: the coordinator moved, is not available or is still loading) by
finding the coordinator again and retrying; the application never sees it. A client that
raises one from poll() hands the application a failure it is not meant to handle.
"""

from __future__ import annotations

from collections.abc import Iterable

from .group import RaisedError

__all__ = ["retriable_raised"]


def retriable_raised(raised: Iterable[RaisedError]) -> list[str]:
    """A violation for each exception raised for a retriable error."""
    return [f"I15: {r.member}'s poll() raised {r.error} to the application, an error its "
            f"client should retry on its own ({r.text})" for r in raised if r.retriable]
