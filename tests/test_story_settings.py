"""A replay file whose story moves its coordinator is replayed on a broker of two nodes, as
the fault engine recorded it (a wire group runs one node by default, and a move on one node
is groupcheck's own error, not a finding)."""

from __future__ import annotations

import json
from pathlib import Path

from groupcheck.engines.resolving import story_settings
from groupcheck.model.saved_files import read as read_saved
from groupcheck.targets.settings import Settings
from groupcheck.targets.wire.backends.factory import BROKER_NODES, MOVE_NODES


def _saved(tmp_path: Path, *events: dict[str, object]) -> object:
    path = tmp_path / "story.json"
    path.write_text(json.dumps({"format": "groupcheck-replay/1", "target": "wire:java:range",
                                "invariant": "I11", "violations": [],
                                "events": list(events)}), encoding="utf-8")
    return read_saved(path)


def test_a_story_that_moves_its_coordinator_is_replayed_on_two_nodes(tmp_path: Path) -> None:
    moved = _saved(tmp_path, {"op": "partitions", "topic": "t0", "count": 4},
                   {"op": "move", "member": "c1", "api": "OffsetFetch"})
    assert BROKER_NODES < MOVE_NODES
    assert story_settings(Settings(), [moved]).broker_nodes == MOVE_NODES
    assert story_settings(Settings(broker_nodes=3), [moved]).broker_nodes == 3  # the user's


def test_a_story_without_a_move_keeps_the_settings(tmp_path: Path) -> None:
    still = _saved(tmp_path, {"op": "partitions", "topic": "t0", "count": 4})
    assert story_settings(Settings(), [still]) == Settings()
    assert story_settings(Settings(), [None]) == Settings()
