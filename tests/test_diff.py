"""Differential runs: agreement where two targets are the same assignor, the smallest
disagreement where they are not, shrinking of a large disagreeing input, the command."""

from __future__ import annotations

import sys

from groupcheck.engines.differential.search import Pair, describe, disagree, run_diff, shrink
from groupcheck.engines.progress import PROCESS_FLOOR
from groupcheck.engines.saved.requests import request_size
from groupcheck.targets.registry import resolve

from helpers.command_line import run_command


def test_the_same_assignor_twice_agrees() -> None:
    a = resolve("builtin:sticky")
    b = resolve("python:groupcheck.impl.assignors.sticky:StickyAssignor")
    result = run_diff(a, b, assignor="sticky", scope="members=2,topics=2,partitions=1",
                      vectors=False)
    assert result.agree and result.compared > 100


def test_first_disagreement_is_the_smallest() -> None:
    a, b = resolve("builtin:roundrobin"), resolve("mutant:roundrobin-topic-cursor")
    result = run_diff(a, b, assignor="roundrobin",
                      scope="members=2,topics=2,partitions=1,symmetry=0", vectors=False)
    assert not result.agree and result.request is not None
    assert request_size(result.request)[:2] == (2, 2)
    assert disagree(result.a or {}, result.b or {})
    assert "error" in (result.b or {})


def test_shrink_reduces_a_large_disagreement() -> None:
    a, b = resolve("builtin:sticky"), resolve("mutant:sticky-put-before-check")
    members = {
        "c1": {"topics": ["t"], "owned": [["t", 0], ["t", 2]], "generation": 1},
        "c2": {"topics": ["t"], "owned": [["t", 1], ["t", 2], ["t", 3]], "generation": 2},
        "c3": {"topics": ["t"], "owned": [["t", 2], ["t", 4], ["t", 5]], "generation": 3},
        "c4": {"topics": ["u"], "owned": [["u", 0]], "generation": 2},
        "c5": {"topics": ["t", "u"], "owned": [], "generation": None},
        "c6": {"topics": ["u", "v"], "owned": [], "generation": None}}
    request = {"op": "assign", "assignor": "sticky", "mode": "client",
               "partitions": {"t": 6, "u": 3, "v": 4}, "members": members}
    assert a.assign is not None and b.assign is not None
    assert disagree(a.assign(request), b.assign(request))
    small, got_a, got_b, _ = shrink(request, Pair(a, b))
    assert disagree(got_a, got_b)
    assert request_size(small) < request_size(request)
    assert len(small["members"]) <= 4 and sum(small["partitions"].values()) <= 6


def test_diff_command_exit_codes(tmp_path, capsys) -> None:
    assert run_command(["diff", "--target", "builtin:range", "--target",
                        "python:groupcheck.impl.assignors.range:RangeAssignor", "--no-vectors",
                        "--scope", "members=2,topics=1,partitions=2"]) == 0
    assert "agree" in capsys.readouterr().out
    assert run_command(["diff", "--target", "builtin:roundrobin", "--target",
                        "mutant:roundrobin-topic-cursor", "--no-vectors", "--scope",
                        "members=2,topics=2,partitions=1,symmetry=0",
                        "--failures", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "DISAGREE" in out and "IndexError" in out and "saved:" in out


def test_diff_request_plays_a_bare_story_on_both_targets(capsys) -> None:
    """``--request`` takes a story too (the one reader of saved files): both targets get
    every request of its chain, each built from the first target's answer; the same
    assignor agrees, a broken one differs on calls no deviation explains."""
    from pathlib import Path

    story = str(Path(__file__).parent / "data" / "rack_aware_flap_spec.json")
    assert run_command(["diff", "--target", "builtin:roundrobin", "--target",
                        "python:groupcheck.impl.assignors.roundrobin:RoundRobinAssignor",
                        "--request", story]) == 0
    out = capsys.readouterr().out
    assert "[roundrobin], a story of" in out and "agree" in out
    assert run_command(["diff", "--target", "builtin:roundrobin", "--target",
                        "mutant:roundrobin-topic-cursor", "--request", story]) == 1
    assert "UNEXPLAINED call 0" in capsys.readouterr().out


def test_a_process_target_is_not_started_on_a_diff_budget_too_small_to_start_it() -> None:
    ours = resolve(f"jsonl:{sys.executable} -m groupcheck jsonl", assignor="range")
    try:
        result = run_diff(ours, resolve("builtin:range"), assignor="range",
                          scope="members=2,topics=1,partitions=1", budget=PROCESS_FLOOR / 2)
    finally:
        ours.close()
    assert result.agree and result.compared == 0
    assert describe(result, "a", "b") == (
        f"a and b: nothing compared: {PROCESS_FLOOR / 2:.1f} s of the budget was left, less "
        f"than the {PROCESS_FLOOR:g} s a process target may need to start")
