"""When a replay shows the violation a file saved: the same invariant, about the same members
and partitions.

A violation is one line of text (``I5: c1's assign of t0-2 began (#15) before c2 had
released it (#17)``). Its `Subject` is its invariant id (``I5``; ``ERROR``, ``PARITY`` and
``TIMEOUT`` for the findings that are no invariant) and the names it mentions among those
the saved file knows — its members and topics — with the partitions of those topics
(``t0-2``). What may differ between two runs of one story is not part of it: a log's ordinal
numbers (``#15``), counts, generations, times and member ids a coordinator drew. Two
violations are the same when their subjects are; a replay reproduces a file when one of the
violations it shows is the same as one the file recorded (all of them were seen at the
same step of the saved run). A file that recorded none is reproduced by any violation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Names", "Subject", "reproduces", "subject_of"]

ID = re.compile(r"\b(I\d+a?|ERROR|PARITY|TIMEOUT)\b")
TOKEN = re.compile(r"[A-Za-z0-9_.\-]+")


@dataclass(frozen=True)
class Names:
    """The members and topics a saved file knows."""

    members: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Subject:
    invariant: str
    names: frozenset[str]  # the members and topics it mentions
    partitions: frozenset[str]  # ``topic-N`` of a known topic


def subject_of(violation: str, names: Names) -> Subject:
    found = ID.search(violation)
    mentioned: set[str] = set()
    partitions: set[str] = set()
    for raw in TOKEN.findall(violation):
        token = raw.strip(".-")
        topic, _, number = token.rpartition("-")
        if token in names.members or token in names.topics:
            mentioned.add(token)
        elif number.isdigit() and topic in names.topics:
            partitions.add(token)
    return Subject(found.group(1) if found else "", frozenset(mentioned),
                   frozenset(partitions))


def reproduces(saved: Sequence[str], seen: Iterable[str], names: Names) -> str | None:
    """The first of ``seen`` that is one of the ``saved`` violations (any, when none was
    saved; of the invariant alone, for one saved as a bare id such as ``I2``); None when
    none is."""
    bare = {v for v in saved if ID.fullmatch(v)}
    wanted = {subject_of(v, names) for v in saved if v not in bare}
    for violation in seen:
        found = subject_of(violation, names)
        if not saved or found in wanted or found.invariant in bare:
            return violation
    return None
