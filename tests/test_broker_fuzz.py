"""The broker fuzzer (``bench/fuzz_broker.py``) kept honest: 200 seeded shots at the broker
pass every check, and a broker with a bug planted in one handler fails the run, saves the
batch and fails again when that batch is replayed. The long run is ``tox -e fuzz``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kio")

FUZZER = Path(__file__).resolve().parent.parent / "bench" / "fuzz_broker.py"
#: Loaded at start-up by every Python process under it (the fuzzer and its broker child):
#: FindCoordinator's handler raises, as a bug in the broker would.
PLANTED = """\
from groupcheck.broker import data_apis


def _broken(*_):
    raise RuntimeError("planted bug")


data_apis.HANDLERS[10] = _broken
"""


def _fuzz(*args: str, cwd: Path, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(FUZZER), *args], capture_output=True, text=True,
                          timeout=240, cwd=cwd, env=env)


def test_two_hundred_shots_at_the_broker_pass_every_check(tmp_path: Path) -> None:
    done = _fuzz("--frames", "200", "--seed", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {name: value.strip() for name, value in (
        line.strip().split("  ", 1) for line in done.stdout.splitlines()[1:])}
    assert rows["shots"].startswith("200 (")
    assert "none a traceback or an internal error" in rows["broker log"]
    assert rows["verdict"].strip().startswith("PASS")
    assert not (tmp_path / "groupcheck-failures").exists()


def test_a_bug_in_the_broker_fails_the_run_and_its_batch_replays(tmp_path: Path) -> None:
    (tmp_path / "plant").mkdir()
    (tmp_path / "plant" / "sitecustomize.py").write_text(PLANTED)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "plant")}
    done = _fuzz("--frames", "200", "--seed", "3", "--batch", "50", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "internal error RuntimeError: planted bug" in done.stdout
    [saved] = (tmp_path / "groupcheck-failures").glob("fuzz-broker-3-*.jsonl")
    shots = [json.loads(line) for line in saved.read_text().splitlines()]
    assert len(shots) == 50 and all(bytes.fromhex(s["hex"]) for s in shots)
    assert f"--replay {saved.relative_to(tmp_path)}" in done.stdout
    again = _fuzz("--replay", str(saved), cwd=tmp_path, env=env)
    assert again.returncode == 1 and "planted bug" in again.stdout
