"""Saved files are named by what they mean and hold nothing that differs between identical
runs: the same command with the same seed writes the same files, byte for byte (each run in
a process of its own, so set and dict orders that follow the hash seed would show)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from groupcheck.model.events import read_events
from groupcheck.model.replay import save
from groupcheck.properties.saved_json import digest, steady, steady_text
from groupcheck.properties.scope import Counterexample, Scope, save_counterexample
from groupcheck.properties.scope.space import Config

from helpers import TARGETS


def _run(tmp: Path, folder: str, *argv: str) -> dict[str, bytes]:
    """``groupcheck ARGV --failures tmp/folder`` in a fresh process; the files it saved."""
    env = {**os.environ, "PYTHONPATH": str(TARGETS), "PYTHONHASHSEED": "random"}
    out = tmp / folder
    done = subprocess.run([sys.executable, "-m", "groupcheck", *argv, "--quiet",
                           "--failures", str(out)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr  # each run finds its bug
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def _twice(tmp: Path, *argv: str) -> dict[str, bytes]:
    first, second = _run(tmp, "one", *argv), _run(tmp, "two", *argv)
    assert first and list(first) == list(second)
    for name in first:
        assert first[name] == second[name], name
    return first


def test_scenarios_saves_the_same_story_twice(tmp_path: Path) -> None:
    """The story engine (check's scenarios) saves the same shrunk story twice. A budget
    that cuts the shrink short may stop it at another point each time (the file says so:
    ``complete``), so the budget here leaves it room to end: the run stops at its finding."""
    saved = _twice(tmp_path, "scenarios", "--target", "python:story_assignors:DropsInCrowds",
                   "--seed", "0", "--budget", "60")
    [name] = [n for n in saved if n.startswith("scenarios-")]
    assert name.startswith("scenarios-python-story_assignors-DropsInCrowds-I2-")
    assert b'"ms"' not in saved[name]
    assert json.loads(saved[name])["shrink"]["complete"] is True


def test_check_saves_the_same_state_machine_replay_twice(tmp_path: Path) -> None:
    saved = _twice(tmp_path, "check", "--target", "mutant:pause-dropper", "--seed", "0",
                   "--budget", "15")
    assert [n.rsplit("-", 1)[0] for n in saved] == ["mutant-pause-dropper-I8"]


def test_prove_saves_the_same_counterexample_twice(tmp_path: Path) -> None:
    saved = _twice(tmp_path, "prove", "--target", "mutant:roundrobin-topic-cursor", "--scope",
                   "members=2,topics=2,partitions=1,generations=1,claims=1,symmetry=0")
    [(name, body)] = saved.items()
    assert name.startswith("prove-mutant-roundrobin-topic-cursor-ERROR-")
    assert b'"ms"' not in body


def _cex(ms: float) -> Counterexample:
    request = {"op": "assign", "assignor": "range", "partitions": {"t0": 1},
               "members": {"m0": {"topics": [], "owned": [], "generation": None}}}
    response = {"assignment": {"m0": [["t0", 0]]}, "generation": 1, "ms": ms}
    return Counterexample("I2", ["I2: t0-0 assigned to m0, which does not subscribe to t0"],
                          Config(((1, ()),), ()), [(request, response)], 0)


def test_a_prove_file_is_named_by_its_request_not_by_how_long_the_answer_took(
        tmp_path: Path) -> None:
    slow = save_counterexample(tmp_path / "a", "builtin:range", Scope(), _cex(12.5))
    fast = save_counterexample(tmp_path / "b", "builtin:range", Scope(), _cex(0.004))
    assert slow.name == fast.name
    assert slow.read_bytes() == fast.read_bytes()
    body = json.loads(slow.read_text())
    assert "ms" not in body["groupcheck"]["response"]
    assert all("ms" not in r["response"] for r in body["groupcheck"]["rounds"])


def test_an_old_prove_file_with_timings_is_still_read(tmp_path: Path) -> None:
    from groupcheck.model.saved_files import read

    old = tmp_path / "prove-old.json"
    request = {"op": "assign", "assignor": "range", "partitions": {"t0": 1},
               "members": {"m0": {"topics": ["t0"], "owned": [], "generation": None}}}
    old.write_text(json.dumps({**request, "groupcheck": {
        "format": "groupcheck-prove/1", "target": "builtin:range", "invariant": "I2",
        "response": {"assignment": {"m0": []}, "ms": 3.2}}}))
    saved = read(old)
    assert saved.kind == "requests" and saved.requests == [request]


def test_a_delay_event_keeps_its_ms_and_the_replay_file_its_name_whatever_the_seed(
        tmp_path: Path) -> None:
    events = read_events([{"op": "join", "member": "c1", "topics": ["t0"], "assignors": ["range"]},
                          {"op": "delay", "member": "c1", "api": "SyncGroup", "ms": 300}])
    a = save(tmp_path / "a", "builtin:range", events, ["I1: t0-0 owned twice"], 0)
    b = save(tmp_path / "b", "builtin:range", events, ["I1: t0-0 owned twice"], 7)
    assert a.name == b.name
    assert json.loads(a.read_text())["events"][1]["ms"] == 300


def test_steady_drops_an_answers_time_sorts_sets_and_keeps_member_order() -> None:
    value = {"response": {"assignment": {"b": [], "a": []}, "ms": 1.0},
             "owned": {"t1", "t0"}, "request": {"op": "idle", "ms": 5}}
    assert steady(value) == {"response": {"assignment": {"b": [], "a": []}},
                             "owned": ["t0", "t1"], "request": {"op": "idle", "ms": 5}}
    assert steady_text(value).endswith("\n")
    assert digest({"b": 1, "a": 2}) != digest({"a": 2, "b": 1})  # order is meaning
