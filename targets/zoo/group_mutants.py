"""Deliberately broken variants of our implementation: proof that the harness has teeth.

Each mutant is a small, honest change to the real thing — one rule of a KIP undone — that
reproduces a bug real clients shipped (the ids refer to Kafka's JIRA and the bug zoo).
`groupcheck fuzz --target mutant:<name>` must catch each one on the invariant named here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...impl.assignors import make_assignor
from ...impl.assignors.sticky import CooperativeStickyAssignor
from ...impl.consumer import Consumer
from ...impl.types import Assignor, Subscription, TopicPartition
from ...properties.group import GroupTarget, MemberSpec
from ..adapters.builtin import BuiltinGroup
from ..adapters.legacy import PreKip341StickyAssignor

__all__ = ["MUTANTS", "MUTANT_ASSIGNORS", "Mutant", "NoWithholdCooperativeStickyAssignor",
           "PauseDroppingConsumer", "PreKip341StickyAssignor"]


class NoWithholdCooperativeStickyAssignor(CooperativeStickyAssignor):
    """KIP-429 undone: partitions that change owner are handed over in the same rebalance
    instead of being withheld until their owner has revoked them."""

    def adjust_assignment(self, assignment: dict[str, list[TopicPartition]],
                          subscriptions: dict[str, Subscription]) -> None:
        return None


class PauseDroppingConsumer(Consumer):
    """KIP-822 undone under the ``kip`` profile: pause marks are forgotten at every
    rebalance, as Kafka's eager consumer does (KAFKA-13425)."""

    def _restore_pauses(self) -> None:
        self._saved_paused.clear()


@dataclass(frozen=True)
class Mutant:
    name: str
    bug: str
    invariant: str
    assignor: str
    factory: Callable[[], GroupTarget]
    profiles: tuple[str, ...] = ("kip", "java")
    user_data_versions: tuple[int, ...] = (1,)


def _with_assignor(target: str, replace: str,
                   cls: Callable[[], Assignor]) -> Callable[[], GroupTarget]:
    def assignor(name: str, spec: MemberSpec) -> Assignor:
        return cls() if name == replace else make_assignor(name)
    return lambda: BuiltinGroup(target, assignor_factory=assignor)


MUTANTS: dict[str, Mutant] = {m.name: m for m in (
    Mutant("sticky-user-data-v0", "KAFKA-7026 (bug zoo #1): pre-KIP-341 sticky clients",
           "I1", "sticky",
           _with_assignor("mutant:sticky-user-data-v0", "sticky", PreKip341StickyAssignor),
           profiles=("kip",), user_data_versions=(0,)),
    Mutant("cooperative-no-withhold", "KIP-429 revoke-before-reassign not honoured",
           "I5", "cooperative-sticky",
           _with_assignor("mutant:cooperative-no-withhold", "cooperative-sticky",
                          NoWithholdCooperativeStickyAssignor)),
    Mutant("pause-dropper", "KIP-822 pause marks dropped under the kip profile (KAFKA-13425)",
           "I8", "sticky",
           lambda: BuiltinGroup("mutant:pause-dropper", consumer_factory=PauseDroppingConsumer),
           profiles=("kip",)),
)}

#: the assignor each group mutant's members run where it is not Kafka's own (for the scope
#: prover and the user-data check; the pause dropper changes the consumer, not the assignor)
MUTANT_ASSIGNORS: dict[str, Callable[[], Assignor]] = {
    "sticky-user-data-v0": PreKip341StickyAssignor,
    "cooperative-no-withhold": NoWithholdCooperativeStickyAssignor,
}
