"""The one table of what groupcheck judges: each invariant's id, name, one line of when it
holds, and the engines that judge it (`INVARIANTS`, in report order).

Every list of invariants in the code derives from it (the rows of ``check``'s table, an
engine's repertoire, the audit's columns), and so do the summary tables of
``docs/reference/invariants.md``, which the documentation build regenerates and checks.
Besides the seventeen protocol invariants (``I1``–``I17``, `NUMBERED`) the table holds the
three outcomes every engine may report: ``PARITY``, ``ERROR`` and ``TIMEOUT``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["INVARIANTS", "JUDGES", "NUMBERED", "ROWS", "Invariant", "Judge", "by_id",
           "judged_by", "pattern"]


@dataclass(frozen=True)
class Judge:
    """An engine that judges invariants: its ``key`` in `Invariant.judges` and its
    ``heading`` on the reference page."""

    key: str
    heading: str


JUDGES: tuple[Judge, ...] = (
    Judge("codec", "codec"), Judge("prove", "prove"), Judge("vectors", "vectors"),
    Judge("scenarios", "scenarios"), Judge("fuzz", "fuzz"), Judge("wire", "fuzz on the wire"),
    Judge("audit", "audit"), Judge("bmc", "BMC"), Judge("broker", "broker"),
    Judge("replay", "replay of a request"), Judge("scale", "scale"),
)


@dataclass(frozen=True)
class Invariant:
    """One row of the table. ``verdict`` is the id its verdicts carry where that differs
    from ``id`` (I4's judged part is I4a; I4b is a figure)."""

    id: str
    name: str
    holds_when: str
    judges: tuple[str, ...]
    verdict: str = ""

    @property
    def row(self) -> str:
        """The id in verdicts, reports and ``check``'s table."""
        return self.verdict or self.id

    @property
    def numbered(self) -> bool:
        """A protocol invariant (I1…), not one of the outcomes PARITY, ERROR, TIMEOUT."""
        return re.fullmatch(r"I\d+", self.id) is not None

    @property
    def heading(self) -> str:
        """Its section's heading on the reference page."""
        return f"{self.id} {self.name}" if self.numbered else self.id

    @property
    def anchor(self) -> str:
        """The reference page's anchor of its section."""
        return re.sub(r"[^a-z0-9-]", "", self.heading.lower().replace(" ", "-"))


_ASSIGN = ("prove", "scenarios", "fuzz", "audit")  # the engines that judge one assignment

INVARIANTS: tuple[Invariant, ...] = (
    Invariant("I1", "exclusive ownership", "no partition is owned by two members at once",
              ("prove", "vectors", "scenarios", "fuzz", "wire", "audit", "bmc", "broker",
               "replay")),
    Invariant("I2", "complete", "a settled group owns every partition of every subscribed "
              "topic exactly once, each by a subscriber",
              ("prove", "vectors", "scenarios", "fuzz", "wire", "audit", "broker", "replay")),
    Invariant("I3", "balanced", "the assignment keeps the assignor's balance contract",
              (*_ASSIGN, "replay")),
    Invariant("I4", "sticky", "(a) a balanced, valid previous assignment with unchanged "
              "membership moves nothing; (b) moves against Z3's optimum, a figure",
              _ASSIGN, verdict="I4a"),
    Invariant("I5", "revoke before reassign", "cooperative: a partition A owns when a "
              "rebalance starts never goes to B in that rebalance",
              (*_ASSIGN, "wire", "bmc", "replay")),
    Invariant("I6", "generation hygiene", "a claim loses only to a strictly higher "
              "generation; claims travel with a generation; a fenced member reports "
              "partitions lost", (*_ASSIGN, "wire", "bmc", "broker", "replay")),
    Invariant("I7", "listener contract", "rebalance callbacks follow the member's client "
              "profile", ("fuzz", "wire")),
    Invariant("I8", "pause retention", "pause marks follow the profile; no record of a "
              "paused partition is returned", ("fuzz", "wire")),
    Invariant("I9", "subscription change", "`subscribe` changes nothing until the next "
              "rebalance; `unsubscribe` commits, releases, clears", ("fuzz", "wire")),
    Invariant("I10", "codec compatibility", "every writer/reader version pair reads what was "
              "written, projected to the older version", ("codec", "wire", "audit", "broker")),
    Invariant("I11", "convergence", "with no membership change, the group settles within a "
              "bounded number of rebalances", (*_ASSIGN, "wire")),
    Invariant("I12", "user-data hygiene", "the user data a member sends says exactly what it "
              "was given", ("codec", "fuzz")),
    Invariant("I13", "cost", "one assign call at a group shape Kafka's own scale tests use "
              "takes at most the rebalance timeout (300 s)", ("scale",)),
    Invariant("I14", "static membership", "a static member back within its session timeout "
              "gets its partitions with no rebalance; one a duplicate instance id replaced "
              "is told it is fenced (KIP-345)", ("wire",)),
    Invariant("I15", "errors stay in the client", "a client's poll() raises no exception "
              "for an error its client retries on its own (Kafka's RetriableException), and "
              "none of its own making (a language-level error such as IllegalStateException)",
              ("wire",)),
    Invariant("I16", "member-id hygiene", "after a coordinator error a member rejoins with "
              "its member id or without it as its client's profile says", ("wire",)),
    Invariant("I17", "delivery", "across rebalances no record is skipped or lost, a new "
              "owner starts at the committed offset, records come again only from the last "
              "commit; commits name owned partitions and never go back", ("wire",)),
    Invariant("PARITY", "parity", "the same partitions per member as Kafka's recorded "
              "answer, in its order", ("vectors",)),
    Invariant("ERROR", "error", "the implementation answers every input a correct client "
              "sends without raising", ("prove", "scenarios", "audit", "replay", "scale")),
    Invariant("TIMEOUT", "timeout", "the implementation answers within its time limit",
              ("prove", "vectors", "scenarios", "fuzz", "audit", "replay")),
)

NUMBERED: tuple[Invariant, ...] = tuple(i for i in INVARIANTS if i.numbered)
#: every id a verdict carries, in report order
ROWS: tuple[str, ...] = tuple(i.row for i in INVARIANTS)


def judged_by(judge: str, *, timed: bool = True, ids: bool = False) -> tuple[str, ...]:
    """The rows ``judge`` judges, in report order: without TIMEOUT unless the target is
    ``timed`` (has a time limit); their ``id``s with ``ids`` (the audit's column of I4a is
    I4)."""
    if judge not in {j.key for j in JUDGES}:
        raise ValueError(f"no engine {judge!r} judges invariants")
    return tuple(i.id if ids else i.row for i in INVARIANTS
                 if judge in i.judges and (timed or i.id != "TIMEOUT"))


def by_id(invariant_id: str) -> Invariant:
    """The invariant of ``id`` (I4) or of its verdicts' id (I4a)."""
    for invariant in INVARIANTS:
        if invariant_id in (invariant.id, invariant.row):
            return invariant
    raise KeyError(invariant_id)


def pattern() -> re.Pattern[str]:
    """A word that is an invariant's id or verdict id (I4, I4a, TIMEOUT, ...)."""
    words = sorted({w for i in INVARIANTS for w in (i.id, i.row)}, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(words) + r")\b")
