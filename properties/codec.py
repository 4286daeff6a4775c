"""I10, codec compatibility, as predicates over plain data (docs/reference/invariants.md).

I10: for writer version w and reader version r, decode_r(encode_w(x)) equals x projected to
the fields of min(w, r), with defaults for the rest; versions above 3 read as v3 with
trailing bytes ignored; every malformed input gives ``CodecError``, nothing else.

"decode_r(encode_w(x))" means: the bytes written at version w with their 2-byte header
rewritten to r. That is how an older or newer reader sees them: the broker reads every
subscription as v0, and Kafka's ``deserializeNewSubscriptionWithOldVersion`` reads v3 bytes
as v0. When r's layout is *larger* than w's, the body ends exactly where w's layout ends and
r's first extra field (at least 2 bytes) underflows, so the read must fail; Kafka's golden
vectors ``v0-body-as-v1`` … ``v2-body-as-v3`` all answer SchemaException.

Nothing here imports the implementation: this module restates the rules independently.

Shapes (standard library values only):

* a subscription *input* ``x``: ``{"topics": [str], "userData": bytes | None,
  "owned": [(topic, partition)], "generation": int (-1 = none), "rack": str | None}``,
  in any order, duplicates allowed (the fields of the JSON-lines ``encode_subscription``);
* an assignment input: ``{"partitions": [(topic, partition)], "userData": bytes | None}``;
* a *message* (what a reader returns, the JSON-lines ``data`` view):
  ``{"topics", "userData", "ownedPartitions": [(topic, [partitions])], "generationId",
  "rackId"}`` for a subscription, ``{"assignedPartitions": [(topic, [partitions])],
  "userData"}`` for an assignment; a *decoded* message also has ``"version"`` (the header
  as read) and ``"remaining"`` (bytes left after the body).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

__all__ = ["ASSIGNMENT_FIELDS", "HIGHEST_VERSION", "SUBSCRIPTION_DEFAULTS", "SUBSCRIPTION_FIELDS",
           "Entries", "Message", "SubscriptionInput", "canonical_assignment",
           "canonical_subscription",
           "codec_compatible", "codec_violations", "expected_assignment_decode",
           "expected_subscription_decode", "layout", "leader_view", "project_subscription",
           "subscription_size"]

HIGHEST_VERSION = 3

#: Fields of each subscription layout (Kafka's ``ConsumerProtocolSubscription``, v0 to v3); each
#: layout extends the one before.
SUBSCRIPTION_FIELDS: dict[int, tuple[str, ...]] = {
    0: ("topics", "userData"),
    1: ("topics", "userData", "ownedPartitions"),
    2: ("topics", "userData", "ownedPartitions", "generationId"),
    3: ("topics", "userData", "ownedPartitions", "generationId", "rackId"),
}
Entries = list[tuple[str, list[int]]]


class SubscriptionInput(TypedDict):
    """What a consumer writes into its subscription: its topics, user data, owned partitions,
    generation (-1: none) and rack (None: none), as I10's round trips hand it to a codec."""

    topics: list[str]
    userData: bytes | None
    owned: list[tuple[str, int]]
    generation: int
    rack: str | None


class SubscriptionDefaults(TypedDict):
    ownedPartitions: Entries
    generationId: int
    rackId: str | None


#: What a reader fills in for a field its bytes lack (generation -1, no rack).
SUBSCRIPTION_DEFAULTS: SubscriptionDefaults = {"ownedPartitions": [], "generationId": -1,
                                               "rackId": None}

#: The assignment layout is the same in every version (v2 and v3 only keep ranges equal).
ASSIGNMENT_FIELDS: tuple[str, ...] = ("assignedPartitions", "userData")


class Message(TypedDict, total=False):
    """A subscription or assignment message as a writer produces it and I10 expects a reader
    to return it: the fields of its layout (``ownedPartitions``, ``assignedPartitions``: one
    entry per topic), with ``version`` and ``remaining`` (bytes left unread) once read; or,
    from `leader_view`, what the group leader's assignor sees (``owned``, ``generation``,
    ``rack``)."""

    topics: list[str]
    userData: bytes | None
    ownedPartitions: Entries
    generationId: int
    rackId: str | None
    assignedPartitions: Entries
    version: int
    remaining: int | None
    owned: list[tuple[str, int]]
    generation: int | None
    rack: str | None



def layout(version: int) -> int:
    """The layout a version is read or written with: versions above 3 use v3; a negative
    version has none (the reader raises, the writer refuses)."""
    if version < 0:
        raise ValueError(f"no layout for negative version {version}")
    return min(version, HIGHEST_VERSION)


def _java_string_key(s: str) -> bytes:
    """Java's ``String.compareTo`` order: UTF-16 code units, not code points."""
    return s.encode("utf-16-be", "surrogatepass")


def _wire_string(s: str) -> str:
    """A string as a reader gets it back: Java writes '?' for an unpaired surrogate."""
    return s.encode("utf-8", "replace").decode("utf-8")


def _grouped(pairs: Iterable[tuple[str, int]]) -> Entries:
    """Consecutive pairs of one topic become one entry."""
    out: Entries = []
    for topic, p in pairs:
        if not out or out[-1][0] != topic:
            out.append((topic, []))
        out[-1][1].append(p)
    return out


def canonical_subscription(x: Mapping[str, Any]) -> Message:
    """The message a v3 writer produces from ``x``: topics sorted in Java order, owned
    partitions sorted by (topic, partition) and grouped per topic (KAFKA-12898), duplicates
    kept; strings as a reader gets them back."""
    names = list(x["topics"]) + [t for t, _ in x["owned"]]
    if "".join(names).isascii():  # there Python's order is Java's
        topics = sorted(x["topics"])
        owned = sorted((t, p) for t, p in x["owned"])
    else:
        topics = sorted(x["topics"], key=_java_string_key)
        owned = sorted(((t, p) for t, p in x["owned"]),
                       key=lambda tp: (_java_string_key(tp[0]), tp[1]))
    rack = x["rack"]
    return {
        "topics": [_wire_string(t) for t in topics],
        "userData": x["userData"],
        "ownedPartitions": [(_wire_string(t), ps) for t, ps in _grouped(owned)],
        "generationId": x["generation"],
        "rackId": None if rack is None else _wire_string(rack),
    }


def canonical_assignment(x: Mapping[str, Any]) -> Message:
    """The message a writer produces from an assignment: one entry per topic in order of
    first appearance, partitions in list order (not sorted)."""
    by_topic: dict[str, list[int]] = {}
    for t, p in x["partitions"]:
        by_topic.setdefault(t, []).append(p)
    return {"assignedPartitions": [(_wire_string(t), ps) for t, ps in by_topic.items()],
            "userData": x["userData"]}


def project_subscription(message: Mapping[str, Any], version: int) -> Message:
    """``message`` projected to the fields of ``version``'s layout, defaults for the rest."""
    kept = SUBSCRIPTION_FIELDS[layout(version)]
    given, default = message, SUBSCRIPTION_DEFAULTS
    return {"topics": given["topics"], "userData": given["userData"],
            "ownedPartitions": (given if "ownedPartitions" in kept else default)[
                "ownedPartitions"],
            "generationId": (given if "generationId" in kept else default)["generationId"],
            "rackId": (given if "rackId" in kept else default)["rackId"]}


def _string_size(s: str | None) -> int:
    return 2 + (0 if s is None else len(s.encode("utf-8")))


def _entries_size(entries: Entries) -> int:
    return 4 + sum(_string_size(t) + 4 + 4 * len(ps) for t, ps in entries)


def subscription_size(message: Mapping[str, Any], version: int) -> int:
    """Bytes of the encoding of ``message`` at ``version``, header included."""
    v = layout(version)
    user_data = message["userData"]
    size = 2 + 4 + sum(_string_size(t) for t in message["topics"])
    size += 4 + (0 if user_data is None else len(user_data))
    if v >= 1:
        size += _entries_size(message["ownedPartitions"])
    if v >= 2:
        size += 4
    if v >= 3:
        size += _string_size(message["rackId"])
    return size


def expected_subscription_decode(x: Mapping[str, Any], writer_version: int,
                                 reader_version: int, reader_highest: int | None = None
                                 ) -> Message | None:
    """What I10 allows a reader at ``reader_version`` to return for ``x`` written at
    ``writer_version``; None where the read must fail with ``CodecError`` (the reader's
    layout is larger than the writer's, see the module docstring). A reader whose release
    knows versions up to ``reader_highest`` only reads a newer header's body at its own
    highest layout and leaves the rest (Kafka's forward compatibility): it must decode."""
    read_as = reader_version if reader_highest is None else min(reader_version,
                                                                  reader_highest)
    w, r = layout(writer_version), layout(read_as)
    if r > w:
        return None
    message = canonical_subscription(x)
    expected = project_subscription(message, r)
    expected["version"] = reader_version
    expected["remaining"] = subscription_size(message, w) - subscription_size(message, r)
    return expected


def expected_assignment_decode(x: Mapping[str, Any], writer_version: int,
                               reader_version: int) -> Message:
    """For assignments every layout is the same, so every pair reads back all of ``x``."""
    layout(writer_version)
    layout(reader_version)
    expected = canonical_assignment(x)
    expected["version"] = reader_version
    expected["remaining"] = 0
    return expected


def _unordered(name: str, value: Any) -> Any:
    """A message's field with its topics or owned partitions as a sorted list (their order,
    and how owned partitions are grouped per topic, left out); any other field as it is."""
    if value is None:
        return None
    if name == "topics":
        return sorted(value)
    if name == "ownedPartitions":
        return sorted((t, p) for t, ps in value for p in ps)
    return value


def codec_violations(x: Mapping[str, Any], writer_version: int, reader_version: int,
                     decoded: Mapping[str, Any] | None, kind: str = "subscription",
                     reader_highest: int | None = None, ordered: bool = True) -> list[str]:
    """I10 for one (writer, reader) pair as readable sentences (empty when it holds).

    ``decoded`` is the decoded message, or None when the reader raised ``CodecError``;
    ``reader_highest`` the highest version the reader's release knows (None: all);
    ``ordered`` False holds a writer of an older release to the content of the topics and
    owned partitions, not to the order a v3 writer puts them in (KAFKA-12898)."""
    if kind == "subscription":
        expected = expected_subscription_decode(x, writer_version, reader_version,
                                                reader_highest)
    else:
        expected = expected_assignment_decode(x, writer_version, reader_version)
    pair = f"I10: {kind} written as v{writer_version}, read as v{reader_version}"
    if expected is None:
        return [] if decoded is None else [f"{pair}: decoded, but must fail: {decoded!r}"]
    if decoded is None:
        return [f"{pair}: failed, but must decode to {expected!r}"]
    read = decoded

    def seen(name: str, value: Any) -> Any:
        return value if ordered else _unordered(name, value)

    return [f"{pair}: {name} is {seen(name, read.get(name))!r}, expected {seen(name, value)!r}"
            for name, value in expected.items()
            if seen(name, read.get(name)) != seen(name, value)]


def codec_compatible(x: Mapping[str, Any], writer_version: int, reader_version: int,
                     decoded: Mapping[str, Any] | None, kind: str = "subscription") -> bool:
    """True when ``decoded`` (None = the reader raised ``CodecError``) is what I10 allows."""
    return not codec_violations(x, writer_version, reader_version, decoded, kind)


def leader_view(message: Mapping[str, Any]) -> Message:
    """What the group leader's assignor sees of a subscription message (Kafka's reader):
    owned partitions as a flat list, a negative generation and a null or empty rack as
    absent (None)."""
    generation = message["generationId"]
    return {
        "topics": list(message["topics"]),
        "userData": message["userData"],
        "owned": [(t, p) for t, ps in message["ownedPartitions"] for p in ps],
        "generation": generation if generation >= 0 else None,
        "rack": message["rackId"] or None,
    }
