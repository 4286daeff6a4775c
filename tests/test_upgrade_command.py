"""``groupcheck upgrade``'s error paths: each is one plain line and exit code 2, before any
group runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

RUN = [sys.executable, "-m", "groupcheck", "upgrade"]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RUN, *args], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, **(env or {})})


def _one_line_exit_2(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_a_release_without_cooperative_asked_for_it_is_refused_in_one_line() -> None:
    """aiokafka has no cooperative assignor: its own driver says which it has."""
    line = _one_line_exit_2(_run("--target", "wire:aiokafka:range", "--target",
                                 "wire:aiokafka:cooperative-sticky"))
    assert "cooperative-sticky" in line and "not supported by the release" in line


def test_a_malformed_pair_list_is_refused_in_one_line(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("wire:java@3.4.0:range\n")
    line = _one_line_exit_2(_run("--matrix", str(pairs), "--out", str(tmp_path / "out")))
    assert f"{pairs}:1" in line


def test_a_missing_pair_list_or_half_a_pair_is_refused_in_one_line(tmp_path: Path) -> None:
    assert "cannot read" in _one_line_exit_2(_run("--matrix", str(tmp_path / "none.txt")))
    assert "TO" in _one_line_exit_2(_run("--target", "wire:java@3.4.0:range"))
    assert "not both" in _one_line_exit_2(_run())


def test_a_release_not_installable_offline_says_what_to_install(tmp_path: Path) -> None:
    """Nothing cached and no registry: the run stops before any group, naming the release."""
    offline = {"XDG_CACHE_HOME": str(tmp_path / "cache"),
               "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_EXTRA_INDEX_URL": "",
               "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": "/dev/null", "npm_config_registry":
               "http://127.0.0.1:9/"}
    line = _one_line_exit_2(_run("--target", "wire:kafka-python@2.0.2:range",
                                 "--target", "wire:kafka-python@3.0.12:range", env=offline))
    assert "kafka-python@2.0.2" in line and "install" in line
