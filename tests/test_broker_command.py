"""``groupcheck broker`` as a person runs it: it prints its bootstrap address, one line per
request, and stops on an interrupt; bad arguments are one line and exit code 2."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

pytest.importorskip("kio")
confluent_kafka = pytest.importorskip("confluent_kafka")

COMMAND = [sys.executable, "-m", "groupcheck", "broker"]


def test_the_command_prints_its_address_and_a_line_per_request_until_interrupted() -> None:
    proc = subprocess.Popen([*COMMAND, "--port", "0", "--topic", "demo:3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().split()
        assert first[0] == "bootstrap" and first[1].startswith("127.0.0.1:")
        producer = confluent_kafka.Producer({"bootstrap.servers": first[1]})
        producer.produce("demo", value=b"hello", partition=2)
        assert producer.flush(30) == 0
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    lines = out.splitlines()
    assert any(" ApiVersions v" in line and "-> ok" in line for line in lines)
    assert any(" Produce v" in line and "-> ok" in line for line in lines)
    assert "requests served, 0 failed verdicts" in err


@pytest.mark.parametrize("args", [["--topic", "nocount"], ["--topic", "t:0"],
                                  ["--host", "10.1.2.3"], ["--partitions", "0"]])
def test_bad_arguments_are_one_line_and_exit_code_2(args: list[str]) -> None:
    done = subprocess.run([*COMMAND, "--port", "0", *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_an_unknown_broker_for_the_wire_targets_is_one_line_and_exit_code_2() -> None:
    done = subprocess.run([sys.executable, "-m", "groupcheck", "check", "--target",
                           "librdkafka:range", "--broker", "kafka"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "invalid choice: 'kafka'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
