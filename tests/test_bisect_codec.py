"""``bisect`` replays what the codec engine saves (an I10 input, an I12 user-data input) on
every target, as it replays requests and stories: the codec mutant that writes topics in
the caller's order shows it, groupcheck's codec does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupcheck.cli import main


def _codec_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["check", "--target", "mutant:codec-unsorted", "--budget", "2",
                 "--failures", str(tmp_path)]) == 1
    capsys.readouterr()
    (record,) = tmp_path.glob("codec-*-I10-*.json")
    return record


def test_a_codec_record_is_bisected_over_codecs(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    record = _codec_record(tmp_path, capsys)
    code = main(["bisect", str(record), "--target", "builtin:codec", "--target",
                 "mutant:codec-unsorted", "--target", "builtin:sticky"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1 and "(I10)" in lines[0]
    verdicts = {line.split()[0]: line.split()[1] for line in lines[1:-1]}
    assert verdicts == {"builtin:codec": "absent", "mutant:codec-unsorted": "present",
                        "builtin:sticky": "absent"}
    assert lines[-1] == ("absent builtin:codec; present mutant:codec-unsorted; absent "
                         "builtin:sticky; first seen in mutant:codec-unsorted; gone in "
                         "builtin:sticky")
