"""Hypothesis strategies for consumer-protocol messages, and adapters between the plain data
of `groupcheck.properties.codec` and the codec's objects.

A subscription input is ``{"topics", "userData", "owned", "generation", "rack"}`` and an
assignment input ``{"partitions", "userData"}`` (see `groupcheck.properties.codec`).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from groupcheck.impl.consumer_protocol import AssignmentData, SubscriptionData
from groupcheck.impl.errors import CodecError
from groupcheck.impl.types import Assignment, Subscription

INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
INT16 = st.integers(-(1 << 15), (1 << 15) - 1)
#: Writer versions: every real one and some future ones (written as 3).
WRITER_VERSIONS = [0, 1, 2, 3, 4, 5, 100, (1 << 15) - 1]

# Names as Kafka allows them ([a-zA-Z0-9._-]), and characters that matter: 2-, 3- and
# 4-byte UTF-8, the U+E000..U+FFFF block that Java sorts *after* astral characters (Python
# sorts it before), and unpaired surrogates, which Java writes as '?'.
_SPECIAL = "ab.-_Z\u00e9\u4e2d\ue000\uffff\U0001f600\U00010000?\ud800\udfff"
NAMES = st.one_of(st.text(alphabet="abtz019._-", max_size=4),
                  st.text(alphabet=st.one_of(st.sampled_from(_SPECIAL), st.characters()),
                          max_size=6))
USER_DATA = st.one_of(st.none(), st.binary(max_size=16))


@st.composite
def subscriptions(draw: st.DrawFn, max_topics: int = 6) -> dict[str, Any]:
    """Topics in any order, repeats allowed; owned partitions of subscribed topics and of
    others, in any order, repeats allowed; any int32 generation; any rack."""
    topics = draw(st.lists(NAMES, max_size=max_topics))
    topic = st.sampled_from(topics) | NAMES if topics else NAMES
    owned = draw(st.lists(st.tuples(topic, st.one_of(st.integers(0, 5), INT32)),
                          max_size=2 * max_topics))
    return {
        "topics": topics,
        "userData": draw(USER_DATA),
        "owned": owned,
        "generation": draw(st.one_of(st.just(-1), st.integers(0, 10), INT32)),
        "rack": draw(st.one_of(st.none(), st.just(""), NAMES)),
    }


@st.composite
def assignments(draw: st.DrawFn) -> dict[str, Any]:
    """Partitions of a few topics, interleaved, in any order, repeats allowed."""
    topics = draw(st.lists(NAMES, min_size=1, max_size=3))
    partitions = draw(st.lists(st.tuples(st.sampled_from(topics),
                                         st.one_of(st.integers(0, 5), INT32)), max_size=10))
    return {"partitions": partitions, "userData": draw(USER_DATA)}


def to_subscription(x: dict[str, Any]) -> Subscription:
    return Subscription(topics=list(x["topics"]), user_data=x["userData"],
                        owned_partitions=list(x["owned"]), generation_id=x["generation"],
                        rack_id=x["rack"])


def to_assignment(x: dict[str, Any]) -> Assignment:
    return Assignment(list(x["partitions"]), x["userData"])


def subscription_message(d: SubscriptionData) -> dict[str, Any]:
    """A decoded subscription as a plain message (with ``version`` and ``remaining``)."""
    return {"topics": d.topics, "userData": d.user_data, "ownedPartitions": d.owned_partitions,
            "generationId": d.generation_id, "rackId": d.rack_id, "version": d.version,
            "remaining": d.remaining}


def assignment_message(d: AssignmentData) -> dict[str, Any]:
    return {"assignedPartitions": d.assigned_partitions, "userData": d.user_data,
            "version": d.version, "remaining": d.remaining}


def decoded_or_none(decode: Any, to_message: Any, data: bytes
                    ) -> tuple[dict[str, Any] | None, CodecError | None]:
    """The decoded message, or None and the `CodecError` the decoder raised."""
    try:
        return to_message(decode(data)), None
    except CodecError as exc:
        return None, exc
