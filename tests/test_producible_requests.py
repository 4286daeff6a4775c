"""No engine asks a target a rebalance the protocol cannot produce: a group with no member
has no leader, so it runs no rebalance (the audit's chains skip it, and so does every
shrink built on them), and a saved request with no member is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupcheck.audit.chain import run_chain
from groupcheck.audit.targets import AuditTarget
from groupcheck.cli import main


def _recording_target(asked: list[dict[str, Any]]) -> AuditTarget:
    def assign(request: dict[str, Any]) -> dict[str, Any]:
        asked.append(request)
        first, *rest = sorted(request["members"])
        everything = [[t, p] for t, n in sorted(request["partitions"].items())
                      for p in range(n)]
        return {"assignment": {first: everything, **{m: [] for m in rest}}}
    return AuditTarget("recording", "range", assign, None)


def test_a_story_whose_members_all_leave_asks_nothing_of_an_empty_group() -> None:
    asked: list[dict[str, Any]] = []
    spec = {"kind": "random", "partitions": {"t0": 2},
            "members": [{"id": "c0", "topics": ["t0"]}],
            "steps": [[{"op": "leave", "member": "c0"}],
                      [{"op": "join", "member": {"id": "c1", "topics": ["t0"]}}]]}
    run_chain(_recording_target(asked), spec)
    assert asked and all(r["members"] for r in asked)
    assert [sorted(r["members"]) for r in asked][-1] == ["c1"]


def test_a_saved_request_with_no_member_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "empty.json"
    saved.write_text(json.dumps({"op": "assign", "assignor": "range",
                                 "partitions": {"t0": 1}, "members": {}}))
    assert main(["replay", str(saved), "--target", "builtin:range"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no member" in err
