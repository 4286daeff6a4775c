"""The OffsetCommits the coordinator answered, read from the broker's exchange log
(`CommitAnswer`, `answered_commits`), for a harness that judges what members committed.

Each answer keeps what the request asked (group, client id, member id, generation, the
offsets) and what the coordinator answered per partition (`error_code` 0: accepted), stamped
with CLOCK_MONOTONIC nanoseconds when the request reached the broker: the coordinator stores
an accepted offset before the answer goes out, so that is when the commit took effect (the
harness's clients stamp their events with the same clock). A commit a fail rule answered
never reached the coordinator, but it is an answer the member got: it is listed with its
error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .faults import error_name
from .steering import Exchange

__all__ = ["OFFSET_COMMIT", "CommitAnswer", "answered_commits"]

OFFSET_COMMIT = 8  # the API key


@dataclass(frozen=True)
class CommitAnswer:
    """One OffsetCommit and its answer; ``offsets`` (topic, partition, committed offset) and
    ``errors`` (each one's error code) in the request's order."""

    seq: int  # the exchange's
    ts: int  # CLOCK_MONOTONIC ns when the request reached the broker
    group: str
    client_id: str
    member_id: str
    generation: int  # -1: the request carried none (version 0, or a simple commit)
    offsets: tuple[tuple[str, int, int], ...]
    errors: tuple[int, ...]

    def error_names(self) -> tuple[str | None, ...]:
        """Each offset's error by Kafka's name, None where the coordinator accepted it."""
        return tuple(None if code == 0 else error_name(code) for code in self.errors)


def _answer(e: Exchange) -> CommitAnswer:
    request, version = e.request, e.api_version
    offsets = tuple((str(t.name), int(p.partition_index), int(p.committed_offset))
                    for t in request.topics for p in t.partitions)
    codes = {(str(t.name), int(p.partition_index)): int(p.error_code)
             for t in e.response.topics for p in t.partitions}
    top = int(getattr(e.response, "error_code", 0) or 0)
    return CommitAnswer(
        e.seq, e.received_ns, str(request.group_id), e.who.client_id, str(request.member_id),
        int(request.generation_id_or_member_epoch) if version >= 1 else -1, offsets,
        tuple(codes.get((t, p), top) for t, p, _ in offsets))


def answered_commits(log: Iterable[Exchange], after: int = -1, group: str | None = None
                     ) -> tuple[list[CommitAnswer], int]:
    """The OffsetCommits (of ``group``, else of every group) answered past exchange
    ``after``, and the exchange to read past next time: just below the first of those
    OffsetCommits still being served, else the last one."""
    out: list[CommitAnswer] = []
    floor, pending = after, False
    for e in log:
        if e.seq <= after or e.api_key == OFFSET_COMMIT and \
                group not in (None, getattr(e.request, "group_id", None)):
            continue
        if e.api_key == OFFSET_COMMIT and e.response is None:
            pending = True
        elif e.api_key == OFFSET_COMMIT:
            out.append(_answer(e))
        floor = e.seq if not pending else floor
    return out, floor
