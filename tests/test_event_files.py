"""Events as typed records and as a replay file's JSON: every committed replay file reads into
typed events and writes back to the same objects and bytes; bad events are refused in one
line that names the op and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupcheck.model.event_types import Join
from groupcheck.model.events import (
    EVENT_TYPES,
    EventFormatError,
    read_event,
    read_events,
    write_events,
)
from groupcheck.model.group_events import Poll, Settle
from groupcheck.model.replay import FORMAT, load, save
from groupcheck.model.saved_files import SavedFileError, read_text

ROOT = Path(__file__).resolve().parent.parent
REPLAY_FILES = sorted(p for folder in ("findings", "tests/data")
                      for p in (ROOT / folder).rglob("*.json")
                      if json.loads(p.read_text(encoding="utf-8")).get("format") == FORMAT)


def test_the_committed_replay_files_cover_every_kind_of_event_but_a_few() -> None:
    """The round trip below is worth as much as the kinds it sees."""
    seen = {e["op"] for p in REPLAY_FILES
            for e in json.loads(p.read_text(encoding="utf-8"))["events"]}
    assert len(REPLAY_FILES) >= 25 and len(seen) >= 15 and seen <= set(EVENT_TYPES)


@pytest.mark.parametrize("path", REPLAY_FILES, ids=lambda p: p.stem[:50])
def test_a_replay_file_reads_and_writes_back_byte_for_byte(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    written = write_events(read_events(data["events"]))
    assert [list(e.items()) for e in written] == [list(e.items()) for e in data["events"]]
    assert json.dumps({**data, "events": written}, indent=1, ensure_ascii=False) + "\n" == text


def test_left_out_fields_stay_left_out_and_given_defaults_stay_given() -> None:
    bare = {"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["range"]}
    spelled = {**bare, "profile": "kip", "subscription_version": 3}
    assert write_events(read_events([bare, spelled, {"op": "poll"}])) == [
        bare, spelled, {"op": "poll"}]
    joined = read_event(bare)
    assert isinstance(joined, Join) and joined.spec() == read_event(spelled).spec()
    assert read_event({"op": "poll"}) == Poll() and Poll().count == 1


def test_an_upgrade_plans_notes_come_after_the_kinds_fields() -> None:
    event = read_event({"op": "settle", "bounce": 2, "fault": True})
    assert event == Settle(bounce=2, fault=True)
    assert list(write_events([event])[0]) == ["op", "bounce", "fault"]


@pytest.mark.parametrize(("raw", "says"), [
    ({"op": "jump", "member": "c1"}, "unknown event op 'jump'"),
    ({"member": "c1"}, "unknown event op None"),
    ({"op": "leave"}, "leave event: missing field 'member'"),
    ({"op": "join", "member": "c1", "topics": "t0", "assignors": ["range"]},
     "join event: field 'topics' must be a list of strings"),
    ({"op": "partitions", "topic": "t0", "count": "3"},
     "partitions event: field 'count' must be an integer"),
    ({"op": "partitions", "topic": "t0", "count": True},
     "partitions event: field 'count' must be an integer"),
    ({"op": "pause", "member": "c1", "partitions": [["t0"]]},
     "pause event: field 'partitions' must be a list of [topic, partition] pairs"),
    ({"op": "sync_order", "member": "c1", "leader_first": 1},
     "sync_order event: field 'leader_first' must be true or false"),
    ({"op": "settle", "sleep": 3}, "settle event: unknown field 'sleep'"),
    ({"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["range"],
      "profile": None}, "join event: field 'profile' must be a string"),
])
def test_a_bad_event_is_one_line_naming_the_op_and_the_field(raw: object, says: str) -> None:
    with pytest.raises(EventFormatError) as caught:
        read_event(raw)
    message = str(caught.value)
    assert message.startswith(says) and "\n" not in message


def test_readers_refuse_a_bad_event_with_their_own_error_and_its_number(tmp_path: Path) -> None:
    body = {"format": FORMAT, "target": "builtin:range", "seed": None, "invariant": "none",
            "violations": [], "events": [{"op": "settle"}, {"op": "leave"}]}
    with pytest.raises(SavedFileError, match=r"^f\.json: event 2: leave event: missing "):
        read_text(json.dumps(body), "f.json")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(body))
    with pytest.raises(ValueError, match="event 2: leave event: missing field 'member'"):
        load(path)


def test_a_saved_file_reads_back_as_the_events_it_was_saved_from(tmp_path: Path) -> None:
    events = [Join("c1", ("t0", "t1"), ("sticky",), user_data_version=0, rolling=True),
              Settle(bounce=1)]
    path = save(tmp_path, "builtin:sticky", events, [], 0)
    assert read_events(load(path)["events"]) == events
