"""The coordinator's side of a wire group: each completed generation read from its bytes.

A backend describes every generation as the coordinator ran it (`backends.backend.GroupRound`):
the subscription bytes each member sent and the assignment bytes the leader sent. `record`
decodes them with groupcheck's own codec (`impl/`, Kafka's layouts) and gives the model a
`RebalanceRecord` with ``observed=True``, so it judges the assignment the leader really sent
(I1: no partition twice; I2: only to subscribers, only partitions that exist; I5 under
cooperative, against what the members owned when the leader's assignment reached the
coordinator) and the claims as the leader read them (I6: owned partitions come with a
generation, and only partitions the claimant's last completed generation gave it).

I10 — every member's bytes readable by the others: the subscription is read as every reader
version from 0 to its own (the header rewritten, as an older reader sees it) and each read
must give the full read's fields projected to that version; the assignor's user data must be
readable by that assignor's reader (sticky: `decode_sticky_user_data`'s fallback chain;
cooperative-sticky: a generation in its first 4 bytes, the rest ignored as Java's reader
does); the assignment must decode. A failure is listed in
``unreadable`` with the member, the version and the codec's message.
"""

from __future__ import annotations

import struct

from ...impl.consumer_protocol import SubscriptionData, decode_assignment, decode_subscription
from ...impl.errors import CodecError
from ...impl.user_data import decode_cooperative_user_data, decode_sticky_user_data
from ...properties.group import Claim, RebalanceRecord, TopicPartition
from .backends.backend import GroupRound

__all__ = ["COOPERATIVE_PROTOCOLS", "given_before", "readable", "record"]

COOPERATIVE_PROTOCOLS = frozenset({"cooperative-sticky"})


def _read_as(data: bytes, version: int) -> SubscriptionData:
    return decode_subscription(struct.pack(">h", version) + data[2:])


def _projection(full: SubscriptionData, version: int) -> tuple[object, ...]:
    fields: tuple[object, ...] = (full.topics, full.user_data)
    if version >= 1:
        fields += (full.owned_partitions,)
    if version >= 2:
        fields += (full.generation_id,)
    if version >= 3:
        fields += (full.rack_id,)
    return fields


def readable(name: str, data: bytes) -> tuple[SubscriptionData | None, list[str]]:
    """The subscription as read, and what a reader version could not read (I10)."""
    try:
        full = decode_subscription(data)
    except CodecError as exc:
        return None, [f"{name}'s subscription cannot be read: {exc}"]
    problems = []
    for version in range(0, min(full.version, 3)):
        try:
            seen = _projection(_read_as(data, version), version)
        except CodecError as exc:
            problems.append(f"{name}'s subscription (v{full.version}) cannot be read as "
                            f"v{version}: {exc}")
            continue
        if seen != _projection(full, version):
            problems.append(f"{name}'s subscription (v{full.version}) reads differently as "
                            f"v{version}")
    return full, problems


def _claim(protocol: str, sub: SubscriptionData) -> tuple[Claim, list[str]]:
    """What the leader's assignor reads as this member's claim, and user-data problems."""
    owned = [(t, p) for t, ps in sub.owned_partitions for p in ps]
    generation = sub.generation_id
    problems: list[str] = []
    if protocol == "sticky" and sub.user_data:
        data = decode_sticky_user_data(sub.user_data)
        if not data.partitions and data.generation == -1:
            problems.append("sticky user data that the sticky assignor cannot read")
        owned = owned or list(data.partitions)
        if generation < 0 and data.generation is not None:
            generation = data.generation
    elif protocol in COOPERATIVE_PROTOCOLS and sub.user_data is not None:
        read = decode_cooperative_user_data(sub.user_data)
        if read == -1 and 0 < len(sub.user_data) < 4:
            problems.append("cooperative user data the cooperative-sticky assignor cannot "
                            "read (shorter than its 4-byte generation)")
        elif generation < 0 and read is not None:
            generation = read
    return Claim(tuple(sub.topics), tuple(owned), generation), problems


def given_before(rounds: list[GroupRound], current: GroupRound,
                 sync_timeout_ms: int | None = None) -> dict[str, tuple[TopicPartition, ...]]:
    """What each member of ``current`` was assigned in the last earlier generation whose
    SyncGroup answer it got — complete or not: a member answered in a generation that others
    never finished owns what it was given all the same. An answer held back for the members'
    SyncGroup request timeout (``sync_timeout_ms``, the longest of their clients'; None: not
    modelled) was not got: the client gave the request up first and owns what it had. Keyed
    by harness name, and found by it: a consumer that lost its member id (UNKNOWN_MEMBER_ID,
    an expired session) and rejoined under a new one still claims what its old id was given,
    with that generation (KIP-341); a consumer new to the group has no previous assignment."""
    out: dict[str, tuple[TopicPartition, ...]] = {}
    for member_id in current.subscriptions:
        name = current.names.get(member_id) or member_id
        for earlier in sorted(rounds, key=lambda r: r.generation, reverse=True):
            if earlier.generation >= current.generation:
                continue
            got = [m for m in earlier.synced if (earlier.names.get(m) or m) == name
                   and not _timed_out(earlier.waited_ms.get(m), sync_timeout_ms)]
            if not got:
                continue
            try:
                data = decode_assignment(earlier.assignments[got[0]])
            except (CodecError, KeyError):
                break
            out[name] = tuple(data.to_api().partitions)
            break
    return out


def _timed_out(waited_ms: int | None, timeout_ms: int | None) -> bool:
    return waited_ms is not None and timeout_ms is not None and waited_ms >= timeout_ms


def record(round_: GroupRound, owned: dict[str, tuple[TopicPartition, ...]],
           given: dict[str, tuple[TopicPartition, ...]]) -> RebalanceRecord:
    """The model's record of one completed generation (member names, not ids)."""
    claims: dict[str, Claim] = {}
    assignment: dict[str, tuple[TopicPartition, ...]] = {}
    unreadable: list[str] = []
    for member_id, data in round_.subscriptions.items():
        name = round_.names.get(member_id) or member_id
        sub, problems = readable(name, data)
        unreadable += problems
        if sub is not None:
            claims[name], more = _claim(round_.protocol, sub)
            unreadable += [f"{name} sends {p}" for p in more]
    for member_id, data in round_.assignments.items():
        name = round_.names.get(member_id) or member_id
        try:
            assignment[name] = tuple(decode_assignment(data).to_api().partitions)
        except CodecError as exc:
            unreadable.append(f"the assignment for {name} cannot be read: {exc}")
    protocol = "COOPERATIVE" if round_.protocol in COOPERATIVE_PROTOCOLS else "EAGER"
    return RebalanceRecord(round_.generation, protocol, round_.protocol, claims,
                           {n: owned.get(n, ()) for n in claims}, assignment, observed=True,
                           given={n: given.get(n, ()) for n in claims},
                           unreadable=tuple(unreadable))
