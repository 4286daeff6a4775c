"""How a command ends: each exit code a CI reads (0, 1, 2, 3, 130, 141), groupcheck's own
errors (here and in worker processes) saved with their traceback, and output that a
terminal cannot encode written in ASCII."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from groupcheck import engines
from groupcheck.cli import main
from groupcheck.cli.exits import INTERNAL_ERROR, INTERRUPTED
from groupcheck.properties.scope import prover as scope_module

from helpers import ROOT

RUN = [sys.executable, "-m", "groupcheck"]
DATA = ROOT / "tests" / "data"
SMALL = ["--scope", "members=2,topics=1,partitions=2"]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RUN, *args], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, **(env or {})})


def _boom(*_: object, **__: object) -> object:
    raise RuntimeError("injected failure")


def _saved_traceback(line: str) -> str:
    """The text of the traceback file the one stderr line names."""
    assert "groupcheck's own error" in line and "injected failure" in line, line
    return Path(line.rsplit("traceback: ", 1)[1]).read_text(encoding="utf-8")


def test_a_clean_proof_exits_0_and_a_violation_exits_1(tmp_path: Path) -> None:
    held = _run("prove", "--target", "builtin:range", *SMALL, "--failures", str(tmp_path))
    assert held.returncode == 0, held.stderr
    broken = _run("replay", str(DATA / "sticky_v0_replay.json"))
    assert broken.returncode == 1 and "reproduced" in broken.stdout, broken.stderr


def test_bad_input_exits_2_in_one_line() -> None:
    proc = _run("prove", "--target", "builtin:nope")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "Traceback" not in proc.stderr


def test_an_internal_error_exits_3_naming_its_traceback_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An engine that raises something other than an input error is groupcheck's own
    error: one line, exit 3 (never 1, which a CI reads as a finding), the traceback in a
    file."""
    monkeypatch.setattr(engines, "fuzz_one", _boom)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = main(["fuzz", "--target", "builtin:range", "--max-examples", "1",
                 "--failures", str(tmp_path / "failures")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == INTERNAL_ERROR and len(err) == 1, err
    saved = _saved_traceback(err[0])
    assert "Traceback" in saved and "_boom" in saved
    assert Path(err[0].rsplit("traceback: ", 1)[1]).parent == tmp_path


def test_an_internal_error_in_a_subprocess_exits_3(tmp_path: Path) -> None:
    code = ("import sys, groupcheck.engines as e\n"
            "def boom(*a, **k): raise RuntimeError('injected failure')\n"
            "e.check_json = boom\n"
            "from groupcheck.cli import main\n"
            "sys.exit(main(['check', '--target', 'builtin:range', '--budget', '1', '--json',"
            f" '--failures', {str(tmp_path)!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 3 and len(lines) == 1, proc.stderr
    assert "RuntimeError: injected failure" in _saved_traceback(lines[0])


def test_an_error_in_a_worker_process_exits_3_with_the_workers_traceback(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The prover's forked workers (``--jobs 2``) raise in their task: the pool hands the
    error to the parent, which ends as for its own errors, the worker's traceback kept."""
    for task_step in ("configs_of_task", "_judge_projections"):  # run by workers alone
        monkeypatch.setattr(scope_module, task_step, _boom)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = main(["prove", "--target", "builtin:range", *SMALL, "--jobs", "2",
                 "--failures", str(tmp_path / "failures")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == INTERNAL_ERROR and len(err) == 1, err
    assert "_run_task" in _saved_traceback(err[0])


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


def _interrupted(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def test_sigint_exits_130_saying_what_ran(tmp_path: Path) -> None:
    """A service interrupted once it answers: exit 130 and one line with the command and
    the time it ran."""
    proc = subprocess.Popen([*RUN, "jsonl"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write('{"op": "ping"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline()) == {"pong": True}
    code, err = _interrupted(proc)
    assert code == INTERRUPTED, err
    assert len(err.strip().splitlines()) == 1 and "interrupted: groupcheck jsonl after" in err


def _interrupted_as_a_terminal_does(command: list[str]) -> tuple[int, str]:
    """Run `command` in its own process group and, once its worker processes run, send
    SIGINT to the whole group (what Ctrl-C on a terminal does)."""
    proc = subprocess.Popen([*RUN, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, start_new_session=True)
    deadline = time.monotonic() + 120
    while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()
    time.sleep(1.0)  # the workers are up and working
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc for children")
def test_ctrl_c_during_the_provers_worker_pool_exits_130_without_a_traceback(
        tmp_path: Path) -> None:
    """The prover's forked workers get the terminal's SIGINT too: they ignore it, the command
    exits 130 with a last line naming --failures, and no worker prints a traceback."""
    failures = tmp_path / "failures"
    code, err = _interrupted_as_a_terminal_does(
        ["prove", "--target", "builtin:sticky", "--scope", "members=4,topics=2,partitions=3",
         "--jobs", "2", "--failures", str(failures)])
    last = err.strip().splitlines()[-1]
    assert code == INTERRUPTED and "Traceback" not in err, err
    assert "interrupted: groupcheck prove after" in last and str(failures) in last


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc for children")
def test_ctrl_c_during_diffs_spawned_workers_exits_130_without_a_traceback() -> None:
    """diff --stories --jobs 2 runs spawned workers (engines.worker_pools): interrupted from
    the terminal, they are terminated, not waited for, and print nothing."""
    started = time.monotonic()
    code, err = _interrupted_as_a_terminal_does(
        ["diff", "--target", "builtin:sticky", "--target", "builtin:cooperative-sticky",
         "--assignor", "sticky", "--stories", "100000", "--jobs", "2"])
    assert code == INTERRUPTED and "Traceback" not in err, err
    assert "interrupted: groupcheck diff after" in err.strip().splitlines()[-1]
    assert time.monotonic() - started < 60


def test_a_reader_that_closes_stdout_ends_the_command_quietly(tmp_path: Path) -> None:
    """``groupcheck jsonl FILE | head -1``: no 'cannot read FILE' (the file was fine), no
    traceback; exit 141, as a shell reports a command a closed pipe ended."""
    requests = tmp_path / "pings.jsonl"
    requests.write_text('{"op": "ping"}\n' * 50_000)
    proc = subprocess.Popen([*RUN, "jsonl", str(requests)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    assert json.loads(proc.stdout.readline()) == {"pong": True}
    proc.stdout.close()
    code = proc.wait(timeout=120)
    assert code == 141 and proc.stderr.read() == ""


def test_text_a_terminal_cannot_encode_comes_out_in_ascii(tmp_path: Path) -> None:
    """Under PYTHONIOENCODING=ascii the signs groupcheck prints (× …) are spelled in ASCII
    and the command ends as it would have (no UnicodeEncodeError, no exit 1)."""
    ascii_env = {"PYTHONIOENCODING": "ascii"}
    helped = _run("matrix", "--help", env=ascii_env)
    assert helped.returncode == 0, helped.stderr
    assert "target x assignor" in " ".join(helped.stdout.split())
    replayed = _run("replay", str(DATA / "sticky_v0_replay.json"), env=ascii_env)
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, replayed.stderr
    assert "Traceback" not in replayed.stderr
    replayed.stdout.encode("ascii")
