"""I12, user-data hygiene: what a member tells the leader about its previous assignment is
what it was given (KIP-341, KIP-792).

After ``on_assignment(assignment, generation)`` a member's next subscription carries, in its
assignor's user data:

* ``sticky`` layout (StickyAssignor, KIP-341 v1): ``array of {topic string, partitions array
  of int32}`` then ``int32 generation`` — exactly the partitions it was given, and that
  generation. Without the generation (the v0 layout) the leader cannot tell a stale claim
  from a fresh one (KAFKA-7026).
* ``cooperative`` layout (CooperativeStickyAssignor): ``int32 generation`` — the generation
  of the assignment whose partitions the subscription claims (KAFKA-12984, KIP-792).

A member that claims owned partitions in its subscription (COOPERATIVE) claims them with a
generation, never an older one than it was given them in.

The decoders here read bytes on their own (the spec shares no code with what it checks);
they follow the layouts of Kafka's ``StickyAssignor`` and ``CooperativeStickyAssignor``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

__all__ = ["LAYOUTS", "TopicPartition", "claim_hygiene", "read_cooperative", "read_sticky",
           "user_data_hygiene"]

TopicPartition = tuple[str, int]
LAYOUTS = {"sticky": "sticky", "cooperative-sticky": "cooperative"}

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class _Short(Exception):
    """The bytes end before the layout does."""


def _take(data: bytes, at: int, fmt: struct.Struct) -> tuple[int, int]:
    if at + fmt.size > len(data):
        raise _Short
    return int(fmt.unpack_from(data, at)[0]), at + fmt.size


def read_sticky(data: bytes) -> tuple[list[TopicPartition], int | None] | None:
    """Sticky user data → (partitions, generation or None for the v0 layout); None when the
    bytes hold neither layout."""
    try:
        count, at = _take(data, 0, _INT32)
        if count < 0:
            return None
        out: list[TopicPartition] = []
        for _ in range(count):
            length, at = _take(data, at, _INT16)
            if length < 0 or at + length > len(data):
                return None
            topic = data[at:at + length].decode("utf-8", "replace")
            at += length
            n, at = _take(data, at, _INT32)
            if n < 0:
                return None
            for _ in range(n):
                p, at = _take(data, at, _INT32)
                out.append((topic, p))
    except _Short:
        return None
    if len(data) - at >= 4:
        return out, _take(data, at, _INT32)[0]
    return out, None


def read_cooperative(data: bytes) -> int | None:
    """Cooperative user data → its generation; None when there are fewer than 4 bytes."""
    try:
        return _take(data, 0, _INT32)[0]
    except _Short:
        return None


def _shown(parts: Iterable[TopicPartition]) -> str:
    return " ".join(f"{t}-{p}" for t, p in sorted(parts)) or "nothing"


def user_data_hygiene(assignor: str, data: bytes | None, given: Iterable[TopicPartition],
                      generation: int, *, with_generation: bool = True) -> list[str]:
    """I12 for one subscription's user data, written after ``on_assignment(given,
    generation)`` by an assignor of Kafka's name ``assignor`` (other names: no layout to
    judge, empty). ``with_generation=False`` judges a client that speaks the sticky v0
    layout on purpose (an old client in a mixed group): its partitions only."""
    layout = LAYOUTS.get(assignor)
    if layout is None:
        return []
    if not data:
        return [f"I12: {assignor} user data is empty after an assignment in generation "
                f"{generation} (it must carry the generation, "
                f"{'KIP-341' if layout == 'sticky' else 'KIP-792'})"]
    if layout == "cooperative":
        found = read_cooperative(data)
        if found != generation:
            return [f"I12: cooperative user data says generation {found}, the member was "
                    f"given generation {generation} (KIP-792)"]
        return []
    read = read_sticky(data)
    if read is None:
        return [f"I12: sticky user data {data.hex()} does not decode (v1 or v0 layout)"]
    partitions, found_generation = read
    out = []
    if sorted(partitions) != sorted((t, p) for t, p in given):
        out.append(f"I12: sticky user data claims {_shown(partitions)}, the member was given "
                   f"{_shown(given)}")
    if not with_generation:
        return out
    if found_generation is None:
        out.append(f"I12: sticky user data carries no generation (v0 layout) after an "
                   f"assignment in generation {generation} (KIP-341)")
    elif found_generation != generation:
        out.append(f"I12: sticky user data says generation {found_generation}, the member "
                   f"was given generation {generation} (KIP-341)")
    return out


def claim_hygiene(member: str, owned: Iterable[TopicPartition], claim_generation: int,
                  given_generation: int) -> list[str]:
    """I12 for the owned partitions a subscription claims: they travel with a generation,
    and not an older one than they were given in (KIP-792). A newer one is what Kafka's
    client sends after its SyncGroup failed with REBALANCE_IN_PROGRESS: it keeps the
    generation it joined and the partitions of the one before (KAFKA-13419)."""
    owned = list(owned)
    if not owned or given_generation < 0 or claim_generation >= given_generation:
        return []
    said = "no generation" if claim_generation < 0 else f"generation {claim_generation}"
    return [f"I12: {member} claims {len(owned)} partition(s) with {said}, it was given them "
            f"in generation {given_generation} (KIP-792)"]
