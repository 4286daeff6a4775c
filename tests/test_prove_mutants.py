"""`groupcheck prove --target mutant:<name>`: the harness-teeth mutants of the state machine
found as proofs (every configuration of a small scope), not samples.

The pre-KIP-341 sticky trusts stale claims (I1), the no-withhold cooperative hands over
partitions still owned (I5); the pause dropper loses pause marks, which no assignment shows,
so the prover refuses it with one line and points to the state machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

SCOPE = "members=2,topics=1,partitions=2"


def _prove(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "groupcheck", "prove", *argv],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize(("mutant", "invariant"), [
    ("sticky-user-data-v0", "I1"),
    ("cooperative-no-withhold", "I5"),
])
def test_scope_prover_finds_the_mutants_seeded_violation(tmp_path: Path, mutant: str,
                                                         invariant: str) -> None:
    """Exit 1, the invariant among the violated ones, and its smallest counterexample saved
    as an assign request that reproduces it through `groupcheck assign`."""
    proc = _prove("--target", f"mutant:{mutant}", "--scope", SCOPE, "--failures",
                  str(tmp_path), "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["counterexamples"][invariant]["violations"], report
    files = list(tmp_path.glob(f"*-{invariant}-*.json"))
    assert len(files) == 1


@pytest.mark.parametrize(("control", "invariant"), [
    ("builtin:sticky", "I1"),
    ("builtin:cooperative-sticky", "I5"),
])
def test_the_real_assignor_keeps_the_mutants_invariant_on_the_same_scope(
        control: str, invariant: str) -> None:
    """The controls: over the same scope the real assignor has no violation of the invariant
    its mutant breaks."""
    proc = _prove("--target", control, "--scope", SCOPE, "--json")
    report = json.loads(proc.stdout)
    assert report["violations"].get(invariant, 0) == 0, report["violations"]


def test_pause_dropper_is_refused_with_one_line() -> None:
    proc = _prove("--target", "mutant:pause-dropper")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "fuzz" in proc.stderr
