"""I16 on what groupcheck's broker saw: each coordinator error a member was answered with,
paired with that member's next JoinGroup in the broker's exchange log (`error_answers`), and
judged by the member's client profile (`judge_member_ids`).

A member is its client id (the drivers set it to the member's name). The member id a
JoinGroup carried is read from the request itself: the broker's own record of who sent it
falls back to the connection's last member id when the request carries none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ...broker.faults import error_name
from ...broker.protocol import millis
from ...broker.steering import Exchange
from ...properties.member_id_rules import (
    ErrorResponse,
    NextJoin,
    left_behind,
    member_id_after_error,
)
from ...properties.membership import ClientProfile

__all__ = ["JUDGED_ERRORS", "Ledger", "Rejoin", "error_answers", "judge_member_ids"]

#: the coordinator errors after which a member must rejoin, keeping its id or not
JUDGED_ERRORS = frozenset({"UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID", "ILLEGAL_GENERATION",
                           "REBALANCE_IN_PROGRESS"})
_GROUP_APIS = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit"})
_MEMBER_ID_REQUIRED = 79


def _carried(exchange: Exchange) -> str:
    return str(getattr(exchange.request, "member_id", "") or "")


@dataclass
class Ledger:
    """What `error_answers` keeps of the log read so far (a caller that reads it a part at a
    time keeps one between calls): each client's session timeout (its latest JoinGroup's),
    and the member id KIP-394 handed it (MEMBER_ID_REQUIRED) that no answered JoinGroup has
    carried yet: a pending id, which Kafka's coordinator does not count as a member, so it
    answers the client's heartbeat with it UNKNOWN_MEMBER_ID while its join is under way."""

    sessions: dict[str, int] = field(default_factory=dict)
    pending: dict[str, str] = field(default_factory=dict)
    #: client → the judged errors (member id, error) answered to it since its last JoinGroup
    since_join: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: client → when (CLOCK_MONOTONIC ns) the harness closed or crashed a consumer of that
    #: name: a join read later is another consumer's (a static member's restart), not an
    #: answer to the closed one's errors
    closed: dict[str, list[int]] = field(default_factory=dict)
    #: a caller reads the log again from below an answer it still waits on: each exchange
    #: counts once, when first seen (a join's start) and once answered (its outcome)
    _seen: set[int] = field(default_factory=set)
    _answered: set[int] = field(default_factory=set)
    _before: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def before(self, e: Exchange) -> tuple[str, ...]:
        """The judged errors answered to ``e``'s member id since its client's last join, as
        they stood when ``e`` was first read."""
        if e.seq not in self._before:
            self._before[e.seq] = tuple(err for mid, err in self.since_join.get(
                e.who.client_id, []) if mid == _carried(e))
        return self._before[e.seq]

    def closed_after(self, client: str, ns: int) -> int | None:
        """When the first consumer of ``client`` closed after ``ns`` (None: none has)."""
        return min((c for c in self.closed.get(client, ()) if c > ns), default=None)

    def note(self, e: Exchange) -> None:
        """Take in one exchange, in the log's order (again: no effect twice)."""
        client, first = e.who.client_id, e.seq not in self._seen
        self._seen.add(e.seq)
        answered = e.answered_ms is not None and e.seq not in self._answered
        if e.answered_ms is not None:
            self._answered.add(e.seq)
        if e.api != "JoinGroup":
            if answered and (error := self.judged(e)):
                self.since_join.setdefault(client, []).append((_carried(e), error))
            return
        if first:
            self.since_join.pop(client, None)
            self.sessions[client] = millis(e.request.session_timeout)
        if not answered:
            return
        if e.error_code == _MEMBER_ID_REQUIRED:
            self.pending[client] = str(getattr(e.response, "member_id", ""))
        elif e.answered_ms is not None and self.pending.get(client) == _carried(e):
            del self.pending[client]

    def is_pending(self, e: Exchange) -> bool:
        """``e`` carried its client's pending id."""
        return bool(_carried(e)) and self.pending.get(e.who.client_id) == _carried(e)

    def judged(self, e: Exchange) -> str:
        """The judged error ``e`` was answered with ('' for none, and for UNKNOWN_MEMBER_ID
        to a pending id: the id is not unknown)."""
        error = _judged(e)
        return "" if error == "UNKNOWN_MEMBER_ID" and self.is_pending(e) else error


def _judged(e: Exchange) -> str:
    """The judged error ``e`` was answered with ('' for none, and for an answer its client
    never read: it had closed the connection first, `Exchange.unread`)."""
    error = error_name(e.error_code) if e.api in _GROUP_APIS and e.error_code and \
        not e.unread else ""
    return error if error in JUDGED_ERRORS else ""


def _bearing(e: Exchange) -> bool:
    """Whether ``e`` can bear on a member id's story: a JoinGroup or LeaveGroup, an error
    answer, a steered answer, or one not answered yet. The rest (a client committing in a
    loop sends thousands of plain OffsetCommits) are passed over as `Ledger.note` and
    `_next_join` would pass them."""
    return (e.api in ("JoinGroup", "LeaveGroup") or bool(e.error_code)
            or e.steering is not None or e.answered_ms is None)


def _held_for(e: Exchange, now_ms: int, session_ms: int | None) -> bool:
    """``e``'s answer was steered and held back a whole session timeout by ``now_ms``."""
    held_to = now_ms if e.answered_ms is None else min(e.answered_ms, now_ms)
    return e.steering is not None and session_ms is not None and \
        held_to - e.received_ms >= session_ms


def _next_join(later: Sequence[Exchange], client: str, member_id: str, answered_ms: int,
               closed_ns: int | None = None, session_ms: int | None = None
               ) -> NextJoin | None | Literal["superseded"]:
    """The client's first JoinGroup the broker read after the millisecond the error's answer
    went out: one read in that same millisecond was already on its way (the broker reads a
    connection's next request as soon as it has written the answer), and says nothing of
    what the client did with the answer. A judged error answered to the client first
    supersedes this one, and so does a join or sync of its that failed (`_failed_join`): the
    next join answers that one. None once the consumer was closed
    (``closed_ns``): a join after that is another consumer's. An answer held back in
    between for the member's whole session (``session_ms``) makes the join the session's
    answer (`NextJoin.session_lapsed`)."""
    left = False
    held: list[Exchange] = []
    for e in later:
        if e.who.client_id != client:
            continue
        if closed_ns is not None and e.received_ns > closed_ns:
            return None
        left = left or (e.api == "LeaveGroup" and e.who.member_id == member_id)
        if e.api == "JoinGroup" and e.received_ms > answered_ms:
            waited = None if e.answered_ms is None else e.answered_ms - e.received_ms
            lapsed = any(_held_for(h, e.received_ms, session_ms) for h in held)
            return NextJoin(_carried(e), left, waited, lapsed)
        held += [e] if e.steering is not None else []
        if _judged(e) or _failed_join(e):
            return "superseded"
    return None


def _failed_join(e: Exchange) -> bool:
    """``e`` is a JoinGroup or SyncGroup that failed: answered with any error, or its answer
    withheld (a closed connection) or never read (`Exchange.unread`). One under way when
    the judged answer went out (the same millisecond) is what the member's next join
    answers, not the judged error: Kafka's Java consumer 2.8.0 rejoins without its id after
    NOT_COORDINATOR on its join, which no profile judges."""
    if e.api not in ("JoinGroup", "SyncGroup") or e.error_code == _MEMBER_ID_REQUIRED:
        return False  # KIP-394's first round is the join going on, not a failure
    return bool(e.error_code or e.unread or (e.steering is not None and e.answered_ms is None))


#: an error answer's exchange number, the answer, and the member's next JoinGroup
Rejoin = tuple[int, ErrorResponse, NextJoin | None]


def error_answers(exchanges: Sequence[Exchange], ledger: Ledger | None = None
                  ) -> Iterator[Rejoin]:
    """Each judged error answer in the log, with the member's next JoinGroup (None: the
    answer has not gone out, or the member sent none since, or never will, as a member that
    closed or was fenced for good). Not judged: an answer a later error answer to its member
    superseded, and UNKNOWN_MEMBER_ID to a pending id (`Ledger`: the id is not unknown). An
    answer carries the judged errors answered to its member id before it since the member's
    last join (``also``): the next join answers them all."""
    ledger = Ledger() if ledger is None else ledger
    exchanges = [e for e in exchanges if _bearing(e)]
    for i, e in enumerate(exchanges):
        before = ledger.before(e)
        ledger.note(e)
        if error := ledger.judged(e):
            waited = None if e.answered_ms is None else e.answered_ms - e.received_ms
            answer = ErrorResponse(e.who.client_id, _carried(e), e.api, error,
                                   steered=e.steering is not None, waited_ms=waited,
                                   session_ms=ledger.sessions.get(e.who.client_id),
                                   also=before)
            later = None if e.answered_ms is None else _next_join(
                exchanges[i + 1:], e.who.client_id, answer.member_id, e.answered_ms,
                ledger.closed_after(e.who.client_id, e.received_ns),
                ledger.sessions.get(e.who.client_id))
            if not isinstance(later, str):  # a superseded answer is not judged
                yield e.seq, answer, later


def judge_member_ids(exchanges: Sequence[Exchange],
                     profile_of: Callable[[str], ClientProfile]) -> tuple[list[str], list[str]]:
    """(I16 violations, members left behind) over the log; ``profile_of``: a member's
    client profile."""
    violations: list[str] = []
    reports: list[str] = []
    for _, answer, join in error_answers(exchanges):
        if join is None:
            continue
        violations += member_id_after_error(answer, join, profile_of(answer.member))
        if said := left_behind(answer, join):
            reports.append(said)
    return violations, reports
