"""The JSON lines of the member-driver contract: the commands a driver reads, the acks and the
events it writes (``docs/reference/member-driver-contract.md`` gives every field).

Both ends use these shapes: the Python drivers (`host` and the drivers built on it) and the
harness (``wire/driver_process``, ``wire/log``, ``wire/clients``). A line is whatever its writer
sent: every reader still converts and checks what it takes from one. This module is part of
the drivers' bundle, so it imports only the standard library and stays importable on Python
3.9 (no ``Required``, ``NotRequired`` or ``X | Y`` outside annotations: a TypedDict's required
keys are its total base's).
"""

from __future__ import annotations

from typing import TypedDict, Union

__all__ = ["COMMIT_STYLES", "DEFAULT_COMMIT_STYLE", "Ack", "AckError", "AckHead",
           "CallbackFields", "Command", "CommandHead", "DriverConfig",
           "DriverEvent", "EventFields", "EventHead", "Hello", "JsonPartition", "JsonRecord"]

#: a partition as a line holds it: ``[topic, partition]`` (and a record:
#: ``[topic, partition, offset]``); the aliases are evaluated at import, hence the old spelling
JsonPartition = list[Union[str, int]]  # noqa: UP007 - runs on Python 3.9
JsonRecord = list[Union[str, int]]  # noqa: UP007 - runs on Python 3.9

#: how the application commits: never, the client's auto-commit, a synchronous or an
#: asynchronous commit after each poll that returned records, or a synchronous commit inside
#: the revoke callback
COMMIT_STYLES = ("none", "auto", "sync", "async", "revoke")
#: the style of a ``create`` without ``commit_style`` and of a ``hello`` without ``commit_styles``
DEFAULT_COMMIT_STYLE = "none"


class DriverConfig(TypedDict, total=False):
    """A ``create``'s ``config``: the consumer settings the harness sends."""

    client_id: str
    session_timeout_ms: int
    heartbeat_interval_ms: int
    max_poll_interval_ms: int
    metadata_max_age_ms: int
    auto_offset_reset: str
    enable_auto_commit: bool
    group_instance_id: str  # a static member's id (KIP-345); absent: a dynamic member
    request_timeout_ms: int  # absent: the client's own default
    commit_style: str  # one of COMMIT_STYLES; absent: "none"
    auto_commit_interval_ms: int  # sent with commit_style "auto"


class CommandHead(TypedDict):
    """What every command has: its number and its name."""

    id: int
    cmd: str


class Command(CommandHead, total=False):
    """One command (harness → driver); which fields it has depends on ``cmd``."""

    member: str
    bootstrap: str
    group: str
    assignor: str
    assignors: list[str]
    topics: list[str]
    config: DriverConfig
    partitions: list[JsonPartition]
    ms: int
    topic: str
    partition: int
    value: str


class Hello(TypedDict, total=False):
    """A driver's account of itself, in the ack of ``hello``."""

    client: str
    version: str
    assignors: list[str]
    profile: str
    crash: str
    static_membership: bool  # the client takes a group instance id (KIP-345)
    commit_styles: list[str]  # the commit styles the driver offers; absent: ["none"]


class AckHead(TypedDict):
    ack: int


class AckError(TypedDict, total=False):
    """Why a command failed (absent when it did not)."""

    error: str


class Ack(AckHead, Hello, AckError):
    """The answer to command ``ack``: ``error`` when the client call failed; the `Hello`
    fields for ``hello``."""


class EventHead(TypedDict):
    """What every event has: its name, its member, the driver's count and the clock."""

    event: str
    member: str
    seq: int
    ts: int


class CallbackFields(TypedDict):
    """A ``callback_start``'s fields (a ``callback_end`` adds ``paused``)."""

    kind: str
    partitions: list[JsonPartition]
    generation: int | None
    memberId: str | None


class EventFields(TypedDict, total=False):
    """The fields an event may carry besides its head; which ones depends on ``event``."""

    kind: str
    partitions: list[JsonPartition]
    generation: int | None
    memberId: str | None
    paused: list[JsonPartition] | None
    records: list[JsonRecord]
    message: str
    raised_by: str  # an ``error``'s client call that raised it to the application: "poll"
    topics: list[str]
    before: list[JsonPartition]
    after: list[JsonPartition]
    style: str  # a ``commit``'s commit style: "sync", "async", "auto" or "revoke"
    offsets: list[JsonRecord]  # a ``commit``'s [topic, partition, next offset] triples
    outcome: str  # a ``commit``'s result: "ok" or the client's error text


class DriverEvent(EventHead, EventFields):
    """One event (driver → harness)."""
