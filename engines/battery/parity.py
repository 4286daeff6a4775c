"""Parity with Kafka's recorded answer, as the vectors engine (``check --parity``) judges
it: each member's partitions as a list, in Kafka's order. A difference of order alone is
still a difference, told apart from a difference of partitions ("order only")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...properties.jsonl_shapes import Answered

__all__ = ["ORDER_ONLY", "Kind", "ParityDifference", "member_lists", "parity_difference",
           "parity_line"]

#: the kinds of parity difference: an error on one side only, other partitions, or the
#: same partitions in another order
Kind = Literal["error", "partitions", "order only"]
ORDER_ONLY: Kind = "order only"
TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class ParityDifference:
    """The first member whose list differs from Kafka's, both lists, and the kind."""

    kind: Kind
    member: str
    kafka: tuple[TopicPartition, ...]
    target: tuple[TopicPartition, ...]

    def line(self) -> str:
        """The finding's line: ``PARITY: [order only: ]member: Kafka …, target …``."""
        label = f"{ORDER_ONLY}: " if self.kind == ORDER_ONLY else ""
        return (f"PARITY: {label}{self.member}: Kafka {_show(self.kafka)}, "
                f"target {_show(self.target)}")


def member_lists(response: Answered) -> dict[str, tuple[TopicPartition, ...]]:
    """Each member's partitions in the order answered (members with none left out)."""
    if "error" in response:
        return {}
    return {m: tuple((str(t), int(p)) for t, p in ps)
            for m, ps in (response.get("assignment") or {}).items() if ps}


def parity_difference(expected: Answered, got: Answered) -> ParityDifference | None:
    """None when every member's list is Kafka's, in order; else the first member (by name)
    whose list differs, "order only" when every member holds Kafka's partitions (each as
    often)."""
    a, b = member_lists(expected), member_lists(got)
    if a == b:
        return None
    same_sets = {m: sorted(ps) for m, ps in a.items()} == {m: sorted(ps) for m, ps in b.items()}
    member = next(m for m in sorted(set(a) | set(b)) if a.get(m, ()) != b.get(m, ()))
    return ParityDifference("order only" if same_sets else "partitions", member,
                            a.get(member, ()), b.get(member, ()))


def parity_line(expected: Answered, got: Answered) -> tuple[str, Kind] | None:
    """The ``PARITY`` line of an answer against Kafka's, and its kind; None when they agree
    (an error on both sides agrees)."""
    if "error" in expected and "error" not in got:
        return f"PARITY: Kafka raised {expected.get('errorClass')}, the target answered", "error"
    if "error" not in expected and "error" in got:
        return f"PARITY: the target raised {got['error']}", "error"
    differs = parity_difference(expected, got)
    return None if differs is None else (differs.line(), differs.kind)


def _show(partitions: tuple[TopicPartition, ...]) -> str:
    return ",".join(f"{t}-{p}" for t, p in partitions) or "-"
