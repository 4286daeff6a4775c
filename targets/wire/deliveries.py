"""What a wire group's members were handed and committed, gathered for I17 (`Deliveries`):
from the merged log, each record a poll handed the application (`Handed`), each ownership
tenure of a partition, from the end of the assign callback that gave it to the end of the
revoke or lost callback that took it (`Tenure`, as for I1), and each commit a driver reported;
from the backend, each OffsetCommit its coordinator answered (`Commit`, one per distinct
answer of its partitions) and each partition's log start and high watermark.

Every released entry is read once, whatever the steps showed: the log is cumulative, judged on
settled views, when every entry has been shown. An incarnation that left or crashed ends at
that moment (`end`): its tenures still open end there (revoked when it left, not when it
crashed), and nothing it logs later is the application's. A coordinator's commit takes its
style from the driver's ``commit`` event with the same member and offsets; without one (an
auto-commit the client has no hook for) from the member's style, unless that is ``none``. High
watermarks are given for the partitions some member owns now: the records of one that nobody
owns wait for its next owner, and none of them is lost yet (the next owner's start is judged
then). The mock backend keeps no OffsetCommit log and tells no high watermarks: commits are
then empty, and the high watermarks are what the group produced. A client with no revoke
callback (it offers no ``revoke`` commit style: KafkaJS) tells each whole new assignment
instead: a partition missing from it ends its tenure there.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass

from ...properties.delivery import Commit, DeliveryLog, Handed, Tenure, TopicPartition
from .backends.backend import Backend
from .log import Entry

__all__ = ["Deliveries"]

_Open = tuple[int, str, TopicPartition]  # (incarnation, member, partition)


@dataclass(frozen=True)
class _Ended:
    ts: int
    revoked: bool  # it left (its client gave its partitions up) rather than crashed


class Deliveries:
    """The delivery data of one wire group, read from its log as it grows."""

    def __init__(self) -> None:
        self.styles: dict[str, str] = {}  # member → commit style (its latest incarnation's)
        self.handed: list[Handed] = []
        self.tenures: list[Tenure] = []  # ended ones
        self.open: dict[_Open, Tenure] = {}
        self.ended: dict[int, _Ended] = {}  # incarnation → when it left or crashed
        self.reported: dict[tuple[str, frozenset[tuple[str, int, int]]], collections.deque[
            Entry]] = collections.defaultdict(collections.deque)  # drivers' commit events
        self.read = 0  # entries read
        self.unrevoked: set[str] = set()  # members whose client logs no revoke callback

    def revokes(self, member: str, logged: bool) -> None:
        """Whether ``member``'s client logs a revoke callback (else each assignment it logs
        is whole, and ends the tenures of the partitions it leaves out)."""
        if logged:
            self.unrevoked.discard(member)
        else:
            self.unrevoked.add(member)

    def end(self, source: int, ts: int, revoked: bool) -> None:
        """Incarnation ``source`` left (``revoked``) or crashed at ``ts``."""
        self.ended[source] = _Ended(ts, revoked)

    def take(self, entries: list[Entry]) -> None:
        """Read the entries released since the last call."""
        for e in entries[self.read:]:
            gone = self.ended.get(e.source)
            if gone is None or e.ts <= gone.ts:
                self._take(e)
        self.read = len(entries)

    def _take(self, e: Entry) -> None:
        generation = None if e.generation < 0 else e.generation
        if e.kind == "record" and e.offset >= 0:
            (topic, partition), = e.partitions
            self.handed.append(Handed(e.ts, e.member, topic, partition, e.offset, generation))
        elif e.kind == "commit":
            self.reported[(e.member, frozenset(e.offsets))].append(e)
        elif e.kind == "assigned" and e.phase == "end":
            if e.member in self.unrevoked:
                self._moved(e)
            for tp in e.partitions:
                key = (e.source, e.member, tp)
                if key not in self.open:
                    self.open[key] = Tenure(e.member, tp[0], tp[1], e.ts, None, generation)
        elif e.kind in ("revoked", "lost") and e.phase == "end":
            for tp in e.partitions:
                tenure = self.open.pop((e.source, e.member, tp), None)
                if tenure is not None:
                    self.tenures.append(_closed(tenure, e.ts, e.kind == "revoked",
                                                generation))

    def _moved(self, e: Entry) -> None:
        """End, at a whole new assignment, the tenures of the partitions it leaves out."""
        for key in [k for k in self.open if k[:2] == (e.source, e.member)
                    and k[2] not in e.partitions]:
            self.tenures.append(_closed(self.open.pop(key), e.ts, True))

    def log(self, backend: Backend, produced: Mapping[TopicPartition, int],
            caught_up: bool) -> DeliveryLog:
        """Everything so far, with the backend's commits and log ends (on one that cannot
        tell them, what the group ``produced``)."""
        tenures = list(self.tenures)
        for (source, _, _), tenure in self.open.items():
            gone = self.ended.get(source)
            tenures.append(tenure if gone is None else _closed(tenure, gone.ts, gone.revoked))
        ends = backend.log_ends({t.topic for t in tenures} | {t for t, _ in produced})
        owned = {t.tp for t in tenures if t.end is None}
        high = {tp: end for tp, (_, end) in ends.items()} or dict(produced)
        return DeliveryLog(
            tuple(self.handed), tuple(self._commits(backend)),
            tuple(sorted(tenures, key=lambda t: (t.start, t.member, t.topic, t.partition))),
            {tp: end for tp, end in high.items() if tp in owned}, dict(self.styles),
            caught_up, {tp: start for tp, (start, _) in ends.items()})

    def _commits(self, backend: Backend) -> list[Commit]:
        out: list[Commit] = []
        used: set[int] = set()  # the commit events matched (by their global seq)
        for answer in backend.commits():
            style = self._style(answer.client_id, frozenset(answer.offsets), answer.ts, used)
            by_error: dict[str | None, list[tuple[str, int, int]]] = {}
            for offset, error in zip(answer.offsets, answer.error_names(), strict=True):
                by_error.setdefault(error, []).append(offset)
            out += [Commit(answer.ts, answer.client_id, answer.generation, tuple(offsets),
                           error, style) for error, offsets in by_error.items()]
        return out

    def _style(self, member: str, offsets: frozenset[tuple[str, int, int]], ts: int,
               used: set[int]) -> str | None:
        """The style of the driver's first unmatched commit event of the same member and
        offsets written after ``ts``; else the member's style, unless it never commits."""
        for event in self.reported.get((member, offsets), ()):
            if event.ts >= ts and event.seq not in used:
                used.add(event.seq)
                return event.style
        style = self.styles.get(member)
        return None if style in (None, "none") else style


def _closed(tenure: Tenure, ts: int, revoked: bool, generation: int | None = None) -> Tenure:
    """``tenure`` ended at ``ts``; ``generation``: the one its revoke came in, if known."""
    return Tenure(tenure.member, tenure.topic, tenure.partition, tenure.start, ts,
                  tenure.generation, revoked, generation)
