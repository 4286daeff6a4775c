"""Rolling upgrades played on the wire, one short one per protocol path on Kafka's Java client
(two members on groupcheck's broker): a release upgrade on the same protocol, and the switch
from eager to cooperative over KIP-429's two bounces, with its one-bounce shortcut beside it.
Every step is judged (I1, I5, I6, I10, records, I11 after each restart). Both prescribed paths
run by default; the shortcut, whose refused member ends its step at once, plays both paths of
its upgrade again, so it runs in ``tox -e upgrades``."""

from __future__ import annotations

import pytest

from groupcheck.engines.upgrades.plan import parse_side, plans_for
from groupcheck.engines.upgrades.play import play
from groupcheck.engines.upgrades.table import run_upgrade
from groupcheck.targets.wire.wire_group import STEP_WAIT

from helpers.environment import SETTINGS
from helpers.kafka_releases import repo_releases

#: the tests of rolling upgrades: ``tox -e upgrades`` (``pytest -m upgrades``) runs them all
pytestmark = pytest.mark.upgrades


def test_a_release_upgrade_on_the_same_protocol_is_certified(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo_releases("2.8.0", "3.4.0")
    table = run_upgrade(parse_side("wire:java@2.8.0:range"), parse_side("wire:java@3.4.0:range"),
                        SETTINGS, members=2, seed=0, faults=0.5, failures=tmp_path)
    [outcome] = table.outcomes
    assert outcome.verdict == "certified", (outcome.reason, outcome.story[-20:])
    assert outcome.clients["java@2.8.0"]["version"] == "2.8.0"
    assert [b.bounce for b in outcome.bounces] == [0, 1]
    assert outcome.bounces[1].rebalances >= 2  # each of the two restarts is a rebalance


def test_eager_to_cooperative_over_two_bounces_is_certified(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo_releases("3.4.0")
    two, _shortcut = plans_for(parse_side("wire:java@3.4.0:range"),
                               parse_side("wire:java@3.4.0:cooperative-sticky"))
    assert two.path == "two-bounce"
    outcome = play(two, SETTINGS, members=2, seed=0, faults=0.0, shrink_seconds=0,
                   failures=tmp_path)
    assert outcome.verdict == "certified", (outcome.reason, outcome.story[-20:])
    assert [b.bounce for b in outcome.bounces] == [0, 1, 2]


@pytest.mark.slow  # half a minute of real clients, both paths (tox -e upgrades)
def test_the_one_bounce_shortcut_is_refused_beside_a_certified_two_bounce(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo_releases("3.4.0")
    table = run_upgrade(parse_side("wire:java@3.4.0:range"),
                        parse_side("wire:java@3.4.0:cooperative-sticky"),
                        SETTINGS, members=2, seed=0, faults=0.0, failures=tmp_path,
                        shrink_seconds=0)
    two, one = table.outcomes
    assert two.plan.path == "two-bounce" and two.verdict == "certified", two.story[-12:]
    # the shortcut leaves the restarted member with no assignor in common with the other:
    # the coordinator refuses it for good (INCONSISTENT_GROUP_PROTOCOL), as KIP-429 warns
    assert one.plan.path == "one-bounce" and one.verdict == "fails"
    assert "I11" in one.reason and one.broke_at and one.broke_at["bounce"] == 1
    # ...which the step sees in the broker's log and says at once, not after its wait
    assert "INCONSISTENT_GROUP_PROTOCOL" in one.reason and one.seconds < STEP_WAIT
    assert not table.failed  # the shortcut is a second verdict
