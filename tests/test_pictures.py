"""Ownership timelines (audit/picture.py): what each cell says, and a real browser's view."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import replay_record, run_chain
from groupcheck.audit.picture import (
    MAX_ROWS,
    OwnershipCell,
    chain_timeline,
    events_timeline,
    html_page,
    named_partitions,
    svg,
)
from groupcheck.cli import main
from groupcheck.engines.battery.scenarios import story_target
from groupcheck.model.events import read_events
from groupcheck.model.replay import replay_events
from groupcheck.targets.registry import make_group_target, resolve

DATA = Path(__file__).parent / "data"


def _record(target: str, spec: dict[str, Any]) -> dict[str, Any]:
    story = story_target(resolve(target))
    return replay_record(story, spec, run_chain(story, spec), 0, 0)


def _flap() -> dict[str, Any]:
    spec = json.loads((DATA / "rack_aware_flap_shrunk.json").read_text(encoding="utf-8"))
    return _record("builtin:cooperative-sticky", spec["spec"])


def test_violation_messages_name_their_partitions() -> None:
    assert named_partitions("I1: t0-3 assigned to a, b") == {("t0", 3)}
    assert named_partitions("I2: t1 partitions 2, 5 are owned by nobody") == {
        ("t1", 2), ("t1", 5)}
    assert named_partitions("I3: a holds 4 and could take 1") == set()


def test_a_flap_shows_withheld_cells_and_highlights_its_rebalance() -> None:
    record = _flap()
    timeline = chain_timeline(record)
    last = len(timeline.columns) - 1
    assert timeline.bad_column == last and timeline.bad_span is not None
    first, end = timeline.bad_span
    assert end == last and end - first == 8  # the rebalance and its eight follow-ups
    labels = [label for label, _ in timeline.columns]
    assert labels[0] == "claims" and labels[first].startswith("R") and "·" not in labels[first]
    assert labels[last].endswith("·8")
    kinds = {cell.kind for cell in timeline.cells.values()}
    assert "withheld" in kinds and "owned" in kinds
    # every withheld cell names the member that held the partition before that call
    for (tp, c), cell in timeline.cells.items():
        if cell.kind == "withheld" and c > 0:
            request = record["requests"][c - 1]
            assert all(list(tp) in request["members"][m]["owned"]
                       for m in cell.withheld_from)
    assert timeline.bad_rows and timeline.bad_rows <= set(timeline.rows)


def test_a_partition_given_twice_is_a_red_cell() -> None:
    timeline = chain_timeline({
        "target": "x", "invariant": "I1", "violations": ["I1: t0-0 assigned to a, b"],
        "requests": [{"partitions": {"t0": 2}, "members": {
            "a": {"topics": ["t0"], "owned": []}, "b": {"topics": ["t0"], "owned": []}}}],
        "responses": [{"assignment": {"a": [["t0", 0]], "b": [["t0", 0], ["t0", 1]]},
                       "generation": 1}],
        "follow_ups": [0], "violated_at": {"I1": 0}})
    assert timeline.cells[(("t0", 0), 1)].kind == "double"
    assert timeline.cells[(("t0", 1), 1)] == OwnershipCell(("b",))
    assert timeline.cells[(("t0", 0), 0)].kind == "unowned"
    assert timeline.bad_rows == {("t0", 0)} and timeline.bad_column == 1
    drawn = svg(timeline)
    assert drawn.startswith("<svg") and "a+b" in drawn and "<script" not in drawn


def test_large_stories_keep_the_partitions_that_matter() -> None:
    count = MAX_ROWS + 40
    request = {"partitions": {"t": count}, "members": {
        "a": {"topics": ["t"], "owned": [["t", p] for p in range(count)]},
        "b": {"topics": ["t"], "owned": []}}}
    answer = {"a": [["t", p] for p in range(count) if p != 7], "b": []}
    timeline = chain_timeline({"target": "x", "invariant": "I2",
                               "violations": [f"I2: t partitions {count - 1} are owned by "
                                              "nobody"],
                               "requests": [request], "responses": [
                                   {"assignment": answer, "generation": 2}],
                               "follow_ups": [0]})
    assert len(timeline.rows) <= MAX_ROWS and timeline.hidden == count - len(timeline.rows)
    assert ("t", count - 1) in timeline.rows and ("t", 7) in timeline.rows
    assert "not shown" in svg(timeline)


def test_a_state_machine_replay_shows_the_leaders_double_assignment() -> None:
    data = json.loads((DATA / "sticky_v0_replay.json").read_text(encoding="utf-8"))
    events = read_events(data["events"])
    outcome = replay_events(make_group_target(data["target"]), events)
    assert outcome.violations and len(outcome.views) == outcome.events_run
    timeline = events_timeline("sm", events, outcome.views, outcome.violations)
    assert len(timeline.columns) == len(data["events"])
    last = timeline.bad_column
    assert last == len(timeline.columns) - 1
    doubles = [tp for tp in timeline.rows if timeline.cells[(tp, last)].kind == "double"]
    assert doubles and set(doubles) <= timeline.bad_rows


def test_groupcheck_replay_writes_the_picture(tmp_path: Path) -> None:
    source = tmp_path / "flap.json"
    source.write_text(json.dumps(_flap()), encoding="utf-8")
    page = tmp_path / "flap.html"
    assert main(["replay", str(source), "--html", str(page)]) == 1
    text = page.read_text(encoding="utf-8")
    assert text.count("<svg") == 1 and "R1" in text and "withheld" in text
    machine = tmp_path / "sm.html"
    assert main(["replay", str(DATA / "sticky_v0_replay.json"), "--html", str(machine)]) == 1
    assert "<svg" in machine.read_text(encoding="utf-8")


# --- a real browser ---------------------------------------------------------------------


def _png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) pixels of an 8-bit PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    rows: list[bytes] = []
    prev = bytearray(width * step)
    for y in range(height):
        line = raw[y * (width * step + 1):(y + 1) * (width * step + 1)]
        kind, cur = line[0], bytearray(line[1:])
        for i in range(len(cur)):
            a = cur[i - step] if i >= step else 0
            b, c = prev[i], prev[i - step] if i >= step else 0
            if kind == 1:
                cur[i] = (cur[i] + a) & 255
            elif kind == 2:
                cur[i] = (cur[i] + b) & 255
            elif kind == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) \
                    & 255
        rows.append(bytes(cur) if step == 3 else bytes(
            v for k, v in enumerate(cur) if k % 4 != 3))
        prev = cur
    return width, height, rows


def _count(rows: list[bytes], rgb: tuple[int, int, int], slack: int = 12) -> int:
    n = 0
    for row in rows:
        for i in range(0, len(row), 3):
            if all(abs(row[i + k] - rgb[k]) <= slack for k in range(3)):
                n += 1
    return n


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="no chromium on PATH (Debian: apt-get install -y chromium)")
def test_headless_chromium_draws_the_flap_legibly(tmp_path: Path) -> None:
    """The picture as a person sees it: Chromium renders the page; the screenshot holds
    the member colours, the hatched withheld cells and the red violation marks."""
    page = tmp_path / "flap.html"
    page.write_text(html_page("flap", [svg(chain_timeline(_flap()))]), encoding="utf-8")
    shot = tmp_path / "flap.png"
    env = {**os.environ, "HOME": str(tmp_path)}
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'p'}",
                    "--hide-scrollbars", "--window-size=1200,900", f"--screenshot={shot}",
                    page.as_uri()], check=True, capture_output=True, timeout=120, env=env)
    width, height, rows = _png_pixels(shot)
    assert (width, height) == (1200, 900)
    assert _count(rows, (0x4e, 0x79, 0xa7)) > 500  # the first member's cells
    assert _count(rows, (0xbb, 0x00, 0x00), slack=30) > 100  # violation frame and text
    assert _count(rows, (0x99, 0x99, 0x99), slack=20) > 50  # hatching of withheld cells
    assert _count(rows, (0xfd, 0xdd, 0xdd), slack=6) > 300  # the flapping rebalance header
