"""The JSON shapes of the JSON-lines contract: each op's request and answer.

A partition travels as ``[topic, partition]`` (`Claim`), user data as base64, wire bytes as
lowercase hex; JSON ``null`` is an absent value. The harness builds ``assign`` requests of
the same shape (``properties/jsonl_shapes.py`` holds its copy, as ``AssignRequest``,
``RequestMember`` and ``AssignAnswer``: impl imports nothing of the harness, and the harness
nothing of impl below the targets; tests/test_jsonl_shapes.py keeps the two alike). The
handlers in impl/jsonl.py and impl/assign_op.py still check every field they read: a request
is whatever a client sent.
"""

from __future__ import annotations

from typing import Required, TypedDict, final

__all__ = ["Answer", "AssignOpAnswer", "AssignOpMember", "AssignOpRequest", "AssignmentMessage",
           "AssignmentView", "AssignorsAnswer", "Claim", "CodecRequest", "ErrorAnswer",
           "HexAnswer", "OwnedTopic", "Pong", "SubscriptionMessage", "SubscriptionView",
           "UserDataAnswer"]

#: a partition as JSON holds it: ``[topic, partition]``
Claim = list[str | int]


class AssignOpMember(TypedDict, total=False):
    """One member of an ``assign`` request: its subscription, what it owned in
    ``generation`` (None: a consumer that has none), and optionally its user data (replacing
    what the consumer would compute), rack and static id."""

    topics: Required[list[str]]
    owned: Required[list[Claim]]
    generation: Required[int | None]
    userData: str | None
    rack: str | None
    groupInstanceId: str | None


class AssignOpRequest(TypedDict, total=False):
    """``assign``: the leader's metadata (``partitions``, optional ``racks``: each
    partition's replica racks per topic) and its ``members`` in the order it received them;
    ``mode`` ``client`` or ``raw``; the optional subscription version, whether assignments
    go through the wire codec, and the generation the rebalance creates."""

    op: str
    assignor: Required[str]
    mode: str
    partitions: Required[dict[str, int]]
    racks: dict[str, list[list[str]]]
    members: Required[dict[str, AssignOpMember]]
    subscriptionVersion: int
    wireAssignment: bool
    newGeneration: int | None


@final
class AssignOpAnswer(TypedDict, total=False):
    """The answer to ``assign``: each member's partitions in the assignor's order, what each
    member sends as user data at its next join and each share's user data (both left out
    when the caller does not read them), the generation, the protocol and the leader's
    milliseconds."""

    assignment: Required[dict[str, list[Claim]]]
    userData: dict[str, str | None]
    assignmentUserData: dict[str, str | None]
    generation: int
    protocol: str
    ms: float


class CodecRequest(TypedDict, total=False):
    """``encode_subscription``, ``encode_assignment`` and ``user_data`` (the fields each
    reads), and ``decode_subscription``/``decode_assignment`` (``hex``). ``partitions``
    are an assignment's."""

    op: str
    version: int
    topics: list[str]
    owned: list[Claim]
    generation: int | None
    userData: str | None
    rack: str | None
    partitions: list[Claim]
    assignor: str
    memberId: str
    hex: str


class OwnedTopic(TypedDict):
    topic: str
    partitions: list[int]


class SubscriptionMessage(TypedDict):
    """A subscription as its bytes hold it."""

    topics: list[str]
    userData: str | None
    ownedPartitions: list[OwnedTopic]
    generationId: int
    rackId: str | None


@final
class SubscriptionView(TypedDict):
    """``decode_subscription``: what the leader reads (top level) and the message (``data``)."""

    version: int
    topics: list[str]
    userData: str | None
    owned: list[Claim]
    generation: int | None
    rack: str | None
    remaining: int
    data: SubscriptionMessage


class AssignmentMessage(TypedDict):
    assignedPartitions: list[OwnedTopic]
    userData: str | None


@final
class AssignmentView(TypedDict):
    """``decode_assignment``: the assignment (top level) and the message (``data``)."""

    version: int
    partitions: list[Claim]
    userData: str | None
    remaining: int
    data: AssignmentMessage


@final
class HexAnswer(TypedDict):
    hex: str


@final
class UserDataAnswer(TypedDict):
    userData: str | None


@final
class Pong(TypedDict):
    pong: bool


@final
class AssignorsAnswer(TypedDict):
    """``assignors``: the names of the assignors the server runs (each answers ``assign``
    and ``user_data``)."""

    assignors: list[str]


class ErrorAnswer(TypedDict, total=False):
    """A request that could not be answered (``dataError``: a decode whose raw message
    could not be read either)."""

    error: Required[str]
    dataError: str


#: any answer of the service (every one but `ErrorAnswer` is final, so ``"error" in answer``
#: tells an error apart)
Answer = (AssignOpAnswer | SubscriptionView | AssignmentView | HexAnswer | UserDataAnswer | Pong
          | AssignorsAnswer | ErrorAnswer)
