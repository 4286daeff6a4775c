"""Progress on long work: the engines' ticks, how the command line shows them (a live
display on a terminal, a plain line every few seconds elsewhere, nothing with --quiet), and
the command's budget counted as a user sees it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from groupcheck.cli import main
from groupcheck.cli.progress_view import (
    CommandClock,
    LiveProgress,
    PlainProgress,
    exit_reserve,
    plain_line,
    shown,
)
from groupcheck.engines.progress import Meter, Tick, silent


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _tick(runs: int, elapsed: float, findings: int = 0) -> Tick:
    return Tick("prove", "builtin:range", runs, elapsed, 10.0, findings, "members=2")


def test_a_plain_line_names_the_engine_subject_runs_time_budget_and_findings() -> None:
    line = plain_line(_tick(1234, 2.5, findings=1))
    assert line == ("groupcheck: prove builtin:range: 1,234 runs, 2.5s of 10.0s, "
                    "1 finding(s) (members=2)")


def test_off_a_terminal_a_line_comes_once_every_five_seconds_of_the_clock() -> None:
    clock, out = FakeClock(), io.StringIO()
    plain = PlainProgress(out, clock=clock)
    for second in range(13):  # a tick a second for twelve seconds
        clock.now = 100.0 + second
        plain(_tick(second, float(second)))
    lines = out.getvalue().splitlines()
    assert [line.split(": ")[2].split(" runs")[0] for line in lines] == ["5", "10"]


def test_no_line_before_the_first_five_seconds() -> None:
    clock, out = FakeClock(), io.StringIO()
    plain = PlainProgress(out, clock=clock)
    clock.now += 4.9
    plain(_tick(1, 4.9))
    assert out.getvalue() == ""


def test_on_a_terminal_the_live_display_draws_the_engine_and_is_gone_at_the_end() -> None:
    screen = Terminal()
    live = LiveProgress(screen)
    live(_tick(10, 1.0))
    live.close()
    drawn = screen.getvalue()
    assert "prove builtin:range" in drawn and "10 runs  1.0/10.0s  0 finding(s)" in drawn
    assert drawn.endswith("\x1b[2K")  # the display erased itself: the result prints clean


def test_shown_picks_live_on_a_terminal_plain_elsewhere_and_nothing_when_quiet() -> None:
    with shown(False, Terminal()) as on_terminal:
        assert isinstance(on_terminal, LiveProgress)
    with shown(False, io.StringIO()) as elsewhere:
        assert isinstance(elsewhere, PlainProgress)
    with shown(True, Terminal()) as quiet:
        assert quiet is silent


def test_a_meter_reports_the_time_since_it_started_on_its_clock() -> None:
    clock, heard = FakeClock(), []
    meter = Meter(heard.append, "scenarios", "builtin:range", 3.0, clock)
    clock.now += 1.5
    meter.tick(7, 1, "scenario 6")
    assert heard == [Tick("scenarios", "builtin:range", 7, 1.5, 3.0, 1, "scenario 6")]


def test_a_counting_meter_ticks_once_per_call_even_when_the_call_raises() -> None:
    heard: list[Tick] = []
    meter = Meter(heard.append, "scale", "builtin:range")

    def fails(_: int) -> int:
        raise ValueError("no")

    counted = meter.counting(fails)
    for _ in range(2):
        with pytest.raises(ValueError):
            counted(1)
    assert [t.runs for t in heard] == [1, 2]


def test_the_command_budget_counts_from_its_start_less_a_process_targets_start() -> None:
    clock = FakeClock(10.0)
    budget = CommandClock(started=8.0, clock=clock)  # two seconds already gone
    with budget.starting("java:"):
        clock.now += 5.0  # a JVM starts: not counted
    assert budget.left(20.0) == pytest.approx(20.0 - 2.0 - exit_reserve(20.0))
    with budget.starting("python:my_assignors:EvenSplit"):
        clock.now += 1.0  # loading a module in this process: counted
    assert budget.left(20.0) == pytest.approx(20.0 - 3.0 - exit_reserve(20.0))
    assert exit_reserve(1.0) == pytest.approx(0.15) and exit_reserve(120.0) == 1.0
    assert CommandClock(started=0.0, clock=clock).left(3.0) == 0.0  # never below zero


def test_a_short_check_off_a_terminal_prints_plain_progress_lines_to_stderr(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--target", "builtin:range", "--budget", "7", "--json",
                 "--failures", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, out
    assert json.loads(out)["ok"] is True  # stdout stays the result
    lines = err.splitlines()
    assert lines and all(line.startswith("groupcheck: ") for line in lines), err
    assert any(" runs, " in line and " of " in line for line in lines)


def test_quiet_leaves_stderr_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--target", "builtin:range", "--budget", "7", "--quiet",
                 "--failures", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0 and "every invariant judged held" in out
    assert err == ""
