"""How long a member waits for an answer: the request timeout each shipped client runs with
under its member driver, per API, and a broker delay that outlasts it.

What lives here: `request_timeout_ms` (from a driver's config, or the client's default),
`past_request_timeout` (seconds for the broker's delay rule: the timeout plus a margin) and
`group_timeouts` (what I11's settle bound derives from for a group of these clients).

Theory of operation: the drivers pass ``request_timeout_ms`` through when the harness sets
it (kafka-python's and aiokafka's ``request_timeout_ms``, librdkafka's
``socket.timeout.ms``, Java's ``request.timeout.ms``, KafkaJS's ``requestTimeout``) and leave
the client's default otherwise. Group requests have
timeouts of their own. librdkafka gives JoinGroup ``max.poll.interval.ms`` plus a 3 s grace
(the coordinator may park a join that long), SyncGroup ``session.timeout.ms`` plus the
grace, Heartbeat ``session.timeout.ms`` and LeaveGroup 5 s; Kafka's Java client
(``request.timeout.ms``, every release from 2.8.0 on) gives JoinGroup the larger of its
request timeout and ``max.poll.interval.ms`` plus AbstractCoordinator's 5 s lapse, and
kafka-python (3.x, the harness's own) does the same, and so does KafkaJS 2 (``requestTimeout``,
30 s; JoinGroup the larger of it and ``rebalanceTimeout`` plus 5 s). KafkaJS 1.x enforces no
request timeout unless told to (``enforceRequestTimeout`` was off by default until 2.0.0): it
waits for every answer, so no delay outlasts it. aiokafka waits the one request timeout for
every answer, a JoinGroup's too (its connection's ``wait_for``; 40 s by default). A client (or
a release of one) whose timeouts are not modelled here is refused rather than guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...properties.settle_bound import GroupTimeouts

__all__ = ["DEFAULT_REQUEST_TIMEOUT_MS", "SETTLE_MARGIN_MS", "group_timeouts",
           "past_request_timeout", "request_timeout_ms"]

#: each modelled client's own request timeout, when its driver sets none
DEFAULT_REQUEST_TIMEOUT_MS = {"java": 30_000, "kafka-python": 30_000, "librdkafka": 60_000,
                              "aiokafka": 40_000, "kafkajs": 30_000}
#: the clients that give a JoinGroup the larger of their request timeout and the rebalance
#: timeout plus `_JOIN_MARGIN_MS`
_JOIN_AT_REBALANCE = frozenset({"java", "kafka-python", "kafkajs"})
#: the drivers' settings when the config names none
_DRIVER_DEFAULTS = {"session_timeout_ms": 6000, "max_poll_interval_ms": 6000,
                    "heartbeat_interval_ms": 500}
_RDKAFKA_GRACE_MS, _RDKAFKA_LEAVE_MS, _JOIN_MARGIN_MS = 3000, 5000, 5000
#: what a wire settle may take beyond the protocol's timeouts: drivers starting their
#: clients (a JVM, a Node process), a machine shared with other work
SETTLE_MARGIN_MS = 15_000


def request_timeout_ms(client: str, config: Mapping[str, object], api: str) -> int:
    """How long a member of ``client`` run with driver ``config`` waits for an ``api``
    answer before it gives the request up (every release of the Java client, ``java@V``,
    runs the same timeouts)."""
    name, _, version = client.partition("@")
    if name == "kafkajs" and version.startswith("1."):
        raise ValueError(f"KafkaJS {version} enforces no request timeout (its "
                         "enforceRequestTimeout is off by default): it waits for every answer")
    client = name if name in ("java", "kafkajs") else client
    if client not in DEFAULT_REQUEST_TIMEOUT_MS:
        raise ValueError(f"the request timeouts of {client!r} are not modelled; one of "
                         f"{', '.join(sorted(DEFAULT_REQUEST_TIMEOUT_MS))}")
    request = _setting(config, "request_timeout_ms", DEFAULT_REQUEST_TIMEOUT_MS[client])
    if client == "aiokafka":
        return request
    max_poll = _setting(config, "max_poll_interval_ms", _DRIVER_DEFAULTS["max_poll_interval_ms"])
    if client in _JOIN_AT_REBALANCE:
        return max(request, max_poll + _JOIN_MARGIN_MS) if api == "JoinGroup" else request
    session = _setting(config, "session_timeout_ms", _DRIVER_DEFAULTS["session_timeout_ms"])
    return {"JoinGroup": max_poll + _RDKAFKA_GRACE_MS, "SyncGroup": session + _RDKAFKA_GRACE_MS,
            "Heartbeat": session, "LeaveGroup": _RDKAFKA_LEAVE_MS}.get(api, request)


def past_request_timeout(client: str, config: Mapping[str, object], api: str,
                         margin_s: float = 1.0) -> float:
    """Seconds a broker delay rule waits so that the member has timed the request out."""
    return request_timeout_ms(client, config, api) / 1000 + margin_s


def group_timeouts(clients: Iterable[str], config: Mapping[str, object]) -> GroupTimeouts:
    """The timeouts of a group of ``clients`` (names: ``java@3.2.0``, ``kafkajs@1.16.0``) run
    with driver ``config``: the longest request timeout among them, None when one client's
    is not modelled."""
    names = set(clients)

    def longest(api: str) -> int | None:
        try:
            return max((request_timeout_ms(c, config, api) for c in names), default=None)
        except ValueError:  # a client (or release) whose timeouts are not modelled
            return None

    return GroupTimeouts(
        _setting(config, "session_timeout_ms", _DRIVER_DEFAULTS["session_timeout_ms"]),
        _setting(config, "max_poll_interval_ms", _DRIVER_DEFAULTS["max_poll_interval_ms"]),
        _setting(config, "heartbeat_interval_ms", _DRIVER_DEFAULTS["heartbeat_interval_ms"]),
        longest("JoinGroup"), longest("SyncGroup"), SETTLE_MARGIN_MS)


def _setting(config: Mapping[str, object], key: str, default: int) -> int:
    value = config.get(key, default)
    if not isinstance(value, int):
        raise ValueError(f"{key} is a number of milliseconds, not {value!r}")
    return value
