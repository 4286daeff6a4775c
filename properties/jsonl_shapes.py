"""The JSON shapes of the ``assign`` op of the JSON-lines contract, as the harness builds
and reads them: a request, its members, and the answer.

Every target's assign function takes an `AssignRequest` and answers an `AssignAnswer`,
whatever runs behind it (our impl in process, a JSON-lines process, Kafka's Java client). A
partition travels as ``[topic, partition]`` (`Claim`); JSON ``null`` is an absent value.
impl/jsonl_shapes.py holds the same shapes for the service itself (impl imports nothing of
the harness); both must stay alike, key for key (tests/test_jsonl_shapes.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Required, TypedDict, final

__all__ = ["Answered", "AssignAnswer", "AssignFn", "AssignRequest", "Claim", "FailedAnswer",
           "JSONObject", "JSONValue", "ProfileJson", "RequestMember", "VersionsJson", "pair_of"]

#: a partition as JSON holds it: ``[topic, partition]``
Claim = list[str | int]


def pair_of(claim: Sequence[str | int]) -> tuple[str, int]:
    """A JSON ``[topic, partition]`` as a partition."""
    return str(claim[0]), int(claim[1])


class RequestMember(TypedDict, total=False):
    """One member of an ``assign`` request: its subscription, what it owned in
    ``generation`` (None: a consumer that has none), and optionally its user data (replacing
    what the consumer would compute), rack and static id."""

    topics: Required[list[str]]
    owned: Required[list[Claim]]
    generation: Required[int | None]
    userData: str | None
    rack: str | None
    groupInstanceId: str | None


class AssignRequest(TypedDict, total=False):
    """``assign``: the leader's metadata (``partitions``, optional ``racks``: each
    partition's replica racks per topic) and its ``members`` in the order it received them;
    ``mode`` ``client`` or ``raw``; the optional subscription version, whether assignments
    go through the wire codec, and the generation the rebalance creates."""

    op: str
    assignor: Required[str]
    mode: str
    partitions: Required[dict[str, int]]
    racks: dict[str, list[list[str]]]
    members: Required[dict[str, RequestMember]]
    subscriptionVersion: int
    wireAssignment: bool
    newGeneration: int | None


@final
class AssignAnswer(TypedDict, total=False):
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


#: an assign function: one request in, its answer out
AssignFn = Callable[[AssignRequest], AssignAnswer]


@final
class FailedAnswer(TypedDict, total=False):
    """An assign call that gave no answer, in the form answers are compared in: the error
    (``"<Kafka's class>: <message>"`` where it mirrors one; Kafka's client, in the golden
    vectors, also gives the class and the message apart), and whether the call timed out or
    the target broke."""

    error: Required[str]
    errorClass: str
    errorMessage: str
    timeout: bool
    failure: bool


#: what an assign call came to: its answer, or why there is none (``"error" in`` tells them
#: apart)
Answered = AssignAnswer | FailedAnswer


class VersionsJson(TypedDict):
    """The versions of one consumer-protocol message a release writes and reads."""

    writes: int
    reads: list[int]


class ProfileJson(TypedDict):
    """The answer of a Java driver's ``profile`` op, plus ``client``: what one client release
    implements (``targets.profile.ReleaseProfile`` reads it and writes it back)."""

    client: str
    version: str
    subscription_versions: VersionsJson
    assignment_versions: VersionsJson
    generation_in: str
    user_data_generation: bool
    user_data_generation_assignors: list[str]
    rack: bool
    rack_aware_assignors: list[str] | None
    on_partitions_lost: bool
    static_membership: bool
    pause: bool | None
    assignors: dict[str, list[str]]


#: any JSON value; only for JSON that has no one shape (a saved file's whole object, whose
#: keys depend on its kind; an answer as a process wrote it, before the caller that knows
#: which op it sent reads it), never for a known record
JSONValue = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]
JSONObject = dict[str, JSONValue]
