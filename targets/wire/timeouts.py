"""How long a member waits for an answer: the request timeout each client runs with under
its member driver, per API, and a broker delay that outlasts it.

What lives here: `request_timeout_ms` (from a driver's config, or the client's default) and
`past_request_timeout` (seconds for the broker's delay rule, the timeout plus a margin).

Theory of operation: the drivers pass ``request_timeout_ms`` through when the harness sets
it (kafka-python's ``request_timeout_ms``, librdkafka's ``socket.timeout.ms``) and leave the
client's default otherwise. librdkafka gives JoinGroup (v1 and later) its own timeout,
``max.poll.interval.ms`` plus a 3 s grace, since the coordinator may park a join that long;
kafka-python waits ``request_timeout_ms`` for every request, JoinGroup included. Clients
whose timeouts are not modelled here are refused rather than guessed.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["DEFAULT_REQUEST_TIMEOUT_MS", "past_request_timeout", "request_timeout_ms"]

#: each modelled client's own request timeout, when its driver sets none
DEFAULT_REQUEST_TIMEOUT_MS = {"kafka-python": 305_000, "librdkafka": 60_000}
_JOIN_GRACE_MS = 3000  # librdkafka's grace on a JoinGroup's timeout
_DRIVER_MAX_POLL_MS = 6000  # the drivers' max_poll_interval_ms when the config sets none


def request_timeout_ms(client: str, config: Mapping[str, object], api: str) -> int:
    """How long a member of ``client`` run with driver ``config`` waits for an ``api``
    answer before it gives the request up."""
    if client not in DEFAULT_REQUEST_TIMEOUT_MS:
        raise ValueError(f"the request timeout of {client!r} is not modelled; one of "
                         f"{', '.join(sorted(DEFAULT_REQUEST_TIMEOUT_MS))}")
    if client == "librdkafka" and api == "JoinGroup":
        return _millis(config.get("max_poll_interval_ms", _DRIVER_MAX_POLL_MS)) + _JOIN_GRACE_MS
    return _millis(config.get("request_timeout_ms", DEFAULT_REQUEST_TIMEOUT_MS[client]))


def past_request_timeout(client: str, config: Mapping[str, object], api: str,
                         margin_s: float = 1.0) -> float:
    """Seconds a broker delay rule waits so that the member has timed the request out."""
    return request_timeout_ms(client, config, api) / 1000 + margin_s


def _millis(value: object) -> int:
    if not isinstance(value, int):
        raise ValueError(f"a timeout in milliseconds, not {value!r}")
    return value
