"""Clients at a release (``kafka-python@2.0.2``, ``librdkafka@2.3.0``, ``kafkajs@1.16.0``):
each runs its member driver in an environment of its own, installed into groupcheck's cache
on first use (`release_envs`), and every driver takes a ``create``'s ``assignors`` list.

The offline tests point pip and npm at a dead port with an empty cache: no network is used.
The tests of real releases use the envs installed ahead (CI: ``python -m
groupcheck.targets.wire.release_envs kafka-python@2.0.2 librdkafka@2.3.0 kafkajs@1.16.0``)
and skip with the one-line reason when one is absent and cannot be installed."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groupcheck.model.events import DomainEvent, read_events
from groupcheck.model.replay import replay_events
from groupcheck.targets.wire import clients, release_envs
from groupcheck.targets.wire.clients import ClientUnavailable, argv, hello
from groupcheck.targets.wire.driver_process import CommandFailed, DriverProcess

from helpers.environment import CLASSPATH, group_target_factory, missing
from helpers.wire_cases import smoke, with_profiles

FINDINGS = Path(__file__).resolve().parent.parent / "findings"

DEAD = "http://127.0.0.1:9/"


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache, and pip and npm pointed at a port nothing listens on."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", DEAD + "simple")
    for name in ("PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"):
        monkeypatch.setenv(name, "")
    monkeypatch.setenv("npm_config_registry", DEAD)
    monkeypatch.setattr(release_envs, "_FAILED", {})
    monkeypatch.setattr(clients, "_HELLO", {})
    return tmp_path


def need(*names: str) -> None:
    for name in names:
        reason = missing(name)
        if reason:
            pytest.skip(reason)


@pytest.fixture
def bootstrap() -> Iterator[str]:
    """groupcheck's broker with topic t0, for the drivers' creates."""
    pytest.importorskip("kio", reason="groupcheck's broker needs kio")
    from groupcheck.targets.wire.backends.groupcheck_broker import GroupcheckBackend

    backend = GroupcheckBackend(frozenset(), 6000)
    backend.create_topic("t0", 2)
    try:
        yield backend.bootstrap
    finally:
        backend.close()


def create(name: str, bootstrap: str, assignors: list[str], classpath: str = "") -> str:
    """A driver of ``name`` asked to create one consumer with ``assignors``: the create's
    error ('' for none)."""
    driver = DriverProcess(argv(name, classpath), name, lambda _d, _m: None,
                           clients.DRIVER_ENV)
    try:
        driver.call("create", member="c1", bootstrap=bootstrap, group="groupcheck",
                    assignor=assignors[0], assignors=assignors, topics=["t0"], config={})
        return ""
    except CommandFailed as exc:
        return str(exc)
    finally:
        driver.kill()
        driver.close()


def run(target: str, events: list[DomainEvent]) -> list[str]:
    outcome = replay_events(group_target_factory(target)(), events)
    assert outcome.story, target
    return outcome.violations


def test_offline_python_release_is_one_line_naming_what_to_install_and_not_tried_again(
        offline: Path) -> None:
    with pytest.raises(ClientUnavailable) as raised:
        hello("kafka-python@2.0.2")
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith("wire: kafka-python@2.0.2 is not in the cache and could not be "
                              "installed (pip: ")
    assert message.endswith("run: python -m groupcheck.targets.wire.release_envs "
                            "kafka-python@2.0.2")
    assert not list((offline / "groupcheck" / "clients").glob("kafka-python-*"))
    # the same process does not try again: a different index would give another message
    first = release_envs.missing("kafka-python@2.0.2")
    os.environ["PIP_INDEX_URL"] = "http://127.0.0.1:9/never-asked"
    assert release_envs.missing("kafka-python@2.0.2") == first != ""


def test_offline_kafkajs_release_is_one_line_naming_what_to_install(offline: Path) -> None:
    if clients.missing("kafkajs"):
        pytest.skip(clients.missing("kafkajs"))
    with pytest.raises(ClientUnavailable) as raised:
        hello("kafkajs@1.16.0")
    message = str(raised.value)
    assert "\n" not in message and "ECONNREFUSED" in message
    assert message.startswith("wire: kafkajs@1.16.0 is not in the cache and could not be "
                              "installed (npm: ")
    assert message.endswith("release_envs kafkajs@1.16.0")


def test_unknown_client_names_the_release_forms() -> None:
    with pytest.raises(ClientUnavailable) as raised:
        argv("kafka-pythn@2.0.2")
    assert "kafka-python@<version>" in str(raised.value)
    assert "kafkajs@<version>" in str(raised.value) and "\n" not in str(raised.value)


def test_release_names_are_client_at_version_only() -> None:
    assert release_envs.is_release("librdkafka@2.3.0")
    assert release_envs.is_release("kafkajs@2.0.0-beta.1")
    for name in ("librdkafka", "librdkafka@", "java@3.4.0", "kafkajs@../x", "kafkajs@1 2"):
        assert not release_envs.is_release(name), name


def test_a_cached_release_env_is_reused_not_rebuilt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished env (its marker written) is found without a build, on any call."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "groupcheck" / "clients" / "kafka-python-2.0.2-py3.10"
    folder.mkdir(parents=True)
    (folder / release_envs.MARKER).write_text(
        '{"python": "3.10.13", "package": "kafka-python", "version": "2.0.2"}')
    before = (folder / release_envs.MARKER).stat().st_mtime_ns

    def no_build(*_: Any) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(release_envs, "_build_python", no_build)
    for _ in range(2):
        env = release_envs.ensure("kafka-python@2.0.2")
        assert (env.folder, env.python, env.installed) == (folder, "3.10.13", "2.0.2")
    assert release_envs.missing("kafka-python@2.0.2") == ""
    assert (folder / release_envs.MARKER).stat().st_mtime_ns == before
    assert release_envs.command("kafka-python@2.0.2")[3] == str(folder / "bin" / "python")


def test_driver_bundle_imports_on_an_older_interpreter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundle holds only the drivers' modules, and they import on Python 3.9+ with no
    client installed (the client is imported when a command needs it)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    older = [path for path, minor in release_envs.interpreters() if minor in ("3.9", "3.10")]
    if not older:
        pytest.skip("no python3.9 or python3.10 here")
    folder = release_envs.bundle()
    assert release_envs.bundle() == folder
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.py"))
    assert "groupcheck/targets/wire/drivers/commits.py" in names and len(names) == 13
    assert "groupcheck/targets/wire/drivers/fatal.py" in names
    modules = ", ".join(f"groupcheck.targets.wire.drivers.{m}"
                        for m in (*(m for _, m, _ in release_envs.PACKAGES.values()),
                                  "forkserver"))
    ran = subprocess.run([older[-1], "-s", "-c", f"import {modules}; print('ok')"],
                         capture_output=True, text=True, timeout=60,
                         env={"PATH": os.environ["PATH"], "PYTHONPATH": str(folder)})
    assert ran.stdout.strip() == "ok", ran.stderr


def test_kafka_python_2_0_2_says_its_release_and_has_no_cooperative_assignor() -> None:
    need("kafka-python@2.0.2")
    info = hello("kafka-python@2.0.2")
    assert (info.client, info.version) == ("kafka-python", "2.0.2")
    assert info.assignors == ("range", "roundrobin", "sticky")
    assert (info.profile, info.crash) == ("java", "kill")


def test_librdkafka_2_3_0_says_the_librdkafka_its_wheel_carries() -> None:
    need("librdkafka@2.3.0")
    info = hello("librdkafka@2.3.0")
    assert (info.client, info.version) == ("librdkafka", "2.3.0")
    assert info.assignors == ("range", "roundrobin", "cooperative-sticky")


def test_kafkajs_1_16_0_says_its_release() -> None:
    need("kafkajs@1.16.0")
    info = hello("kafkajs@1.16.0")
    assert (info.client, info.version, info.assignors) == ("kafkajs", "1.16.0", ("roundrobin",))


def test_kafka_python_2_0_2_group_holds_every_invariant() -> None:
    """Joins, a pause across a rebalance, a subscription change, records, a leave. (A new
    kafka-python 2.0.2 member sends JoinGroup without KIP-394's member id round: groupcheck's
    broker names it by its client id before it notes the round the join completes.)"""
    need("kafka-python@2.0.2")
    events = with_profiles(smoke("range"), "java")
    assert run("wire:kafka-python@2.0.2:range", events) == []


def test_mixed_kafka_python_2_0_2_and_librdkafka_2_3_0_group_holds_every_invariant() -> None:
    """Each member runs its own release in its own env, judged by its own client's profile."""
    need("kafka-python@2.0.2", "librdkafka@2.3.0")
    events = with_profiles(smoke("range"), "java", "librdkafka")
    assert run("wire:mixed:kafka-python@2.0.2+librdkafka@2.3.0:range", events) == []


def test_librdkafka_2_3_0_beside_the_installed_librdkafka_holds_every_invariant() -> None:
    """c1 runs confluent-kafka 2.3.0 in its own env, c2 the harness's own library."""
    need("librdkafka@2.3.0", "librdkafka")
    events = with_profiles(smoke("range"), "librdkafka")
    assert run("wire:mixed:librdkafka@2.3.0+librdkafka:range", events) == []


def test_finding_kafkajs_1_16_0_writes_a_v1_subscription_without_owned_partitions() -> None:
    """KafkaJS 1.16.0's round-robin assigner says version 1 and writes the version 0 layout
    (KafkaJS 2 says version 0): its subscription cannot be read (I10), so the assignment the
    leader computed from what it read gives c1 topics it never subscribed to (I2)."""
    need("kafkajs@1.16.0")
    events = read_events(json.loads(
        (FINDINGS / "wire-kafkajs-roundrobin-I1-no-revoke-callback.json")
        .read_text(encoding="utf-8"))["events"])
    violations = run("wire:kafkajs@1.16.0:roundrobin", events)
    assert any(v.startswith("gen 1: I10: c1's subscription cannot be read") and
               "field ownedPartitions, version 1" in v for v in violations), violations
    assert {v.split(": ")[1] for v in violations} == {"I2", "I10"}, violations


def test_librdkafka_refuses_eager_and_cooperative_in_one_list_in_its_own_words(
        bootstrap: str) -> None:
    need("librdkafka")
    error = create("librdkafka", bootstrap, ["cooperative-sticky", "range"])
    assert error.startswith("create: KafkaException: ")
    assert "must have the same protocol type" in error
    assert "cooperative-sticky,range" in error


def test_kafka_python_refuses_eager_and_cooperative_in_one_list_in_its_own_words(
        bootstrap: str) -> None:
    need("kafka-python")
    error = create("kafka-python", bootstrap, ["cooperative-sticky", "range"])
    assert error.startswith("create: KafkaConfigurationError: ")
    assert "Mixing EAGER and COOPERATIVE assignors" in error


@pytest.mark.parametrize("name,assignors", [
    ("librdkafka", ["roundrobin", "range"]),
    ("java", ["cooperative-sticky", "range"]),
    ("kafka-python", ["sticky", "range"]),
    ("aiokafka", ["sticky", "range"]),
    ("kafkajs", ["roundrobin", "roundrobin"]),
])
def test_each_driver_takes_an_assignor_list(name: str, assignors: list[str],
                                            bootstrap: str) -> None:
    need(name)
    assert create(name, bootstrap, assignors, CLASSPATH if name == "java" else "") == ""
