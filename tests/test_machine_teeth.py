"""The state machine has teeth: it catches deliberately broken variants, shrinks them to a
short story, and passes the real implementation.

Each mutant undoes one rule of a KIP (targets/mutants.py); with the ``ci`` settings the
harness must catch it on the invariant that rule protects, shrunk to at
most four members (the machine forms groups of up to six at once) and a handful of events.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupcheck.model.event_shrink import invariant_of
from groupcheck.model.event_types import DomainEvent, Join
from groupcheck.model.fuzz import fuzz
from groupcheck.model.machine import MachineConfig, config_for
from groupcheck.model.replay import replay_events
from groupcheck.targets.registry import group_target_factory, machine_hints

from helpers import ROOT


def _fuzz_target(target: str, settings: str = "ci", config: MachineConfig | None = None):
    hints = machine_hints(target)
    chosen = config or config_for(hints.assignor, profiles=hints.profiles,
                                  user_data_versions=hints.user_data_versions)
    return fuzz(group_target_factory(target), chosen, profile=settings)


def _members(events: list[DomainEvent]) -> set[str]:
    return {e.member for e in events if isinstance(e, Join)}


@pytest.mark.parametrize(("mutant", "invariant"), [
    pytest.param("sticky-user-data-v0", "I1", marks=pytest.mark.heavy),
    # caught, shrunk and replayed through the command line below
    pytest.param("cooperative-no-withhold", "I5", marks=pytest.mark.heavy),
    # two minutes to catch and shrink (by default `check` catches it: tests/test_stable_names.py)
    pytest.param("pause-dropper", "I8", marks=pytest.mark.heavy),
])
def test_mutant_is_caught_and_shrunk(mutant: str, invariant: str) -> None:
    """Each mutant is caught on its invariant within the ci settings' examples, shrunk to
    ≤ 4 members, ≤ 10 events, and the saved events replay to the same violation on a fresh
    target."""
    result = _fuzz_target(f"mutant:{mutant}")
    assert result.failed, f"{mutant} was not caught in {result.examples} examples"
    assert invariant_of(result.violations[0]) == invariant, result.violations
    assert len(_members(result.events)) <= 4 and len(result.events) <= 10, result.events
    again = replay_events(group_target_factory(f"mutant:{mutant}")(), result.events)
    assert again.violations and invariant_of(again.violations[0]) == invariant


def test_java_profile_keeps_its_own_pause_rule() -> None:
    """The java profile loses eager pauses by design (KAFKA-13425): judged by its own rule,
    the real consumer passes where the kip-profile pause dropper fails."""
    config = config_for("sticky", profiles=("java",))
    result = _fuzz_target("builtin:sticky", "ci", config)
    assert not result.failed, result.violations


@pytest.mark.parametrize("assignor", ["range", *(pytest.param(a, marks=pytest.mark.heavy) for a in
                                                ("roundrobin", "sticky", "cooperative-sticky"))])
def test_builtin_assignor_group_passes_ci_settings(assignor: str) -> None:
    """Our coordinator and consumers with each eager assignor keep every invariant."""
    result = _fuzz_target(f"builtin:{assignor}")
    assert not result.failed, result.violations


@pytest.mark.heavy
def test_cooperative_sticky_group_passes_dev_settings() -> None:
    """Cooperative-sticky with KIP-429 rolling upgrades and downgrades keeps every invariant
    over the dev settings."""
    result = _fuzz_target("builtin:cooperative-sticky", "dev")
    assert not result.failed, result.violations


@pytest.mark.deep
@pytest.mark.slow  # minutes of state machine (tox -e deep); the default run keeps the ci settings
def test_sticky_group_passes_deep_settings() -> None:
    """The real sticky assignor (KIP-341 generations) passes the deep settings."""
    result = _fuzz_target("builtin:sticky", "deep")
    assert not result.failed, result.violations


@pytest.mark.heavy  # half a minute of shrinking; check's own replay files are tested by default
def test_cli_saves_a_replay_file_that_reproduces(tmp_path: Path) -> None:
    """`groupcheck fuzz` exits 1 and saves a replay file of a story shrunk to ≤ 4 members and
    ≤ 10 events; `groupcheck replay` reproduces it (exit 1) on the mutant and not on the real
    implementation (exit 0)."""
    run = [sys.executable, "-m", "groupcheck"]
    found = subprocess.run(run + ["fuzz", "--target", "mutant:cooperative-no-withhold",
                                  "--failures", str(tmp_path)],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert found.returncode == 1, found.stdout + found.stderr
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1 and "I5" in files[0].name
    data = json.loads(files[0].read_text())
    assert data["target"] == "mutant:cooperative-no-withhold" and data["events"]
    joined = {e["member"] for e in data["events"] if e["op"] == "join"}
    assert 0 < len(joined) <= 4 and len(data["events"]) <= 10, data["events"]
    assert "1. " in found.stdout and "I5" in found.stdout
    again = subprocess.run(run + ["replay", str(files[0])], capture_output=True, text=True,
                           cwd=ROOT, timeout=300)
    assert again.returncode == 1 and "reproduced" in again.stdout
    fixed = subprocess.run(run + ["replay", str(files[0]), "--target",
                                  "builtin:cooperative-sticky"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert fixed.returncode == 0, fixed.stdout


def test_cli_rejects_an_unknown_target_with_one_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "fuzz", "--target", "nope:x"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
