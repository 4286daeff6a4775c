"""``groupcheck replay`` says ``reproduced`` only for the violation the file saved — the same
invariant about the same members and partitions, whatever a log's ordinals say — and has
three outcomes, for every kind of saved file: reproduced (exit 1), a different violation
(``not reproduced: the saved violation was X; this replay shows a different one: Y``, exit
1), none (``not reproduced``, exit 0). Files saved before keep being read as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.cli import main
from groupcheck.engines.saved.requests import replay_request
from groupcheck.model import replay as replay_module
from groupcheck.model.group_events import Settle
from groupcheck.model.reproduced import Names, reproduces, subject_of
from groupcheck.model.saved_files import read as read_saved
from groupcheck.targets.registry import resolve

DATA = Path(__file__).parent / "data"
NAMES = Names(frozenset({"c1", "c2", "c3"}), frozenset({"t0", "t1"}))
CROWD = "python:story_assignors:DropsInCrowds"  # drops a partition past 20 members (I2)
SAVED_I5 = "I5: c1's assign of t0-2 began (#15) before c2 had released it (#17)"


def test_a_violation_is_the_same_whatever_its_ordinals_and_not_with_another_subject() -> None:
    again = "I5: c1's assign of t0-2 began (#21) before c2 had released it (#24)"
    assert subject_of(SAVED_I5, NAMES) == subject_of(again, NAMES)
    assert reproduces([SAVED_I5], ["I1: t0-2 went to c1 (#15) while c2 still owned it",
                                   again], NAMES) == again
    for other in ("I1: t0-2 went to c1 (#15) while c2 still owned it",  # another invariant
                  "I5: c1's assign of t0-1 began (#15) before c2 had released it (#17)",
                  "I5: c1's assign of t0-2 began (#15) before c3 had released it"):
        assert reproduces([SAVED_I5], [other], NAMES) is None, other
    assert reproduces([], ["I2: anything"], NAMES) == "I2: anything"  # none was saved
    assert reproduces(["I2"], ["I2: t1 partitions 0 are owned by nobody"], NAMES)
    assert reproduces(["I2"], ["I1: t1-0 assigned to c1, c2"], NAMES) is None


def _replay(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["replay", str(path), *extra])
    return code, capsys.readouterr().out.strip().splitlines()[-1]


def _events_file(tmp_path: Path, violations: list[str] | None = None,
                 user_data_version: int = 0) -> Path:
    """KAFKA-7026 as the state machine saved it: sticky user data v0 (no generation) lets a
    stale claim win; with v1 it does not."""
    body = json.loads((DATA / "sticky_v0_replay.json").read_text(encoding="utf-8"))
    if violations is not None:
        body["violations"] = violations
    for event in body["events"]:
        if event["op"] == "join":
            event["user_data_version"] = user_data_version
    path = tmp_path / "events.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def test_a_replay_file_has_three_outcomes(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    saved = read_saved(_events_file(tmp_path)).recorded_violations[0]
    assert _replay(_events_file(tmp_path), capsys) == (1, f"reproduced: {saved}")
    elsewhere = saved.replace("t0-0", "t0-1")  # the same invariant on another partition
    code, last = _replay(_events_file(tmp_path, [elsewhere]), capsys)
    assert code == 1 and last == (f"not reproduced: the saved violation was {elsewhere}; "
                                  f"this replay shows a different one: {saved}")
    code, last = _replay(_events_file(tmp_path, user_data_version=1), capsys,
                         "--target", "builtin:sticky")
    assert (code, last) == (0, "not reproduced: every invariant held")


def _crowd_request(members: int, note: dict[str, Any]) -> dict[str, Any]:
    return {"op": "assign", "assignor": "range", "mode": "client", "partitions": {"t": 21},
            "members": {f"m{i:02d}": {"topics": ["t"], "owned": [], "generation": None}
                        for i in range(members)},
            "groupcheck": {"target": CROWD, **note}}


def test_a_request_file_has_three_outcomes(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    shown = replay_request(resolve(CROWD), _crowd_request(21, {}))[1][0]
    assert shown.startswith("I2: ")
    path = tmp_path / "request.json"
    for members, note, expected in [
            (21, {"violation": shown}, (1, f"reproduced: {shown}")),
            (21, {"invariant": "I2"}, (1, f"reproduced: {shown}")),  # an older note
            (21, {"violation": "I1: t-3 assigned to m00, m01"},
             (1, "not reproduced: the saved violation was I1: t-3 assigned to m00, m01; "
                 f"this replay shows a different one: {shown}")),
            (20, {"violation": shown}, (0, "not reproduced: every invariant held"))]:
        path.write_text(json.dumps(_crowd_request(members, note)), encoding="utf-8")
        assert _replay(path, capsys) == expected, note


def _story(members: int) -> dict[str, Any]:
    return {"format": "groupcheck-audit-spec/1", "kind": "random", "scenario": 0, "seed": 0,
            "partitions": {"t": 21}, "steps": [],
            "members": [{"id": f"m{i:02d}", "topics": ["t"], "owned": [], "generation": None,
                         "rack": None} for i in range(members)]}


def test_a_story_has_three_outcomes(tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "story.json"
    bare.write_text(json.dumps(_story(21)), encoding="utf-8")
    code, last = _replay(bare, capsys, "--target", CROWD)
    assert code == 1 and last.startswith("reproduced: I2: ")  # a bare story: any violation
    shown = last.removeprefix("reproduced: ")
    record = tmp_path / "chain.json"
    for violations, expected in [
            ([shown], (1, f"reproduced: {shown}")),
            (["I1: t-3 assigned to m00, m01"],
             (1, "not reproduced: the saved violation was I1: t-3 assigned to m00, m01; "
                 f"this replay shows a different one: {shown}"))]:
        record.write_text(json.dumps({"format": "groupcheck-audit-chain/1", "target": CROWD,
                                      "invariant": violations[0][:2], "spec": _story(21),
                                      "violations": violations}), encoding="utf-8")
        assert _replay(record, capsys) == expected
    bare.write_text(json.dumps(_story(20)), encoding="utf-8")
    assert _replay(bare, capsys, "--target", CROWD) == (
        0, "not reproduced: every invariant held")


class _Closes:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_a_replay_seeking_a_saved_violation_resumes_a_settle_another_one_cut_short(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A settle stops at its first violation; a replay looking for the one its file saved
    resumes it past another (a newer invariant judged first), and reports the saved one
    with the other still in the story; without a sought violation it stops at once."""
    def scripted() -> Any:
        shown = iter([["I16: c1 gave its member id up"], ["c1: I6: revoked [t0-0] fenced"]])
        return lambda event, target, model: next(shown, [])

    monkeypatch.setattr(replay_module, "apply_event", scripted())
    sought = replay_module.replay_events(
        _Closes(), [Settle()], wanted=lambda seen: any("I6" in v for v in seen))  # type: ignore[arg-type]
    assert sought.violations == ["c1: I6: revoked [t0-0] fenced"]
    assert any("I16" in line and "plays on" in line for line in sought.story)
    monkeypatch.setattr(replay_module, "apply_event", scripted())
    first = replay_module.replay_events(_Closes(), [Settle()])  # type: ignore[arg-type]
    assert first.violations == ["I16: c1 gave its member id up"]
