"""When a wire group has settled, judged from the coordinator's side and the members' own.

`unsettled` says why the group has not settled yet ('' once it has): a JoinGroup is in
flight, the coordinator's latest generation is not complete (or not shown yet), it does not
list exactly the polling members, a polling member has not rejoined with its current
subscription (all its topics that exist, at least: librdkafka leaves the others out) or does
not own exactly what that generation assigned it, or the polling members do not own every
partition of their topics exactly once (a cooperative group still owes its follow-up
rebalance). `unread` adds the members' reading: every polling member has been handed each
partition it owns (and has not paused) up to its high watermark (`read_to`), unless another
member's accepted commit already reaches it (a new owner then has nothing to read), a restarted
member's earlier incarnation's too (another member id under the same name); an owner's own
commit does not excuse it (its client handed those records before it committed them), and a
commit that repeats the committed offset is not anyone's new commit.
`refused_for_good` names a member no wait will let in (`refusals`), `stalled` what is left
unsettled after a wait in vain. Nothing here waits or sleeps: the caller polls it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from ...impl.consumer_protocol import decode_assignment, decode_subscription
from ...impl.errors import CodecError
from ...properties.static_rules import FENCED
from .backends.backend import Backend, GroupRound
from .log import Entry
from .refusals import cannot_join

__all__ = ["NOBODY", "Accepted", "Committer", "TopicPartition", "accepted_commits", "read_to",
           "refused_for_good", "stalled", "unfenced", "unread", "unsettled"]

TopicPartition = tuple[str, int]
#: who made a commit: the client id (the member's name) and the member id it was sent with
Committer = tuple[str, str]
NOBODY: Committer = ("", "")


def _fmt(parts: Any) -> str:
    return "[" + ", ".join(f"{t}-{p}" for t, p in sorted(parts)) + "]"


def _read(round_: GroupRound, member_id: str) -> tuple[frozenset[str], set[TopicPartition]]:
    """The member's subscribed topics and assignment in this generation (empty if unreadable:
    the codec's complaint is I10's business, shown with the generation)."""
    try:
        topics = frozenset(decode_subscription(round_.subscriptions[member_id]).topics)
    except (CodecError, KeyError):
        topics = frozenset()
    try:
        parts = set(decode_assignment(round_.assignments[member_id]).to_api().partitions)
    except (CodecError, KeyError):
        parts = set()
    return topics, parts


def refused_for_good(backend: Backend, members: Mapping[str, Any]) -> str:
    """Why a member can never join while the group keeps its members ('' for none):
    `refusals.cannot_join` on the backend's JoinGroups."""
    return cannot_join(backend.last_joins(), members)


def stalled(reason: str, backend: Backend, members: Mapping[str, Any], waited_s: float,
            session_timeout_ms: int) -> str:
    """Why a group that did nothing for ``waited_s`` is not settled: ``reason`` (the
    caller's `unsettled` or `unread`), and the members that sent their coordinator nothing for
    a session timeout since their SyncGroup answer (`silence`: a join their client never
    completed)."""
    silent = [f"{name} sent its coordinator nothing since its SyncGroup answer of generation "
              f"{generation} (its session, {session_timeout_ms} ms, ran out)"
              for name, generation in backend.silent(session_timeout_ms).items()
              if name in members]
    return f"nothing happened for {waited_s:.0f}s; " + "; ".join([reason, *silent])


#: one accepted commit: who made it, and the (topic, partition, offset) it set
Accepted = tuple[Committer, tuple[tuple[str, int, int], ...]]


def accepted_commits(backend: Backend, entries: Iterable[Entry]) -> list[Accepted]:
    """Each commit the coordinator accepted, in order: its own log's, on a backend that keeps
    one (`Backend.keeps_commits`); else the commits the members' drivers reported done
    (librdkafka's mock: its proxy logs none). A reported commit names its member id only
    when the driver does: one without is another member's to `unread`."""
    if backend.keeps_commits:
        return [((a.client_id, a.member_id),
                 tuple(o for o, code in zip(a.offsets, a.errors, strict=True) if code == 0))
                for a in backend.commits()]
    return [((e.member, e.member_id), e.offsets) for e in entries
            if e.kind == "commit" and e.text == "ok"]


def read_to(backend: Backend, produced: Mapping[TopicPartition, int],
            commits: Iterable[Accepted]) -> dict[TopicPartition, tuple[int, Committer]]:
    """The offset up to which each partition's owner is to be handed records: its high
    watermark (the backend's; on one that cannot tell, the records ``produced``); and who
    made the accepted commit (``commits``, `accepted_commits`) that already reaches it
    (`NOBODY` for none): the one that set the committed offset to its value. A commit that
    repeats the committed offset takes nothing over: a new owner's commit of every position
    (Java's ``commitSync()``) names the offset it fetched and started at, records it was
    never handed."""
    ends = {tp: end for tp, (_, end) in backend.log_ends({t for t, _ in produced}).items()} \
        or dict(produced)
    committed: dict[TopicPartition, tuple[int, Committer]] = {}
    for who, offsets in commits:
        for topic, partition, offset in offsets:
            if committed.get((topic, partition), (-1, NOBODY))[0] != offset:
                committed[(topic, partition)] = (offset, who)
    return {tp: (end, who if offset >= end else NOBODY)
            for tp, end in ends.items() for offset, who in [committed.get(tp, (-1, NOBODY))]}


def unread(members: Mapping[str, Any], ends: Mapping[TopicPartition, tuple[int, Committer]],
           every: bool = False) -> str:
    """The first polling member not handed a partition it owns and has not paused up to ``ends`` (''
    for none), unless another member's commit reaches it; with ``every``, any member and any
    partition it owns, paused or not (what no wait can bring: whether the group has caught up).
    ``members``: name → a member with ``polling``, ``subscription``, ``owned``, ``marks``,
    ``member_id`` and ``read`` (partition → the offset after the last it was handed)."""
    for name, m in sorted(members.items()):
        if not (every or m.polling and m.subscription):
            continue
        for topic, partition in sorted(set(m.owned) - (set() if every else set(m.marks))):
            end, committer = ends.get((topic, partition), (0, NOBODY))
            if m.read.get((topic, partition), 0) < end and committer in (NOBODY,
                                                                          (name, m.member_id)):
                return f"{name} has not read {topic}-{partition} to {end}"
    return ""


def unfenced(members: Mapping[str, Any], entries: Iterable[Entry]) -> str:
    """A polling static member whose group instance id a later consumer took, and whose
    client has not reported being fenced yet ('' for none). Its next request is answered
    FENCED_INSTANCE_ID (KIP-345): until its client says so, the group has not settled, and
    a client that never says so is I14's to judge. ``members``: name → a member with
    ``polling``, ``spec`` and ``source`` (its incarnation: the later one is the twin)."""
    told = {e.member for e in entries if e.kind == "error" and FENCED.search(e.text)}
    for name, m in sorted(members.items()):
        taken = m.spec.group_instance_id
        if not (m.polling and taken) or name in told:
            continue
        twin = next((n for n, o in sorted(members.items()) if o is not m
                     and o.spec.group_instance_id == taken and o.source > m.source), "")
        if twin:
            return f"{name} has not heard it is fenced ({twin} took its instance id)"
    return ""


def unsettled(backend: Backend, members: Mapping[str, Any], shown: set[int]) -> str:
    """Why the group is not settled ('' when it is). ``members``: name → a member with
    ``polling``, ``subscription`` and ``owned``; ``shown``: generations already shown."""
    live = {n: m for n, m in members.items() if m.polling and m.subscription}
    if backend.joining():
        return "a JoinGroup is in flight"
    complete = [r for r in backend.rounds() if r.complete]
    listed = set(complete[-1].names.values()) if complete else set()
    # librdkafka sends no JoinGroup while none of its subscribed topics exists (by design:
    # it waits for one); a member outside the group with nothing to own is settled
    live = {n: m for n, m in live.items()
            if n in listed or any(backend.topics.get(t, 0) > 0 for t in m.subscription)}
    if not live:
        return ""
    if not complete:
        return "no generation has completed"
    latest = complete[-1]
    if latest.generation not in shown:
        return f"generation {latest.generation} is not shown yet"
    ids = {name: member_id for member_id, name in latest.names.items()}
    if set(ids) != set(live):
        return (f"generation {latest.generation} lists {sorted(ids)}, the polling members are "
                f"{sorted(live)}")
    topics: AbstractSet[str]  # one member's subscribed topics, then all the members'
    for name, m in live.items():
        topics, assigned = _read(latest, ids[name])
        existing = {t for t in m.subscription if backend.topics.get(t, 0) > 0}
        if not existing <= topics <= m.subscription:  # some clients name existing ones only
            return f"{name} has not rejoined with its subscription {sorted(m.subscription)}"
        if set(m.owned) != assigned:
            return (f"{name} owns {_fmt(m.owned)}; generation {latest.generation} assigned "
                    f"{_fmt(assigned)}")
    owned = [tp for m in live.values() for tp in m.owned]
    topics = set().union(*(m.subscription for m in live.values()))
    wanted = {(t, p) for t in topics for p in range(backend.topics.get(t, 0))}
    if len(owned) != len(set(owned)) or set(owned) != wanted:
        return "the polling members do not own their topics' partitions exactly once"
    return ""
