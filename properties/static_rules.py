"""KIP-345's promises to a static member, as judgments (I14): what a restart within the
session timeout keeps, and what a member fenced by a duplicate instance id is told.

A static member (one with a ``group.instance.id``) that stops and starts again within its
session timeout is the same member to the coordinator: the group does not rebalance (the
generation stays) and the restarted consumer is given the partitions it had. A second
consumer started with an instance id that is taken replaces the first; the first one's next
request is answered FENCED_INSTANCE_ID, and its client reports that error to the
application (a fatal one: the consumer stops).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set

__all__ = ["FENCED", "fenced_duplicate", "static_restart"]

TopicPartition = tuple[str, int]
#: how a client words FENCED_INSTANCE_ID: Kafka's error name, Java's
#: ``FencedInstanceIdException``, kafka-python's and aiokafka's ``FencedInstanceIdError``,
#: librdkafka's "Static consumer fenced by other consumer"
FENCED = re.compile(r"fenced", re.IGNORECASE)


def _fmt(parts: Iterable[TopicPartition]) -> str:
    return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(parts)) + "]"


def static_restart(member: str, owned_before: Set[TopicPartition],
                   owned_after: Set[TopicPartition], generation_before: int,
                   generation_after: int) -> list[str]:
    """I14 for a static member restarted within its session timeout with an unchanged
    subscription: no rebalance, and its own partitions back."""
    out: list[str] = []
    if generation_after != generation_before:
        out.append(f"I14: {member}'s static restart rebalanced the group (generation "
                   f"{generation_before} → {generation_after}); a static member back within "
                   "its session timeout is the same member (KIP-345)")
    if set(owned_after) != set(owned_before):
        out.append(f"I14: {member} owned {_fmt(owned_before)} before its static restart and "
                   f"{_fmt(owned_after)} after (KIP-345 gives it its assignment back)")
    return out


def fenced_duplicate(member: str, said: Iterable[str]) -> list[str]:
    """I14 for a member whose instance id a later consumer took: its client tells the
    application it was fenced (FENCED_INSTANCE_ID)."""
    told = list(said)
    if any(FENCED.search(text) for text in told):
        return []
    heard = f" (it reported: {told[0]})" if told else " (it reported nothing)"
    return [f"I14: {member} was replaced by a consumer with its group instance id but was "
            f"not told it is fenced (FENCED_INSTANCE_ID){heard}"]
