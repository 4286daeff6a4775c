"""The command line: the quick-start job, the assign table, and one-line usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT

RUN = [sys.executable, "-m", "groupcheck"]


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*RUN, *args], input=stdin, capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_quick_start_job_answers_every_sample_line() -> None:
    """`groupcheck jsonl examples/requests.jsonl` answers each line, bad lines with an error,
    and keeps going to the end."""
    proc = _run("jsonl", "examples/requests.jsonl")
    assert proc.returncode == 0, proc.stderr
    requests = [ln for ln in (ROOT / "examples/requests.jsonl").read_text().splitlines()
                if ln.strip()]
    answers = [json.loads(ln) for ln in proc.stdout.splitlines()]
    assert len(answers) == len(requests)
    assert answers[0] == {"pong": True}
    assert "error" in answers[-1] and "error" in answers[-2]
    assert sum("assignment" in a for a in answers) == 2


def test_assign_prints_member_table_and_json(tmp_path: Path) -> None:
    request = {"assignor": "range", "mode": "client", "partitions": {"t0": 3, "t1": 3},
               "members": {"C0": {"topics": ["t0", "t1"]}, "C1": {"topics": ["t0", "t1"]}}}
    path = tmp_path / "req.json"
    path.write_text(json.dumps(request))
    table = _run("assign", str(path))
    assert table.returncode == 0
    assert "C0" in table.stdout and "t0-0, t0-1, t1-0, t1-1" in table.stdout
    as_json = json.loads(_run("assign", "--json", "-", stdin=json.dumps(request)).stdout)
    assert as_json["assignment"] == {"C0": [["t0", 0], ["t0", 1], ["t1", 0], ["t1", 1]],
                                     "C1": [["t0", 2], ["t1", 2]]}


def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    missing = _run("assign", str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"assignor": "nope", "members": {}}')
    unknown = _run("assign", str(bad))
    usage = _run("no-such-command")
    for proc in (missing, unknown, usage):
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def test_quick_start_job_needs_nothing_but_the_standard_library() -> None:
    """Building the command line loads no engine: `jsonl` runs where only impl/ is usable."""
    code = ("import sys, groupcheck.cli as c; c.build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('hypothesis', 'z3', "
            "'pyspark', 'kafka', 'groupcheck.model'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr


def test_numbers_outside_int32_get_a_request_error_not_a_crash() -> None:
    """Generations and partitions are Kafka int32s; anything larger is a bad request."""
    from groupcheck.impl.jsonl import handle

    for request in ({"op": "encode_subscription", "version": 3, "topics": ["t"],
                     "owned": [["t", 2**31]], "generation": 1},
                    {"op": "encode_subscription", "version": 3, "topics": ["t"],
                     "generation": 2**31},
                    {"op": "user_data", "assignor": "sticky", "topics": ["t"],
                     "owned": [["t", 0]], "generation": -(2**31) - 1}):
        answer = handle(request)
        assert answer["error"].startswith("InvalidRequestError"), answer


def test_broker_option_does_not_outlive_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--broker`` reaches the wire targets as a setting passed down, never through the
    environment: a later command (or test) in the same process sees what was there before."""
    from groupcheck.cli import main

    monkeypatch.delenv("GROUPCHECK_BROKER", raising=False)
    assert main(["replay", "/nonexistent/replay.json", "--broker", "mock"]) == 2
    assert "GROUPCHECK_BROKER" not in os.environ
    monkeypatch.setenv("GROUPCHECK_BROKER", "groupcheck")
    assert main(["replay", "/nonexistent/replay.json", "--broker", "mock"]) == 2
    assert os.environ["GROUPCHECK_BROKER"] == "groupcheck"


@pytest.mark.parametrize(("argv", "option"), [
    (["fuzz", "--target", "builtin:range", "--max-examples", "0"], "--max-examples"),
    (["check", "--target", "builtin:range", "--jobs", "0"], "--jobs"),
    (["check", "--target", "builtin:range", "--timeout", "-1"], "--timeout"),
    (["check", "--target", "builtin:range", "--budget", "nan"], "--budget"),
    (["zoo", "--budget", "-1"], "--budget"),
    (["diff", "--target", "builtin:range", "--target", "builtin:sticky", "--budget", "inf"],
     "--budget"),
    (["diff", "--target", "builtin:range", "--target", "builtin:sticky", "--stories", "2",
      "--start", "-1"], "--start"),
    (["prove", "--target", "builtin:range", "--timeout", "0"], "--timeout"),
    (["scenarios", "--target", "builtin:range", "--count", "0"], "--count"),
    (["audit", "--slices", "0"], "--slices"),
    (["audit", "--shrink-seconds", "-1"], "--shrink-seconds"),
    (["broker", "--port", "-5"], "--port"),
    (["broker", "--port", "70000"], "--port"),
    (["broker", "--initial-rebalance-delay-ms", "-1"], "--initial-rebalance-delay-ms"),
    (["broker", "--min-session-timeout-ms", "-1"], "--min-session-timeout-ms"),
])
def test_a_numeric_option_out_of_range_is_one_line_and_exit_code_2(
        argv: list[str], option: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Counts, ports and seconds are checked as the command line is read, before any run
    starts (a negative port or a NaN budget never reaches a socket or a loop)."""
    from groupcheck.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and option in err[0], err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_diff_over_stories_reports_a_bad_target_as_one_line(
        workers: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``diff --stories`` resolves its targets inside the (worker) run: a target string that
    names nothing still ends in one line and exit code 2, not a traceback."""
    from groupcheck.cli import main

    code = main(["diff", "--target", "builtin:range", "--target", "builtin", "--stories", "4",
                 "--jobs", workers])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "unknown target 'builtin'" in err[0], err


def test_a_request_of_a_few_bytes_cannot_ask_for_unbounded_partitions() -> None:
    """A partition count costs a few bytes of JSON and its partitions memory: one request
    holds at most MAX_REQUEST_PARTITIONS in all, and a count must be a JSON integer."""
    from groupcheck.impl.assign_op import MAX_REQUEST_PARTITIONS
    from groupcheck.impl.jsonl import handle

    members = {"a": {"topics": ["t0", "t1"]}}
    half = MAX_REQUEST_PARTITIONS // 2
    over = handle({"op": "assign", "assignor": "range", "members": members,
                   "partitions": {"t0": half, "t1": half + 1}})
    assert over["error"].startswith("InvalidRequestError") and "in all" in over["error"]
    boolean = handle({"op": "assign", "assignor": "range", "members": members,
                      "partitions": {"t0": True}})
    assert boolean["error"].startswith("InvalidRequestError"), boolean
    within = handle({"op": "assign", "assignor": "range", "members": members,
                     "partitions": {"t0": 3, "t1": 2}})
    assert within["assignment"] == {"a": [["t0", 0], ["t0", 1], ["t0", 2], ["t1", 0],
                                          ["t1", 1]]}


@pytest.mark.parametrize("op", ["assign", "encode_subscription", "user_data"])
@pytest.mark.parametrize("field", [{"topics": "t0"}, {"topics": [1]}, {"rack": 5}])
def test_member_fields_of_the_wrong_type_are_request_errors(op: str,
                                                            field: dict[str, object]) -> None:
    """``topics`` is a list of names (a bare string is not read letter by letter) and a
    rack is a string: anything else is a request error naming the field."""
    from groupcheck.impl.jsonl import handle

    member: dict[str, object] = {"topics": ["t0"], **field}
    if op == "assign":
        request: dict[str, object] = {"op": op, "assignor": "sticky",
                                      "partitions": {"t0": 1}, "members": {"m": member}}
    else:
        request = {"op": op, "assignor": "sticky", "version": 3, **member}
    answer = handle(request)
    if op == "user_data" and "rack" in field:  # the user data does not carry the rack
        assert "userData" in answer
        return
    assert answer["error"].startswith("InvalidRequestError"), answer
    assert next(iter(field)) in answer["error"]


def test_a_line_nested_too_deeply_is_an_error_line_and_the_service_goes_on() -> None:
    """The JSON decoder's recursion limit is bad input like any other: one error line, and
    the next line is still answered."""
    from io import StringIO

    from groupcheck.impl.jsonl import serve

    out = StringIO()
    assert serve(StringIO("[" * 100_000 + "]" * 100_000 + '\n{"op": "ping"}\n'), out) == 0
    first, second = out.getvalue().splitlines()
    assert "nested too deeply" in json.loads(first)["error"]
    assert json.loads(second) == {"pong": True}


def test_scenarios_refuses_an_assignor_its_target_does_not_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``scenarios --assignor`` narrows a target, as in check, fuzz and prove: naming one the
    target does not run is a usage error, not a run of the other one."""
    from groupcheck.cli import main

    assert main(["scenarios", "--target", "builtin:range", "--assignor", "sticky",
                 "--count", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "runs range only" in err[0], err


@pytest.mark.parametrize("racks", [{"t0": 5}, {"t0": ["r1", "r2"]}, ["r1"]])
def test_racks_of_the_wrong_shape_are_request_errors(racks: object) -> None:
    """``racks`` maps a topic to one list of rack names per partition: a bare string is not
    read letter by letter as racks ``r`` and ``1``."""
    from groupcheck.impl.jsonl import handle

    answer = handle({"op": "assign", "assignor": "range", "partitions": {"t0": 2},
                     "racks": racks, "members": {"a": {"topics": ["t0"], "rack": "r1"}}})
    assert answer["error"].startswith("InvalidRequestError") and "racks" in answer["error"]


@pytest.mark.parametrize(("argv", "option"), [
    (["fuzz", "--target", "builtin:range", "--max-examples", "1", "--failures", "{file}"],
     "--failures"),
    (["prove", "--target", "builtin:range", "--failures", "{file}/below"], "--failures"),
    (["audit", "--scenarios", "1", "--out", "{file}"], "--out"),
])
def test_a_result_folder_that_is_a_file_is_refused_before_the_run(
        argv: list[str], option: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A counterexample found and then not saved would be a lost result: a ``--failures``
    or ``--out`` folder that is (or lies under) a file is a usage error up front."""
    from groupcheck.cli import main

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main([a.replace("{file}", str(blocker)) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and option in err[0] and "is a file" in err[0], err
