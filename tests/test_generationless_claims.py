"""I6 on the coordinator's bytes does not judge the claims of a release that sends no
generation (Kafka's client before KIP-792, e.g. 2.8.0): after a failed SyncGroup such a
member claims what it last owned, and nothing in its JoinGroup tells the leader that the
claim is stale. ``check --target wire:java@2.8.0:cooperative-sticky`` reported I6 as not
judged, yet the fuzz still stopped on (and shrank) those claims, and in
``wire:mixed:java@2.8.0+java@4.0.0-SNAPSHOT`` they failed the run as I6. The shrunk story
(seed 0) is kept in ``tests/data/wire-java_2.8.0-cooperative-sticky-stale-claim-I6.json``: c1 gets
ILLEGAL_GENERATION on SyncGroup and, in its next JoinGroup, claims all five partitions of
its last assignment (``groupcheck replay FILE`` shows the story; it is now not judged)."""

from __future__ import annotations

from groupcheck.model.spec import ReferenceModel
from groupcheck.properties.group import Claim, RebalanceRecord

STALE = (("t0", 0), ("t0", 1))


def _record(generationless: frozenset[str]) -> RebalanceRecord:
    """c1 claims t0-0 and t0-1; its last completed generation gave it t0-0 only."""
    return RebalanceRecord(
        5, "COOPERATIVE", "cooperative-sticky",
        {"c1": Claim(("t0",), STALE, -1), "c2": Claim(("t0",), (), -1)},
        {"c1": STALE, "c2": ()}, {"c1": (("t0", 0),), "c2": ()},
        observed=True, given={"c1": (("t0", 0),), "c2": ()}, generationless=generationless)


def _stale_claims(model: ReferenceModel, record: RebalanceRecord) -> list[str]:
    model.partitions = {"t0": 2}
    return [v for v in model._rebalance(record) if "last completed generation" in v]


def test_a_stale_claim_is_i6_for_a_member_that_sends_generations() -> None:
    assert _stale_claims(ReferenceModel(generations=False), _record(frozenset())) == []
    found = _stale_claims(ReferenceModel(), _record(frozenset()))
    assert found and "I6: c1 claims t0-1" in found[0]


def test_a_generationless_members_claims_are_not_judged() -> None:
    assert _stale_claims(ReferenceModel(), _record(frozenset({"c1"}))) == []
