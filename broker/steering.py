"""What the harness makes the broker do to one member, and what the broker saw.

What lives here: `Rule` (fail, delay or hold the next requests of one API from one member),
`Rules` (the armed rules, matched per request), `Held` (a response kept back until the
harness releases it) and `Exchange` (one request and its response, decoded, with times and
what steering did to it), kept in a bounded `ExchangeLog`.

Theory of operation
-------------------
A member is named the way the harness knows it: its client id (set per consumer, the only
name a new member has before JoinGroup gives it an id), its member id or its group instance
id; a rule matches a request when any of the three equals the rule's ``member``. Each rule
fires ``count`` times, oldest rule first. A *fail* rule answers the request with its error
at once, without reaching the coordinator (so the coordinator's state is as if the request
never arrived, like a request lost on the way); its error must be one Kafka's coordinator
answers that API with at the member's version (`faults`). A rule that cannot be is refused
as it is armed once the member has spoken the API (`Spoken`), and otherwise when its request
arrives: served unsteered, the refusal one of the broker's failures. A *delay* rule sends
the real response ``seconds`` later. A *hold* rule keeps the real response until `release`
names it; the harness releases held responses in the order it chooses (e.g. a follower's
SyncGroup before the leader's). A rule may carry a ``tag`` (the ordering that armed it), so
that two orderings at once each release and disarm their own holds only. Rules aimed at a
member that left or crashed are disarmed (`Rules.forget`): its name may come back with a new
consumer, which they must not hit. Nothing here does I/O: the server applies the decision.
"""

from __future__ import annotations

import collections
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .faults import ERROR_CODES, error_name, refusal
from .protocol import API_KEYS, SUPPORTED

__all__ = ["FENCING_ERRORS", "Action", "Exchange", "ExchangeLog", "Held", "Rule", "Rules",
           "Spoken", "Who", "api_key_of"]

Action = Literal["fail", "delay", "hold", "move", "close"]
#: the coordinator's answers that tell a member it is out of the group: ILLEGAL_GENERATION,
#: UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (KIP-345)
FENCING_ERRORS = frozenset(ERROR_CODES[name] for name in (
    "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"))
#: the actions that fire as a request arrives; the others on its response
ON_REQUEST = frozenset({"fail", "move"})


def api_key_of(api: str | int) -> int:
    """An API by key or by Kafka's name (``"SyncGroup"``), case-insensitive."""
    if isinstance(api, int):
        if api not in SUPPORTED:
            raise ValueError(f"the broker does not serve API key {api}")
        return api
    for name, key in API_KEYS.items():
        if name.lower() == api.lower():
            return key
    raise ValueError(f"unknown API {api!r}; one of {', '.join(sorted(API_KEYS))}")


@dataclass
class Rule:
    member: str
    api_key: int
    action: Action
    count: int = 1
    error: int = 0
    seconds: float = 0.0
    tag: str = ""  # whose rule it is (an ordering of answers), for `Rules.drop`
    node: int | None = None  # move: the group's new coordinator node (None: the next one)

    def describe(self) -> str:
        detail = {"fail": f"{error_name(self.error)} {self.error}", "delay": f"{self.seconds:g}s",
                  "hold": "until released", "close": "connection closed unanswered",
                  "move": "coordinator to " + ("the next node" if self.node is None
                                                   else f"node {self.node}"),
                  }[self.action]
        return f"{self.action} {SUPPORTED[self.api_key][0]} ({detail})"

    def refusal(self, version: int | None) -> str | None:
        """Why this rule cannot fire on a request of ``version`` (None: of any served
        version), or None: only a fail rule's error can be out of the API's reach."""
        if self.action != "fail":
            return None
        reason = refusal(self.api_key, self.error, version)
        return None if reason is None else f"fail rule for {self.member!r} refused: {reason}"


@dataclass(frozen=True)
class Who:
    """The names a request is known by."""

    client_id: str
    member_id: str
    instance_id: str | None

    def named(self, name: str) -> bool:
        return name in (self.client_id, self.member_id) or name == self.instance_id


class Rules:
    """Armed rules, oldest first; `take` consumes one firing of the first that matches."""

    def __init__(self) -> None:
        self._rules: list[Rule] = []

    def add(self, rule: Rule, version: int | None = None) -> None:
        """Arm ``rule``; ``version``: the one its member speaks the API at, when known. A
        fail rule whose error that version (or, unknown, every served one) cannot carry
        is refused (ValueError)."""
        if rule.count < 1:
            raise ValueError(f"a rule fires at least once, not {rule.count} times")
        reason = rule.refusal(version)
        if reason is not None:
            raise ValueError(reason)
        self._rules.append(rule)

    def take(self, who: Who, api_key: int, phase: Literal["request", "response"]) -> Rule | None:
        """Fail and move rules fire on the request, the others on its response."""
        for rule in self._rules:
            if rule.api_key != api_key or not who.named(rule.member):
                continue
            if (rule.action in ON_REQUEST) != (phase == "request"):
                continue
            rule.count -= 1
            if rule.count == 0:
                self._rules.remove(rule)
            return rule
        return None

    def pending(self) -> list[Rule]:
        return list(self._rules)

    def drop(self, member: str, api_key: int, action: Action, tag: str | None = None) -> int:
        """Disarm the rules of ``action`` for this member and API (of ``tag`` alone, when
        given); how many there were."""
        return self._keep(lambda r: not (r.member == member and r.api_key == api_key
                                         and r.action == action
                                         and (tag is None or r.tag == tag)))

    def forget(self, member: str) -> int:
        """Disarm every rule aimed at ``member`` (it left or crashed: a rule for it must
        not fire on whoever takes its name next); how many there were."""
        return self._keep(lambda r: r.member != member)

    def _keep(self, kept: Callable[[Rule], bool]) -> int:
        before = len(self._rules)
        self._rules = [r for r in self._rules if kept(r)]
        return before - len(self._rules)

    def clear(self) -> None:
        self._rules.clear()


class Spoken:
    """The version of each API a member last sent, under each of its names: the version
    its client negotiated, for a rule armed after it spoke (the last ``limit`` names and
    APIs heard: bounded memory)."""

    def __init__(self, limit: int = 100_000) -> None:
        self._versions: collections.OrderedDict[tuple[str, int], int] = \
            collections.OrderedDict()
        self._limit = limit

    def saw(self, who: Who, api_key: int, version: int) -> None:
        for name in (who.client_id, who.member_id, who.instance_id):
            if name:
                self._versions[(name, api_key)] = version
                self._versions.move_to_end((name, api_key))
        while len(self._versions) > self._limit:
            self._versions.popitem(last=False)

    def of(self, member: str, api_key: int) -> int | None:
        return self._versions.get((member, api_key))


@dataclass
class Exchange:
    """One request and its response; times are the broker's milliseconds since start."""

    seq: int
    connection: int
    who: Who
    api_key: int
    api_version: int
    correlation_id: int
    request: Any
    received_ms: int
    client_id: str | None = None  # as the header carried it (null or a string)
    response: Any = None
    answered_ms: int | None = None
    steering: str | None = None
    verdicts: tuple[Any, ...] = ()  # the broker-side verdicts this request led to
    #: the answer went out after the client had closed the connection: it never read it
    unread: bool = False
    raw_request: bytes | None = field(default=None, repr=False)  # with keep_frames only
    raw_response: bytes | None = field(default=None, repr=False)
    received_ns: int = field(default_factory=time.monotonic_ns)  # CLOCK_MONOTONIC on arrival

    @property
    def api(self) -> str:
        return SUPPORTED[self.api_key][0] if self.api_key in SUPPORTED else f"api-{self.api_key}"

    @property
    def error_code(self) -> int | None:
        """The answer's error (None: no answer yet, or one that carries none): its own
        ``error_code``; OffsetFetch v8+'s group's; OffsetCommit's, which has one per
        partition, when every partition carries the same (the coordinator refusing the
        commit as a whole: a fencing error, REBALANCE_IN_PROGRESS, a moved coordinator)."""
        code = getattr(self.response, "error_code", None)
        if code is None and self.api == "OffsetFetch":
            groups = getattr(self.response, "groups", ())
            code = groups[0].error_code if groups else None
        elif code is None and self.api == "OffsetCommit" and self.response is not None:
            codes = {int(p.error_code) for t in self.response.topics for p in t.partitions}
            code = codes.pop() if len(codes) == 1 else None
        return None if code is None else int(code)

    def line(self) -> str:
        """One line for a person: time, member, API and version, outcome."""
        who = self.who.member_id or self.who.client_id or "?"
        took = "" if self.answered_ms is None else f" {self.answered_ms - self.received_ms}ms"
        code = self.error_code
        outcome = "pending" if self.answered_ms is None else (
            "ok" if code in (None, 0) else f"error {code}")
        extra = (f" [{self.steering}]" if self.steering else "") + (
            " (unread: the client had closed the connection)" if self.unread else "")
        return (f"{self.received_ms:>8}ms conn {self.connection} {who} "
                f"{self.api} v{self.api_version} -> {outcome}{took}{extra}")


@dataclass
class Held:
    """A response kept back by a hold rule; `Broker.release` sends it. ``tag``: the
    rule's (who asked for the hold)."""

    hold_id: int
    exchange: Exchange
    waiter: Any = field(repr=False, default=None)
    tag: str = ""

    @property
    def member(self) -> str:
        return self.exchange.who.member_id or self.exchange.who.client_id

    @property
    def api(self) -> str:
        return self.exchange.api


class ExchangeLog:
    """The last ``limit`` exchanges, in arrival order (bounded memory)."""

    def __init__(self, limit: int = 100_000) -> None:
        self._items: collections.deque[Exchange] = collections.deque(maxlen=limit)
        #: the steered ones apart: a reader of those alone skips every plain exchange
        self._steered: collections.deque[Exchange] = collections.deque(maxlen=limit)
        self._fenced: collections.deque[tuple[int, Exchange]] = collections.deque(maxlen=limit)
        self._answers = itertools.count()
        self._seq = itertools.count()
        self.dropped = 0

    def steer(self, exchange: Exchange, description: str) -> None:
        """Mark ``exchange`` as steered by the rule ``description`` names."""
        exchange.steering = description
        self._steered.append(exchange)

    def steered_since(self, seq: int) -> list[Exchange]:
        """The steered exchanges past sequence number ``seq``, in arrival order."""
        return sorted((e for e in self._steered if e.seq > seq), key=lambda e: e.seq)

    def answered(self, exchange: Exchange) -> None:
        """``exchange`` got its answer: one the coordinator itself gave with a fencing error is
        kept apart too, numbered in answer order (a reader of those skips every plain one)."""
        if not exchange.steering and exchange.error_code in FENCING_ERRORS:
            self._fenced.append((next(self._answers), exchange))

    def fenced_since(self, number: int) -> list[tuple[int, Exchange]]:
        """The unsteered fencing answers numbered past ``number``, in answer order (a join
        the coordinator parked is answered after exchanges that came in later)."""
        return [(n, e) for n, e in self._fenced if n > number]

    def open(self, **fields: Any) -> Exchange:
        if len(self._items) == self._items.maxlen:
            self.dropped += 1
        exchange = Exchange(seq=next(self._seq), **fields)
        self._items.append(exchange)
        return exchange

    def __iter__(self) -> Iterator[Exchange]:
        return iter(list(self._items))

    def since(self, seq: int) -> list[Exchange]:
        """The exchanges past sequence number ``seq``, in arrival order (read from the
        newest back: a deque's slice from the front costs the whole log)."""
        out = list(itertools.takewhile(lambda e: e.seq > seq, reversed(self._items)))
        out.reverse()
        return out

    def __len__(self) -> int:
        return len(self._items)
