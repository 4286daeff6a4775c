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
auto-commit the client has no hook for) from the member's style, unless that is ``none``.
Answers and events are matched as they come (`_Matching`): each answer, in the order the
coordinator received them, takes the first unmatched event of its member and offsets written
at or after it, so a view costs what is new, not every commit so far (a client committing in a
loop sends thousands). High
watermarks are given for the partitions some member owns now: the records of one that nobody
owns wait for its next owner, and none of them is lost yet (the next owner's start is judged
then). The mock backend keeps no OffsetCommit log and tells no high watermarks: commits are
then empty, and the high watermarks are what the group produced. A client with no revoke
callback (it offers no ``revoke`` commit style: KafkaJS) tells each whole new assignment
instead: a partition missing from it ends its tenure there.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ...properties.delivery import Commit, DeliveryLog, Handed, Tenure, TopicPartition
from .backends.backend import Backend
from .log import Entry

if TYPE_CHECKING:  # the broker's record of an answer (the broker needs kio)
    from ...broker.commit_log import CommitAnswer

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
        self.matching = _Matching()  # the coordinator's commits, styled

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
        """The coordinator's commits so far, each with its style (`_Matching`)."""
        answers = backend.commits()
        if not self.matching.extends(answers):  # an answer logged late, among earlier ones
            self.matching = _Matching()
        return self.matching.commits(answers, self.reported, self.styles)


_Key = tuple[str, frozenset[tuple[str, int, int]]]  # (member, offsets)


@dataclass
class _Pairs:
    """One member's answers and commit events of the same offsets, matched in order."""

    answers: list[int] = field(default_factory=list)  # indices into `_Matching.answers`
    matched: int = 0  # answers[:matched] have their event; no later one has
    events_read: int = 0  # the events looked at


class _Matching:
    """The coordinator's answers read so far, their commits and the events that styled
    them: each answer takes the first unmatched event of its key written at or after it.
    Answers come in the order received and events in the order written, so an answer left
    unmatched leaves every later one of its key unmatched too, and a new event can only
    match the first of them: each call matches what is new."""

    def __init__(self) -> None:
        self.answers: list[CommitAnswer] = []
        self.pairs: dict[_Key, _Pairs] = collections.defaultdict(_Pairs)
        self.styles: list[str | None] = []  # each answer's matched event's style
        self.spans: list[tuple[int, int]] = []  # each answer's (first, count) in `out`
        self.out: list[Commit] = []
        self.fallback: dict[str, str] = {}  # the member styles unmatched answers took

    def extends(self, answers: list[CommitAnswer]) -> bool:
        """Whether ``answers`` are those read so far, then new ones."""
        n = len(self.answers)
        return len(answers) >= n and (n == 0 or answers[n - 1] is self.answers[n - 1])

    def commits(self, answers: list[CommitAnswer], reported: Mapping[_Key, Sequence[Entry]],
                member_styles: Mapping[str, str]) -> list[Commit]:
        touched: set[_Key] = set()
        for answer in answers[len(self.answers):]:
            key = (answer.client_id, frozenset(answer.offsets))
            self.pairs[key].answers.append(len(self.answers))
            self.answers.append(answer)
            self.styles.append(None)
            self._add(answer, None)
            touched.add(key)
        touched.update(k for k, events in reported.items()
                       if k in self.pairs and len(events) > self.pairs[k].events_read)
        for key in touched:
            self._match(self.pairs[key], reported.get(key, ()))
        if member_styles != self.fallback:
            self.fallback = dict(member_styles)
            for i, style in enumerate(self.styles):
                if style is None:
                    self._restyle(i, None)
        return self.out

    def _match(self, pairs: _Pairs, events: Sequence[Entry]) -> None:
        while pairs.matched < len(pairs.answers) and pairs.events_read < len(events):
            i = pairs.answers[pairs.matched]
            event = events[pairs.events_read]
            pairs.events_read += 1
            if event.ts >= self.answers[i].ts:  # written after the answer: its own
                self.styles[i] = event.style
                self._restyle(i, event.style)
                pairs.matched += 1

    def _style(self, answer: CommitAnswer, matched: str | None) -> str | None:
        if matched is not None:
            return matched
        style = self.fallback.get(answer.client_id)
        return None if style in (None, "none") else style

    def _add(self, answer: CommitAnswer, matched: str | None) -> None:
        style = self._style(answer, matched)
        by_error: dict[str | None, list[tuple[str, int, int]]] = {}
        for offset, error in zip(answer.offsets, answer.error_names(), strict=True):
            by_error.setdefault(error, []).append(offset)
        self.spans.append((len(self.out), len(by_error)))
        self.out += [Commit(answer.ts, answer.client_id, answer.generation, tuple(offsets),
                            error, style) for error, offsets in by_error.items()]

    def _restyle(self, i: int, matched: str | None) -> None:
        style = self._style(self.answers[i], matched)
        first, count = self.spans[i]
        for j in range(first, first + count):
            if self.out[j].style != style:
                self.out[j] = replace(self.out[j], style=style)


def _closed(tenure: Tenure, ts: int, revoked: bool, generation: int | None = None) -> Tenure:
    """``tenure`` ended at ``ts``; ``generation``: the one its revoke came in, if known."""
    return Tenure(tenure.member, tenure.topic, tenure.partition, tenure.start, ts,
                  tenure.generation, revoked, generation)
