"""What a rolling upgrade plays, without a wire: its ends, its KIP-429 path, the seeded story
of bounces, the pair lists of the certification table, and the replay file's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.engines.errors import EngineInputError
from groupcheck.engines.upgrades.plan import Side, parse_side, plans_for, story
from groupcheck.engines.upgrades.play import UpgradeOutcome, save_upgrade
from groupcheck.engines.upgrades.table import read_pairs
from groupcheck.model.event_types import Crash, Join, Leave
from groupcheck.model.events import read_events
from groupcheck.model.replay import load

#: the tests of rolling upgrades: ``tox -e upgrades`` (``pytest -m upgrades``) runs them all
pytestmark = pytest.mark.upgrades


def test_an_end_is_one_client_at_a_release_with_an_assignor_list() -> None:
    side = parse_side("wire:librdkafka@2.3.0:cooperative-sticky,range")
    assert side == Side("librdkafka@2.3.0", ("cooperative-sticky", "range"))
    assert side.protocol == "EAGER"  # one eager assignor keeps the member EAGER (KIP-429)
    assert parse_side("wire:java@3.4.0:cooperative-sticky").protocol == "COOPERATIVE"


@pytest.mark.parametrize("text", ["java@3.4.0:range", "wire:mixed:java+kafkajs:range",
                                  "wire:java:range,,sticky", "wire:java:range,range",
                                  "wire:java", "wire:java:range:adversarial"])
def test_a_malformed_end_is_one_line_of_bad_input(text: str) -> None:
    with pytest.raises(EngineInputError) as caught:
        parse_side(text)
    assert "\n" not in str(caught.value)


def test_eager_to_cooperative_takes_two_bounces_with_the_shortcut_beside_them() -> None:
    up = plans_for(parse_side("wire:java@3.4.0:range"),
                   parse_side("wire:java@4.0.0-SNAPSHOT:cooperative-sticky"))
    assert [p.path for p in up] == ["two-bounce", "one-bounce"]
    assert [b.assignors for b in up[0].bounces] == [("cooperative-sticky", "range"),
                                                   ("cooperative-sticky",)]
    assert all(b.client == "java@4.0.0-SNAPSHOT" for b in up[0].bounces)
    assert up[0].primary and not up[1].primary
    assert [b.assignors for b in up[1].bounces] == [("cooperative-sticky",)]


def test_a_downgrade_to_eager_keeps_the_cooperative_assignor_in_the_first_bounce() -> None:
    down = plans_for(parse_side("wire:java@4.0.0-SNAPSHOT:cooperative-sticky"),
                     parse_side("wire:java@3.4.0:range"))
    assert down[0].path == "two-bounce"
    assert [b.assignors for b in down[0].bounces] == [("range", "cooperative-sticky"),
                                                     ("range",)]


def test_a_release_upgrade_on_the_same_protocol_is_one_bounce() -> None:
    plans = plans_for(parse_side("wire:kafka-python@2.0.2:range"),
                      parse_side("wire:librdkafka@2.16.1:range"))
    assert [(p.path, len(p.bounces)) for p in plans] == [("same protocol", 1)]


def test_the_story_bounces_every_member_once_per_bounce_and_is_the_same_for_a_seed() -> None:
    plan = plans_for(parse_side("wire:java@3.4.0:range"),
                     parse_side("wire:java@3.4.0:cooperative-sticky"))[0]
    events = story(plan, members=3, seed=7, faults=1.0)
    assert events == story(plan, members=3, seed=7, faults=1.0)
    assert events != story(plan, members=3, seed=8, faults=1.0)
    for bounce, side in enumerate(plan.bounces, 1):
        joins = [e for e in events if isinstance(e, Join) and e.bounce == bounce]
        assert [e.member for e in joins] == ["m1", "m2", "m3"]
        assert all(e.client == side.client and e.assignors == side.assignors and e.rolling
                   for e in joins)
        exits = [e for e in events if isinstance(e, (Leave, Crash)) and e.bounce == bounce]
        assert len(exits) == 3
    assert any(e.fault for e in events)
    assert not any(e.fault for e in story(plan, members=3, seed=7, faults=0.0))


def test_the_shipped_pair_list_reads_and_covers_every_client() -> None:
    pairs = read_pairs("default")
    families = {s.client.partition("@")[0] for pair in pairs for s in pair}
    assert families == {"java", "librdkafka", "kafka-python", "aiokafka", "kafkajs"}
    assert any(a.client.partition("@")[0] != b.client.partition("@")[0] for a, b in pairs)
    assert any(a.protocol != b.protocol for a, b in pairs)


@pytest.mark.parametrize("text", ["wire:java@3.4.0:range\n",
                                  "wire:java@3.4.0:range wire:java@3.8.0:range extra\n",
                                  "# nothing but a comment\n",
                                  "wire:java@3.4.0:range java@3.8.0:range\n"])
def test_a_malformed_pair_list_names_its_file_and_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "pairs.txt"
    path.write_text("# upgrades\n" + text)
    with pytest.raises(EngineInputError) as caught:
        read_pairs(str(path))
    message = str(caught.value)
    assert str(path) in message and "\n" not in message


def test_a_replay_file_names_both_releases_the_path_and_the_bounce(tmp_path: Path) -> None:
    plan = plans_for(parse_side("wire:librdkafka@2.3.0:range"),
                     parse_side("wire:librdkafka@2.16.1:cooperative-sticky"))[0]
    events = story(plan, members=2, seed=0, faults=0.0)
    outcome = UpgradeOutcome(plan, "fails", broke_at={"bounce": 1, "member": "m1",
                                                      "release": plan.bounces[0].label()},
                             clients={"librdkafka@2.3.0": {"client": "librdkafka",
                                                           "version": "2.3.0",
                                                           "profile": "librdkafka"}})
    path = save_upgrade(tmp_path, plan, events, ["I11: m1 cannot rejoin"], 0, outcome)
    assert "librdkafka_2.3.0-range" in path.name and "librdkafka_2.16.1" in path.name
    assert "two-bounce" in path.name and "bounce1" in path.name and "I11" in path.name
    data = load(path)  # a replay file `groupcheck replay` reads
    assert data["target"] == "wire:librdkafka@2.3.0:range"
    assert data["upgrade"]["bounce"] == 1 and data["upgrade"]["clients"]
    assert read_events(json.loads(path.read_text())["events"]) == events


def test_the_table_names_each_release_as_its_driver_reported_it(tmp_path: Path) -> None:
    from groupcheck.engines.upgrades.play import BounceStats
    from groupcheck.engines.upgrades.table import UpgradeTable, table_text, write_table

    two, one = plans_for(parse_side("wire:librdkafka@2.3.0:range"),
                         parse_side("wire:librdkafka@2.16.1:cooperative-sticky"))
    clients = {"librdkafka@2.16.1": {"client": "librdkafka", "version": "2.16.0",
                                     "profile": "librdkafka"}}
    table = UpgradeTable([
        UpgradeOutcome(two, "fails", "bounce 1: I11: m1 cannot rejoin", clients=clients),
        UpgradeOutcome(one, "fails", "bounce 1: I11: idle", clients=clients,
                       bounces=[BounceStats(1, "x", 1, 62.0, 61.9)])])
    text = table_text(table)
    assert "librdkafka@2.16.1: librdkafka 2.16.0, profile librdkafka" in text
    assert "fails (shortcut)" in text and "b1: 1 reb, 61.9s" in text
    assert table.failed  # the prescribed two-bounce path failed, not only the shortcut
    data, page = write_table(table, tmp_path / "out")
    rows = json.loads(data.read_text())["rows"]
    assert [(r["path"], r["primary"], r["verdict"]) for r in rows] == [
        ("two-bounce", True, "fails"), ("one-bounce", False, "fails")]
    assert "librdkafka 2.16.0" in page.read_text()
