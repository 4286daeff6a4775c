"""The ``java:`` target's classpath rules, its compile cache, and its one-line errors.

The classpath tests build stand-in jars (zip files holding the class names the target looks
for), so they need no JDK; the cache tests compile the real driver against Kafka's client.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from groupcheck.audit.package import package_files
from groupcheck.cli import main
from groupcheck.cli.shared import Environment
from groupcheck.targets.processes import java_runtime
from groupcheck.targets.processes.java_runtime import (
    ENV_CLASSPATH,
    KAFKA_CLASS,
    SLF4J_CLASS,
    JavaUnavailable,
    classpath_entries,
    kafka_classpath,
)
from groupcheck.targets.registry import TargetError, resolve

from helpers.environment import CLASSPATH
from helpers.kafka_releases import stand_in_jar

ROOT = Path(__file__).resolve().parent.parent


def _kafka_folder(root: Path) -> Path:
    stand_in_jar(root / "kafka-clients-9.9.jar", KAFKA_CLASS)
    stand_in_jar(root / "lib" / "slf4j-api-1.7.jar", SLF4J_CLASS)
    stand_in_jar(root / "optional" / "slf4j-nop.jar", "org/slf4j/impl/StaticLoggerBinder.class")
    return root


def test_a_folder_means_its_jars_and_its_lib_jars(tmp_path: Path) -> None:
    folder = _kafka_folder(tmp_path / "kafka")
    assert [p.name for p in kafka_classpath(str(folder))] == [
        "kafka-clients-9.9.jar", "slf4j-api-1.7.jar"]


def test_a_list_takes_jars_class_folders_and_globs(tmp_path: Path) -> None:
    kafka = stand_in_jar(tmp_path / "build" / "kafka-clients.jar", KAFKA_CLASS)
    stand_in_jar(tmp_path / "deps" / "slf4j-api.jar", SLF4J_CLASS)
    stand_in_jar(tmp_path / "deps" / "lz4.jar", "net/jpountz/lz4/LZ4Factory.class")
    classes = tmp_path / "classes"
    (classes / "org" / "slf4j").mkdir(parents=True)
    spec = os.pathsep.join([str(kafka), str(tmp_path / "deps" / "*"), str(classes)])
    assert [p.name for p in classpath_entries(spec)] == [
        "kafka-clients.jar", "lz4.jar", "slf4j-api.jar", "classes"]


def test_an_empty_classpath_takes_the_default_the_command_line_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``java:`` with no classpath takes the caller's default, which the command line reads
    from ``$GROUPCHECK_KAFKA_CLASSPATH`` once; the library itself reads no environment and
    looks nowhere else (not beside the checkout, not beside the working directory)."""
    folder = _kafka_folder(tmp_path / "elsewhere")
    assert kafka_classpath("", str(folder))[0].parent == folder.resolve()
    assert Environment.read({ENV_CLASSPATH: str(folder)}).settings.kafka_classpath == \
        str(folder)
    _kafka_folder(tmp_path / "work" / "shared" / "kafka")
    (tmp_path / "work" / "clone").mkdir()
    monkeypatch.chdir(tmp_path / "work" / "clone")
    monkeypatch.setenv(ENV_CLASSPATH, str(folder))
    with pytest.raises(JavaUnavailable, match="no Kafka classpath"):
        kafka_classpath("")


@pytest.mark.parametrize(("layout", "message"), [
    ("missing", "does not exist"),
    ("no-kafka", "no Kafka client classes"),
    ("no-slf4j", "needs slf4j-api"),
])
def test_a_classpath_without_kafkas_client_is_one_line(tmp_path: Path, layout: str,
                                                       message: str) -> None:
    if layout == "missing":
        spec = str(tmp_path / "nope.jar")
    elif layout == "no-kafka":
        spec = str(stand_in_jar(tmp_path / "slf4j-api.jar", SLF4J_CLASS))
    else:
        spec = str(stand_in_jar(tmp_path / "kafka-clients.jar", KAFKA_CLASS))
    with pytest.raises(TargetError, match=message) as caught:
        resolve(f"java:{spec}")
    assert "\n" not in str(caught.value)


def test_no_jdk_is_one_line_on_stderr_and_exit_2(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = _kafka_folder(tmp_path / "kafka")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert main(["check", "--target", f"java:{folder}", "--budget", "5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no java on PATH" in err


def test_the_driver_sources_ship_with_the_package() -> None:
    """In the zip the audit sends to executors, and in what pyproject installs."""
    shipped = {name for _, name in package_files()}
    folder = "groupcheck/targets/processes/java_driver_src"
    sources = {f"{folder}/{n}" for n in java_runtime.driver_sources()}
    assert f"{folder}/GroupcheckDriver.java" in sources
    assert sources <= shipped
    # the broker's second reader (java_frames): installed, not sent to executors
    assert "FrameReader.java" in java_runtime.driver_sources("java_frames_src")
    assert ('"groupcheck.targets.processes" = ["java_driver_src/*.java", '
            '"java_frames_src/*.java"]' in (ROOT / "pyproject.toml").read_text())


# --- the compile cache (a JDK and Kafka's client) -------------------------------------------


def _needs_java() -> None:
    from helpers.kafka_java import java_command

    java_command()


def test_first_use_compiles_into_the_cache_and_later_uses_reuse_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _needs_java()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(java_runtime, "_COMPILED", {})
    command = java_runtime.driver_command("", CLASSPATH)
    classes = Path(command[command.index("-cp") + 1].split(os.pathsep)[0])
    assert classes.parent.parent == tmp_path / "groupcheck" / "java"
    assert (classes / "groupcheck" / "driver" / "GroupcheckDriver.class").is_file()
    stamp = classes.stat().st_mtime_ns
    monkeypatch.setattr(java_runtime, "_COMPILED", {})

    def no_javac(*args: object, **kw: object) -> None:
        raise AssertionError("compiled again although the cache holds the driver")

    monkeypatch.setattr(java_runtime, "_compile_into", no_javac)
    assert java_runtime.driver_command("", CLASSPATH) == command
    assert classes.stat().st_mtime_ns == stamp


def test_two_processes_compiling_at_once_both_get_one_cached_result(tmp_path: Path) -> None:
    _needs_java()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    code = ("from groupcheck.targets.processes.java_runtime import driver_command; "
            f"c = driver_command('', {CLASSPATH!r}); print(c[c.index('-cp') + 1].split(':')[0])")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert outs[0][0] == outs[1][0]
    folder = tmp_path / "groupcheck" / "java"
    assert [p.name for p in folder.iterdir()] == [Path(outs[0][0].strip()).parent.name]
