"""The coordinator's fault vocabulary: the errors Kafka's classic group coordinator and its
request handling answer, per API and per version of the request.

What lives here: `Fault` (one API, one error, the versions whose response can carry it, the
condition Kafka answers it on), `FAULTS` (the table), `ERROR_CODES` (Kafka's names of those
errors to their codes), `RETRIABLE` (those a client retries on its own) and the questions
steering asks of the table: `faults_of`, `carried`, `refusal`.

Theory of operation: a fail rule stands for one of Kafka's answers, so it may only carry an
error that a Kafka broker really sends for that API at that version. Versions are Kafka's:
a field that names the error's subject (``group_instance_id`` for FENCED_INSTANCE_ID, the
member id a JoinGroup is told to rejoin with) arrived in a given version, and below it the
coordinator cannot give that answer. Some conditions are answered with another error on
some APIs: a coordinator still loading its groups answers SyncGroup REBALANCE_IN_PROGRESS
and Heartbeat with no error at all, so neither carries COORDINATOR_LOAD_IN_PROGRESS.
Errors of the broker's framing (UNSUPPORTED_VERSION, INVALID_REQUEST) and the catch-all
UNKNOWN_SERVER_ERROR are no coordinator's condition and are not listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .protocol import API_KEYS, SUPPORTED

__all__ = ["ERROR_CODES", "FAULTS", "RETRIABLE", "Fault", "carried", "error_code", "error_name",
           "faults_of", "implausible", "refusal"]

ERROR_CODES: dict[str, int] = {
    "UNKNOWN_TOPIC_OR_PARTITION": 3, "OFFSET_METADATA_TOO_LARGE": 12,
    "COORDINATOR_LOAD_IN_PROGRESS": 14, "COORDINATOR_NOT_AVAILABLE": 15, "NOT_COORDINATOR": 16,
    "ILLEGAL_GENERATION": 22, "INCONSISTENT_GROUP_PROTOCOL": 23, "INVALID_GROUP_ID": 24,
    "UNKNOWN_MEMBER_ID": 25, "INVALID_SESSION_TIMEOUT": 26, "REBALANCE_IN_PROGRESS": 27,
    "INVALID_COMMIT_OFFSET_SIZE": 28, "TOPIC_AUTHORIZATION_FAILED": 29,
    "GROUP_AUTHORIZATION_FAILED": 30, "MEMBER_ID_REQUIRED": 79, "GROUP_MAX_SIZE_REACHED": 81,
    "FENCED_INSTANCE_ID": 82, "UNSTABLE_OFFSET_COMMIT": 88,
}
_NAMES = {code: name for name, code in ERROR_CODES.items()}
#: the errors whose exception in Kafka's Java client is a ``RetriableException`` (the client
#: tries again on its own: a coordinator to find again or still loading, metadata to
#: refresh, a pending transactional commit); the others are ``ApiException``s
RETRIABLE: frozenset[str] = frozenset({
    "UNKNOWN_TOPIC_OR_PARTITION", "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE",
    "NOT_COORDINATOR", "UNSTABLE_OFFSET_COMMIT"})


@dataclass(frozen=True)
class Fault:
    """One error an API's response carries from version ``since`` on, and Kafka's reason."""

    api: str
    error: str
    since: int
    condition: str

    @property
    def code(self) -> int:
        return ERROR_CODES[self.error]

    @property
    def api_key(self) -> int:
        return API_KEYS[self.api]

    @property
    def retriable(self) -> bool:
        """Kafka's client retries this error itself (`RETRIABLE`)."""
        return self.error in RETRIABLE


def _api(api: str, *rows: tuple[str, int, str]) -> tuple[Fault, ...]:
    return tuple(Fault(api, error, since, condition) for error, since, condition in rows)


# Conditions every group API shares: where the group lives, and who may touch it.
_PLACE = (
    ("COORDINATOR_NOT_AVAILABLE", 0, "the coordinator is not running, or the group is being "
     "unloaded (Dead) as it moves to another broker"),
    ("NOT_COORDINATOR", 0, "this broker does not lead the group's partition of "
     "__consumer_offsets: the client must find the coordinator again"),
    ("INVALID_GROUP_ID", 0, "the group id is empty"),
    ("GROUP_AUTHORIZATION_FAILED", 0, "the principal may not read the group"),
)
_LOADING = ("COORDINATOR_LOAD_IN_PROGRESS", 0, "the group's partition of __consumer_offsets "
            "is still being loaded")
_MEMBER = ("UNKNOWN_MEMBER_ID", 0, "the member id is not in the group (removed by a session "
           "timeout, a leave, or never there)")
_GENERATION = ("ILLEGAL_GENERATION", 0, "the generation is not the group's current one")

FAULTS: tuple[Fault, ...] = (
    *_api("FindCoordinator",
          ("COORDINATOR_NOT_AVAILABLE", 0, "the group's partition of __consumer_offsets has no "
           "live leader yet (or the topic is not created)"),
          ("GROUP_AUTHORIZATION_FAILED", 0, "the principal may not describe the group")),
    *_api("JoinGroup", *_PLACE, _LOADING, _MEMBER,
          ("INVALID_SESSION_TIMEOUT", 0, "the session timeout is outside "
           "group.min.session.timeout.ms..group.max.session.timeout.ms"),
          ("INCONSISTENT_GROUP_PROTOCOL", 0, "the protocol type differs from the group's, or "
           "no protocol is common to every member"),
          ("GROUP_MAX_SIZE_REACHED", 0, "the group already has group.max.size members"),
          ("MEMBER_ID_REQUIRED", 4, "a dynamic member joined without a member id: it must "
           "rejoin with the one this answer gives"),
          ("FENCED_INSTANCE_ID", 5, "another member id holds this group instance id")),
    *_api("SyncGroup", *_PLACE, _MEMBER, _GENERATION,
          ("REBALANCE_IN_PROGRESS", 0, "the group is preparing a rebalance, or the "
           "coordinator lost the round while loading: the member must rejoin"),
          ("FENCED_INSTANCE_ID", 3, "another member id holds this group instance id"),
          ("INCONSISTENT_GROUP_PROTOCOL", 5, "the protocol type or name sent is not the "
           "group's")),
    *_api("Heartbeat", *_PLACE, _MEMBER, _GENERATION,
          ("REBALANCE_IN_PROGRESS", 0, "the group is rebalancing: the member must rejoin"),
          ("FENCED_INSTANCE_ID", 3, "another member id holds this group instance id")),
    *_api("LeaveGroup", *_PLACE, _LOADING, _MEMBER,
          ("FENCED_INSTANCE_ID", 3, "the member id leaving is not the one that holds its group "
           "instance id (a per-member error)")),
    *_api("OffsetCommit", *_PLACE, _LOADING, _MEMBER, _GENERATION,
          ("REBALANCE_IN_PROGRESS", 0, "the group awaits the leader's assignment "
           "(CompletingRebalance): commit after rejoining"),
          ("OFFSET_METADATA_TOO_LARGE", 0, "the metadata is longer than "
           "offset.metadata.max.bytes"),
          ("INVALID_COMMIT_OFFSET_SIZE", 0, "the commit's record batch is too large to "
           "append to __consumer_offsets"),
          ("TOPIC_AUTHORIZATION_FAILED", 0, "the principal may not read the topic"),
          ("UNKNOWN_TOPIC_OR_PARTITION", 0, "the topic or partition does not exist"),
          ("FENCED_INSTANCE_ID", 7, "another member id holds this group instance id")),
    *_api("OffsetFetch", *_PLACE, _LOADING,
          ("TOPIC_AUTHORIZATION_FAILED", 0, "the principal may not describe the topic"),
          ("UNSTABLE_OFFSET_COMMIT", 7, "require_stable was asked and a transaction's offset "
           "commit for the partition is still pending")),
)


def faults_of(api: str) -> tuple[Fault, ...]:
    """The API's faults, in table order."""
    return tuple(f for f in FAULTS if f.api == api)


def error_code(error: str | int) -> int:
    """A code from an error's Kafka name or its code (one of the table's)."""
    if isinstance(error, int):
        if error not in _NAMES:
            raise ValueError(f"error code {error} is no coordinator fault; one of "
                             f"{', '.join(sorted(ERROR_CODES))}")
        return error
    if error.upper() not in ERROR_CODES:
        raise ValueError(f"unknown error {error!r}; one of {', '.join(sorted(ERROR_CODES))}")
    return ERROR_CODES[error.upper()]


def error_name(code: int) -> str:
    return _NAMES.get(code, f"error {code}")


def carried(api_key: int, code: int, version: int) -> bool:
    """Whether the API's response at ``version`` can carry error ``code``."""
    return any(f.api_key == api_key and f.code == code and version >= f.since for f in FAULTS)


def implausible(api_key: int, code: int, member_id: str, instance_id: str | None,
                body: Any) -> str | None:
    """Why Kafka's coordinator never answers this request (``body``: a LeaveGroup from v3
    names its members' instance ids) with ``code`` as a fault, or None: FENCED_INSTANCE_ID
    goes only to a request naming a group instance id (KIP-345); MEMBER_ID_REQUIRED is the
    coordinator's own answer to every JoinGroup without a member id (KIP-394) and carries the
    id it hands out, so one made up by steering would name an id the coordinator never gave."""
    static = instance_id or any(getattr(m, "group_instance_id", None)
                                for m in getattr(body, "members", ()))
    if code == ERROR_CODES["FENCED_INSTANCE_ID"] and not static:
        return "FENCED_INSTANCE_ID goes only to a static member; this request names none"
    if code == ERROR_CODES["MEMBER_ID_REQUIRED"]:
        return (f"MEMBER_ID_REQUIRED is the coordinator's own answer to a JoinGroup without "
                f"a member id ({api_key}, member {member_id or 'none'})")
    return None


def refusal(api_key: int, code: int, version: int | None = None) -> str | None:
    """Why a fail rule cannot answer the API with ``code`` at ``version`` (None: at any
    version this broker serves), or None when it can."""
    name, lowest, highest = SUPPORTED[api_key]
    versions = range(lowest, highest + 1) if version is None else (version,)
    if any(carried(api_key, code, v) for v in versions):
        return None
    since = [f.since for f in FAULTS if f.api_key == api_key and f.code == code]
    at = f" v{version}" if version is not None else f" (v{lowest}-{highest} served)"
    why = f"it carries it from v{since[0]} on" if since else "Kafka never answers it so"
    return f"{name}{at} cannot carry {error_name(code)} ({code}): {why}"
