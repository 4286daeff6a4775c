"""Every command the tutorial and the README show runs as shown: each ``$`` line of the page
is run with bash (``groupcheck`` this interpreter's), in the order the page gives, and its
standard output is compared with the lines the page shows under it (`helpers.doc_examples`
says how loosely: ``…`` lines skipped, times, digests and how far each engine got matched by
pattern). A saved file's digest in a command is a glob, expanded to the file the run wrote.
Its exit code is the one the page's words give: 1 for ``check`` that prints VIOLATED and for
``replay`` that reproduced, else 0.

The tutorial is followed from an empty folder (``tmp_path``): the files it asks the reader
to save are saved, its fix is applied to the assignor, ``PYTHONPATH`` is the folder. A
``check`` whose shown output found nothing spends its whole budget searching; the test runs
it on `SHORT_BUDGET` seconds instead, which changes only how far the engines got. A run that
finds something keeps the page's budget: what it finds and how far it shrinks depend on it;
so does a run on real clients (``wire:``), whose every event takes seconds.
Every command runs in a fresh folder under ``tmp_path`` (the README's read ``findings/``
through a link), so the tests run side by side. The README's examples on real clients and
Spark are ``slow`` (tox -e wire, tox -e audit); its quick start runs the audit on fewer
stories (`QUICK_START`); ``pip install`` and ``tox`` are not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT
from helpers.doc_examples import Command, Diff, File, applied, differences, globbed, steps
from helpers.environment import CLASSPATH, missing

TUTORIAL = ROOT / "docs" / "tutorial" / "check-your-assignor.md"
README = ROOT / "README.md"
#: seconds a check that finds nothing is given instead of the page's budget
SHORT_BUDGET = 8
#: the quick start's audit (100,000 stories, minutes), run on fewer
QUICK_START = ("groupcheck audit", "groupcheck audit --scenarios 2000")


def _environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONPATH=str(folder))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def _expected_exit(command: str, output: str) -> int:
    if " check " in f" {command} " and "VIOLATED" in output:
        return 1
    if " replay " in f" {command} " and re.search(r"^reproduced", output, re.M):
        return 1
    return 0


def _run(command: Command, cwd: Path, env: dict[str, str]) -> None:
    """Run one command as shown (a search that finds nothing on `SHORT_BUDGET`) and hold it
    to the page: the output shown, the exit code the page's words give."""
    line = globbed(command.line)
    budget = re.search(r"--budget (\d+)", line)
    shortened = bool(budget and int(budget.group(1)) > SHORT_BUDGET and command.shown
                     and "wire:" not in line
                     and not any("VIOLATED" in shown for shown in command.shown))
    if shortened and budget:
        line = line.replace(budget.group(0), f"--budget {SHORT_BUDGET}")
    done = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)
    where = f"line {command.lineno}: $ {command.line}"
    if command.shown:
        shown_output = _without_shortfall(done.stdout) if shortened else done.stdout
        problems = differences(command.shown, shown_output)
        assert not problems, "\n".join([where, *problems, "stderr:", done.stderr[-3000:]])
    assert done.returncode == _expected_exit(line, done.stdout), (
        f"{where}: exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}")


def _without_shortfall(output: str) -> str:
    """``output`` less what the test's own shorter budget adds: the depth an engine did not
    reach on `SHORT_BUDGET` (``; not judged at depth: …`` and the line naming the budget that
    would reach it), which the page's budget reaches."""
    output = re.sub(r"; not judged at depth: [^\n]*", "", output)
    return re.sub(rf"^\d+ invariants? not judged at --budget {SHORT_BUDGET}\b[^\n]*\n", "",
                  output, flags=re.M)


def _with_findings(folder: Path) -> Path:
    """``folder`` with the checkout's ``findings/`` linked into it, as the README's commands
    name them (run from a clone's root)."""
    (folder / "findings").symlink_to(ROOT / "findings", target_is_directory=True)
    return folder


def _readme_commands(start: str) -> list[Command]:
    return [s for s in steps(README.read_text(encoding="utf-8"))
            if isinstance(s, Command) and s.line.startswith(start)]


@pytest.mark.heavy  # half a minute of commands; the README's examples run by default
def test_the_tutorial_runs_as_shown_from_an_empty_folder(tmp_path: Path) -> None:
    env = _environment(tmp_path)
    ran = 0
    last_python: Path | None = None
    for step in steps(TUTORIAL.read_text(encoding="utf-8")):
        if isinstance(step, File):
            (tmp_path / step.name).write_text(step.text, encoding="utf-8")
            if step.name.endswith(".py"):
                last_python = tmp_path / step.name
        elif isinstance(step, Diff):
            assert last_python is not None, "a fix before any Python file"
            last_python.write_text(applied(last_python.read_text(encoding="utf-8"),
                                           step.text), encoding="utf-8")
        else:
            _run(step, tmp_path, env)
            ran += 1
    assert ran >= 10  # the page's commands were found, not skipped


def test_the_readme_s_own_assignor_example_runs_as_shown(tmp_path: Path) -> None:
    [command] = _readme_commands("PYTHONPATH=tests/targets groupcheck check")
    env = _environment(tmp_path)
    env.pop("PYTHONPATH")
    moved = Command(command.line.replace("tests/targets", str(ROOT / "tests" / "targets")),
                    command.shown, command.lineno)
    _run(moved, tmp_path, env)


def test_the_readme_s_replay_on_kafka_s_client_runs_as_shown(tmp_path: Path) -> None:
    if not CLASSPATH:
        pytest.skip("Kafka's Java client is not available (GROUPCHECK_KAFKA_CLASSPATH)")
    [command] = _readme_commands("groupcheck replay findings/java-")
    _run(command, _with_findings(tmp_path), _environment(tmp_path))


@pytest.mark.wire
@pytest.mark.slow
@pytest.mark.parametrize("start", ["groupcheck check --target wire:",
                                   "groupcheck replay findings/wire-"])
def test_the_readme_s_wire_examples_run_as_shown(start: str, tmp_path: Path) -> None:
    [command] = _readme_commands(start)
    client = re.search(r"wire[-:](\w+)", command.line)
    assert client is not None
    if missing(client.group(1)):
        pytest.skip(missing(client.group(1)))
    _run(command, _with_findings(tmp_path), _environment(tmp_path))


@pytest.mark.audit
@pytest.mark.slow
def test_the_readme_s_audit_example_and_quick_start_run_as_shown(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    [command] = _readme_commands("groupcheck audit")
    _run(command, tmp_path, _environment(tmp_path))
    quick = README.read_text(encoding="utf-8").split("## Quick start", 1)[1]
    assert f"&& {QUICK_START[0]}\n" in quick, "the quick start no longer runs the audit"
    fresh = tmp_path / "clone"  # the quick start's own folder: its audit-out/ is new
    fresh.mkdir()
    done = subprocess.run(["bash", "-c", QUICK_START[1]], cwd=fresh, env=_environment(fresh),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.rstrip().endswith(str(fresh / "audit-out" / "index.html"))
    assert "INHERITED FROM KAFKA" in done.stdout


CHECK_SHOWN = (
    "check python:m:A [a]  (11.2s)",
    "  prove     49,320 runs in 10.0s; 1 of 5 scopes: members=2: proof",
    "            I4b gap (moves - Z3's optimum): -1: 205, 0: 15,938",
    "  scale     10 runs in 1.9s; members: the budget would not hold 5,000 members",
    "      groupcheck-failures/prove-python-m-A-I2-f534d33a02.json",
    "VIOLATED",
)


def test_times_digests_and_how_far_an_engine_got_match_any_value() -> None:
    output = "\n".join([
        "check python:m:A [a]  (43.9s)",
        "  prove     9,091 runs in 7.6s; 1 of 5 scopes: members=2: stopped at its deadline",
        "  scale     7 runs in 0.8s; members: the budget would not hold 2,000 members",
        "            time grows as n^1.34 (members)",
        "              Kafka's 10,000 members × 100,000 partitions: 7.12 s extrapolated",
        "      groupcheck-failures/prove-python-m-A-I2-9cf7adc683.json",
        "VIOLATED"])
    assert differences(CHECK_SHOWN, output) == []


@pytest.mark.parametrize("wrong", [
    ("check python:m:A [a]  (43.9s)", "check python:m:B [a]  (43.9s)"),
    ("VIOLATED", "every invariant judged held"),
    ("-9cf7adc683.json", "-9cf7adc683.html"),
    ("  scale     10 runs", "  fuzz      10 runs"),
])
def test_an_output_that_differs_from_the_page_beyond_times_and_counts_is_reported(
        wrong: tuple[str, str]) -> None:
    output = "\n".join(CHECK_SHOWN).replace("(11.2s)", "(43.9s)").replace(
        "f534d33a02", "9cf7adc683")
    assert differences(CHECK_SHOWN, output) == []
    assert differences(CHECK_SHOWN, output.replace(*wrong)) != []


def test_a_shrink_cut_short_by_a_busy_machine_matches_the_page_s_complete_one() -> None:
    shown = ("seed 0, scenario 33 (shrunk from 57 members, 1 partitions, 3 rebalance(s)):",)
    busy = shown[0].replace("(s)):", "(s); budget spent):")
    assert differences(shown, busy) == []
    assert differences(shown, busy.replace("57 members", "58 members")) != []


def test_cost_judged_or_not_within_the_scale_engine_s_share_matches_either_way() -> None:
    shown = ("I12        -           not judged  -", "I13        -           holds",
             "not judged:", "  I12 [fuzz]: no layout", "VIOLATED")
    reached = "\n".join(shown)
    short = reached.replace("I13        -           holds",
                            "I13        -           not judged").replace(
        "  I12 [fuzz]: no layout", "  I12 [fuzz]: no layout\n  I13 [scale]: too short")
    assert differences(shown, reached) == differences(shown, short) == []
    assert differences(shown, reached.replace("I13        -           holds",
                                              "I13        -           VIOLATED")) != []
    assert differences(shown, reached.replace("I12        -           not judged",
                                              "I12        -           holds     ")) != []


def test_an_elision_skips_lines_but_the_page_s_order_holds() -> None:
    shown = ("first", "…", "last")
    assert differences(shown, "first\nany\nlines\nlast") == []
    assert differences(shown, "last\nfirst") != []
    assert differences(shown, "first\nlast\nmore") != []


def test_a_saved_file_s_digest_in_a_command_becomes_a_glob() -> None:
    assert globbed("head -24 out/prove-x-I2-f534d33a02.json") == (
        "head -24 out/prove-x-I2-??????????.json")
    assert globbed("groupcheck replay story.json") == "groupcheck replay story.json"
