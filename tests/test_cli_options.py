"""One flag vocabulary: help on every option, ``--target`` kinds from one table, the old
spellings kept (with a deprecation line), options that do not apply refused, ``--version``,
and the commands reference equal to what the parsers give."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupcheck.cli import main, reference
from groupcheck.cli.shared import GROUP_KINDS, TARGET_SYNTAX
from groupcheck.cli.version_report import NOT_FOUND, PACKAGES
from groupcheck.targets.registry import RESOLVERS

from helpers import ROOT

DATA = ROOT / "tests" / "data"


def _err_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.strip().splitlines()


def test_every_option_of_every_command_has_help_text() -> None:
    parsers = reference.command_parsers()
    assert len(parsers) == 15
    for name, parser in parsers.items():
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:  # an old spelling, hidden
                continue
            assert (action.help or "").strip(), f"groupcheck {name} {action.dest}: no help"
    assert reference.missing_help() == []


def test_every_command_lists_its_exit_codes_in_its_help() -> None:
    for name, parser in reference.command_parsers().items():
        epilog = parser.format_help()
        codes = [code for code, _ in parser.get_default("exit_codes")]
        assert codes[:1] == [0], name
        assert {2, 3, 130} <= set(codes), name
        assert all(f"  {code} " in epilog for code in codes), name


def test_the_target_kinds_the_help_lists_are_the_registrys() -> None:
    assert set(TARGET_SYNTAX) == set(RESOLVERS) == set(GROUP_KINDS)


@pytest.mark.parametrize("command", ["fuzz", "scenarios", "check", "prove", "diff", "matrix",
                                     "bisect"])
def test_target_help_lists_every_kind_the_command_accepts(command: str) -> None:
    """fuzz, check, matrix and bisect take every kind (wire: too); scenarios, prove and diff
    every kind with an assign function (the ones they run) — each named in --help."""
    parser = reference.command_parsers()[command]
    help_text = next(a.help for a in parser._actions if a.dest == "target") or ""
    wanted = GROUP_KINDS if command in ("fuzz", "check", "matrix", "bisect") else [
        k for k in GROUP_KINDS if k not in ("wire", "librdkafka")]
    for kind in wanted:
        assert TARGET_SYNTAX[kind] in help_text, (command, kind)
    for kind in set(GROUP_KINDS) - set(wanted):
        assert TARGET_SYNTAX[kind] not in help_text, (command, kind)


def test_the_committed_commands_reference_is_what_the_parsers_give() -> None:
    committed = (ROOT / reference.PAGE).read_text(encoding="utf-8")
    assert reference.stale(committed) == []


def test_a_stale_reference_names_the_command_that_differs() -> None:
    page = reference.page()
    edited = page.replace("| `--max-examples N` |", "| `--max-examples N`, changed |")
    assert reference.stale(edited) == ["fuzz"]


def test_version_names_every_optional_piece_and_never_fails() -> None:
    proc = subprocess.run([sys.executable, "-m", "groupcheck", "--version"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = dict(line.split(":", 1) for line in proc.stdout.splitlines())
    names = {"groupcheck", "Python", "confluent-kafka", "KafkaJS", "Java",
             *(label for label, _ in PACKAGES)}
    assert set(found) == names
    assert all(value.strip() for value in found.values())
    from importlib.metadata import version
    assert found["Hypothesis"].strip() == version("hypothesis")
    assert found["groupcheck"].strip() == version("groupcheck")
    assert found["Java"].strip() == NOT_FOUND or found["Java"].strip()[0].isdigit()


def test_workers_still_works_as_jobs_with_one_deprecation_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--target", "builtin:range", "--scope",
                 "members=2,topics=1,partitions=2", "--workers", "1",
                 "--failures", str(tmp_path)]) == 0
    assert _err_lines(capsys) == ["groupcheck: --workers is deprecated; use --jobs"]


def test_positional_targets_still_work_with_one_deprecation_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "builtin:range", "python:groupcheck.impl.assignors.range:"
                 "RangeAssignor", "--no-vectors", "--scope", "members=2,topics=1,partitions=1",
                 ]) == 0
    err = _err_lines(capsys)
    assert len(err) == 1 and "deprecated; use --target A --target B" in err[0]


def test_an_out_file_still_works_and_out_dir_names_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``replay --html OUT`` and ``--out DIR`` write the same page; the old one says so."""
    source = str(DATA / "sticky_v0_replay.json")
    assert main(["replay", source, "--html", str(tmp_path / "old.html")]) == 1
    assert _err_lines(capsys) == ["groupcheck: --html OUT is deprecated; use --out DIR"]
    assert main(["replay", source, "--out", str(tmp_path / "pages")]) == 1
    assert _err_lines(capsys) == []
    new = tmp_path / "pages" / "sticky_v0_replay.html"
    assert new.read_text() == (tmp_path / "old.html").read_text()


@pytest.mark.parametrize(("argv", "words"), [
    (["replay", str(DATA / "sticky_v0_replay.json"), "--assignor", "nosuch"],
     "--assignor nosuch names none of it"),
    (["diff", "--target", "builtin:range", "--target", "builtin:sticky", "--seed", "3"],
     "--seed does not apply without --stories"),
    (["diff", "--target", "builtin:range", "--target", "builtin:sticky", "--stories", "2",
      "--scope", "members=2"], "--scope does not apply to --stories"),
    (["prove", "--target", "builtin:range", "--depth", "3"],
     "--depth does not apply without --bmc or --matrix"),
    (["prove", "--matrix", "--target", "builtin:range"], "--target does not apply"),
    (["prove", "--bmc", "--exact"], "--exact does not apply to --bmc"),
    (["upgrade", "--target", "wire:java@3.4.0:range", "--target", "wire:java@3.5.1:range",
      "--out", "x"], "--out does not apply without --matrix"),
])
def test_an_option_that_does_not_apply_is_refused_in_one_line(
        argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and words in err[0], err


def test_parity_without_golden_vectors_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The user asked for the vectors engine; a run without it is no answer (exit 2)."""
    monkeypatch.delenv("GROUPCHECK_VECTORS", raising=False)
    assert main(["check", "--target", "builtin:range", "--parity"]) == 2
    err = _err_lines(capsys)
    assert len(err) == 1 and "$GROUPCHECK_VECTORS" in err[0]


def test_the_json_of_a_command_carries_its_exit_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(DATA / "sticky_v0_replay.json"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["command"] == "replay" and out["exit"] == 1
    assert out["result"]["reproduced"] is True and out["lines"][-1].startswith("reproduced")
