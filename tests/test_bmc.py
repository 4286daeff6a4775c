"""Bounded model checking of the protocol (model/bmc*.py): proofs at small depths, the
KAFKA-7026 refutation, and every trace replayed on the implementation.

A trace is only worth something when it replays: each refutation here goes the whole way —
BMC trace → replay file → ``groupcheck replay`` on the implementation → the same invariant.
These tests need z3 (the ``z3`` extra); tox installs it for the default run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from groupcheck.engines.bmc import replayer
from groupcheck.model.bmc import BmcScope, CodecMix
from groupcheck.model.bmc_check import check
from groupcheck.model.event_shrink import invariant_of
from groupcheck.model.event_types import Join
from groupcheck.model.events import DomainEvent, read_events
from groupcheck.model.replay import load, replay_events, save
from groupcheck.targets.registry import group_target_factory

from helpers import ROOT

SMALL = BmcScope.parse("members=3,topics=1,partitions=3")
TINY = BmcScope.parse("members=2,topics=1,partitions=2")
ALL_V1 = CodecMix((("user_data_version", (1,)),))
ALL_V0 = CodecMix((("user_data_version", (0,)),))
ANY_V0 = CodecMix((), (("user_data_version", (0,)),))


def test_tiny_depth_proves_every_protocol_invariant_for_v1_sticky() -> None:
    """Eager sticky groups on user data v1 keep I1 at depth 3 on a tiny scope."""
    result = check(TINY, "EAGER", ALL_V1, 3, replayer("builtin:sticky"))
    assert result.holds and result.depth_reached == 3, result.verdict()


def test_all_members_on_v1_admit_no_double_ownership_up_to_depth_6() -> None:
    """3 members, 1 topic, 3 partitions, depth 6: no KAFKA-7026 with KIP-341 user data."""
    result = check(SMALL, "EAGER", ALL_V1, 6, replayer("builtin:sticky"))
    assert result.holds, result.verdict()
    assert result.solver_calls == 6  # one unsatisfiable query per depth


def test_v0_refutation_replays_on_the_pre_kip_341_mutant(tmp_path: Path) -> None:
    """The v0 trace → replay file → `groupcheck replay` on mutant:sticky-user-data-v0
    shows I1 again; the shortest trace needs a stale rejoin (a member that missed a
    generation comes back with its old partitions)."""
    target = "mutant:sticky-user-data-v0"
    result = check(SMALL, "EAGER", ALL_V0, 6, replayer(target))
    trace = result.trace
    assert trace is not None and result.confirmed and trace.invariant == "I1"
    assert any(s.missed for s in trace.steps) or "wake" in {s.event for s in trace.steps}
    path = save(tmp_path, target, trace.events(), trace.replayed, None)
    assert read_events(load(path)["events"]) == trace.events()
    for where in (target, "builtin:sticky"):  # builtin members speak v0 when told to
        proc = subprocess.run([sys.executable, "-m", "groupcheck", "replay", str(path),
                               "--target", where],
                              capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert proc.returncode == 1 and "reproduced" in proc.stdout, proc.stdout + proc.stderr
        assert "I1:" in proc.stdout.split("reproduced:")[1]


def test_any_v0_member_refutes_i1_only_when_a_v0_client_leads() -> None:
    """In a mixed group the double ownership needs a pre-KIP-341 leader: the violating
    rebalance's leader speaks v0, and the trace replays on builtin:sticky, whose members
    speak what their join event says."""
    result = check(SMALL, "EAGER", ANY_V0, 6, replayer("builtin:sticky"))
    trace = result.trace
    assert trace is not None and result.confirmed
    leader = trace.steps[-1].leader
    assert leader is not None and trace.codecs[leader].user_data_version == 0


def test_the_same_trace_does_not_reproduce_once_every_member_speaks_v1() -> None:
    """Rewriting the v0 trace's join events to user data v1 makes the replay pass."""
    result = check(SMALL, "EAGER", ALL_V0, 6, replayer("builtin:sticky"))
    assert result.trace is not None
    events = [replace(e, user_data_version=1) if isinstance(e, Join) else e
              for e in result.trace.events()]
    assert replay_events(group_target_factory("builtin:sticky")(), events).violations == []


@pytest.mark.parametrize(("codecs", "invariant"), [
    ((("subscription_version", (1,)), ("cooperative_user_data", (0,))), "I6"),
    ((("subscription_version", (0,)),), "I5"),
])
def test_cooperative_without_what_kip_792_and_429_need_is_refuted_and_replays(
        codecs: tuple[tuple[str, tuple[int, ...]], ...], invariant: str) -> None:
    """Cooperative members without a generation break I6; without owned partitions in the
    subscription (v0) the leader hands over partitions still owned (I5)."""
    result = check(SMALL, "COOPERATIVE", CodecMix(codecs), 4,
                   replayer("builtin:cooperative-sticky"), invariants=(invariant,))
    assert result.trace is not None and result.confirmed, result.verdict()
    assert any(invariant_of(v) == invariant for v in result.trace.replayed)


def test_stall_and_wake_alone_also_reach_kafka_7026() -> None:
    """Without missed SyncGroups the stale rejoin goes through a stall (the member is
    dropped) and a wake: still I1 for v0, and the trace replays."""
    result = check(SMALL, "EAGER", ALL_V0, 6, replayer("mutant:sticky-user-data-v0"),
                   missed_syncs=False)
    assert result.trace is not None and result.confirmed
    assert [s.event for s in result.trace.steps][-1] == "wake"


def test_cooperative_with_a_generation_holds() -> None:
    """Subscription v1 + cooperative user data, or v2+: I1, I5, I6 up to depth 5."""
    mix = CodecMix((("subscription_version", (1, 2, 3)), ("cooperative_user_data", (1,))))
    result = check(SMALL, "COOPERATIVE", mix, 5, replayer("builtin:cooperative-sticky"))
    assert result.holds, result.verdict()


def test_cli_bmc_prints_a_story_and_saves_a_replay_file(tmp_path: Path) -> None:
    """`prove --bmc` on the v0 mutant: exit 1, a numbered story, a replay file that
    reproduces; on builtin:sticky (v1 members): exit 0."""
    run = [sys.executable, "-m", "groupcheck", "prove", "--bmc", "--depth", "5"]
    found = subprocess.run(run + ["--target", "mutant:sticky-user-data-v0", "--failures",
                                  str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                           timeout=300)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "  2. c2 joins, and c1's SyncGroup fails" in found.stdout and "✗ I1" in found.stdout
    files = list(tmp_path.glob("*-I1-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["bmc"]["invariant"] == "I1"
    clean = subprocess.run(run + ["--target", "builtin:sticky"], capture_output=True,
                           text=True, cwd=ROOT, timeout=300)
    assert clean.returncode == 0 and "no counterexample up to depth 5" in clean.stdout


@pytest.mark.parametrize("argv", [
    ["--bmc", "--depth", "0"], ["--bmc", "--scope", "members=9"],
    ["--bmc", "--codecs", "user_data_version=2"], ["--bmc", "--target", "builtin:range"],
    ["--bmc", "--matrix"], ["--depth", "3", "--target", "builtin:sticky"],
    ["--bmc", "--target", "builtin:sticky", "--protocol", "cooperative"],
    ["--bmc", "--target", "nope:x"],
])
def test_cli_bmc_usage_errors_are_one_line_and_exit_2(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "prove", *argv],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_cli_bmc_protocol_and_codecs_choose_what_is_proved() -> None:
    """`--protocol eager --codecs user_data_version=1`: the v1 proof alone, exit 0;
    `--protocol cooperative --codecs subscription_version=2-3`: also proved."""
    base = [sys.executable, "-m", "groupcheck", "prove", "--bmc", "--depth", "6"]
    for extra in (["--protocol", "eager", "--codecs", "user_data_version=1"],
                  ["--protocol", "cooperative", "--codecs", "subscription_version=2-3"]):
        proc = subprocess.run(base + extra, capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
        assert proc.returncode == 0 and proc.stdout.count("no counterexample") == 1, \
            proc.stdout + proc.stderr


def test_a_trace_the_target_does_not_reproduce_is_excluded_and_reported() -> None:
    """When replays never show the invariant, each rejected event sequence is blocked and
    asked again (all distinct), and the verdict says none was reproduced."""
    rejected: list[list[DomainEvent]] = []

    def never(trace: object) -> list[str]:
        rejected.append(trace.events())  # type: ignore[attr-defined]
        return ["I11: something else"]

    result = check(SMALL, "EAGER", ALL_V0, 2, never, max_refinements=3)
    assert not result.holds and result.trace is None and len(result.unconfirmed) == 3
    assert len({tuple(e) for e in rejected}) == 3
    assert "none reproduced" in result.verdict()


def test_matrix_on_a_tiny_scope_separates_the_codec_mixes(tmp_path: Path) -> None:
    """`prove --matrix` at depth 4 on 2 members × 2 partitions: v1-only sticky and
    cooperative with a generation are proved, any v0 member refutes I1, a member without a
    generation refutes I6; the JSON holds every cell with its replayed traces."""
    out = tmp_path / "matrix.json"
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "prove", "--matrix", "--depth",
                           "4", "--scope", "members=2,topics=1,partitions=2", "--out", str(out),
                           "--failures", str(tmp_path / "f")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cells = {c["codecs"]: c["invariants"] for c in json.loads(out.read_text())["cells"]}
    v1 = cells["every member on sticky user data v1 (KIP-341)"]
    assert v1["I1"]["holds"] and v1["I1"]["mark"] == "proved ≤4"
    v0 = cells["any member on sticky user data v0, the rest on v0 or v1"]["I1"]
    assert not v0["holds"] and v0["confirmed"] and "I1" in v0["trace"]["replayed"][0]
    gen = cells["every member on subscription v2+ (generation in the subscription)"]
    assert all(gen[i]["holds"] for i in ("I1", "I5", "I6"))
    bare = cells["any member on subscription v1 without user data (no generation)"]
    assert bare["I6"]["confirmed"] and bare["I5"]["holds"]
    assert "REFUTED@" in proc.stdout and "proved ≤4" in proc.stdout
    refuted = [r for c in cells.values() for r in c.values() if not r["holds"]]
    assert refuted and all(Path(r["replay_file"]).is_file() for r in refuted)
    assert all(r["replay_file"] is None for c in cells.values() for r in c.values()
               if r["holds"])
