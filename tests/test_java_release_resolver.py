"""``java@<version>:``: a release of Kafka's client found in a Maven local repository (its
POM's runtime dependencies followed) or a Kafka distribution, and the one-line errors when
it is not there.

The resolver's rules are checked on stand-in repositories built here (zip files holding the
class names the target looks for); the last tests run the real releases."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from groupcheck.audit.codec_check import check_codec
from groupcheck.audit.targets import ASSIGNOR_FAMILIES
from groupcheck.cli import main
from groupcheck.engines.resolving import expand_targets, resolve_audit_target
from groupcheck.targets.adapters.codecs import ReleaseCodec
from groupcheck.targets.processes.java_runtime import KAFKA_CLASS, SLF4J_CLASS, JavaUnavailable
from groupcheck.targets.processes.maven_repo import (
    fetch_hint,
    release_classpath,
    release_order,
    releases,
)
from groupcheck.targets.registry import TargetError

from helpers.environment import SETTINGS, resolve
from helpers.kafka_releases import repo_releases, stand_in_jar


def _pom(path: Path, group: str, artifact: str, version: str, deps: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"""<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>
  <properties><slf4j.version>1.7.36</slf4j.version></properties>
  <dependencies>{deps}</dependencies>
</project>""")


def _artifact(repo: Path, group: str, artifact: str, version: str, *members: str,
              deps: str = "", pom: bool = True) -> Path:
    folder = repo.joinpath(*group.split("."), artifact, version)
    if pom:
        _pom(folder / f"{artifact}-{version}.pom", group, artifact, version, deps)
    return stand_in_jar(folder / f"{artifact}-{version}.jar", *members)


def _dep(group: str, artifact: str, version: str, extra: str = "") -> str:
    return (f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version>{extra}</dependency>")


def _repo(tmp_path: Path) -> Path:
    """A repository with kafka-clients 9.9.9: slf4j through a property, a transitive
    runtime dependency, and test, provided and optional ones that must be left out."""
    repo = tmp_path / "m2"
    deps = "".join([
        _dep("org.slf4j", "slf4j-api", "${slf4j.version}", "<scope>runtime</scope>"),
        _dep("org.lz4", "lz4-java", "1.8.0"),
        _dep("org.junit", "junit", "5.0", "<scope>test</scope>"),
        _dep("com.fasterxml", "jackson", "2.0", "<scope>provided</scope>"),
        _dep("org.opt", "optional-lib", "1.0", "<optional>true</optional>")])
    _artifact(repo, "org.apache.kafka", "kafka-clients", "9.9.9", KAFKA_CLASS, deps=deps)
    _artifact(repo, "org.slf4j", "slf4j-api", "1.7.36", SLF4J_CLASS)
    _artifact(repo, "org.lz4", "lz4-java", "1.8.0", "lz4.class",
              deps=_dep("org.extra", "transitive", "2.1"))
    _artifact(repo, "org.extra", "transitive", "2.1", "extra.class")
    return repo


def test_a_release_brings_its_pom_runtime_dependencies_transitively(tmp_path: Path) -> None:
    names = [Path(p).name for p in
             release_classpath("9.9.9", str(_repo(tmp_path))).split(os.pathsep)]
    assert names == ["kafka-clients-9.9.9.jar", "slf4j-api-1.7.36.jar", "lz4-java-1.8.0.jar",
                     "transitive-2.1.jar"]


def test_a_missing_release_names_the_mvn_command_that_fetches_it(tmp_path: Path) -> None:
    with pytest.raises(JavaUnavailable) as caught:
        release_classpath("3.7.0", str(_repo(tmp_path)))
    assert fetch_hint("3.7.0") in str(caught.value)
    assert "org.apache.kafka:kafka-clients:3.7.0" in fetch_hint("3.7.0")


def _check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str,
           repo: Path) -> str:
    monkeypatch.setenv("GROUPCHECK_MAVEN_REPO", str(repo))
    code = main(["check", "--target", target, "--budget", "5"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    return err


def test_the_command_line_refuses_a_missing_release_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    err = _check(monkeypatch, capsys, "java@3.7.0:", _repo(tmp_path))
    assert "mvn dependency:get -Dartifact=org.apache.kafka:kafka-clients:3.7.0" in err


def test_a_repository_without_the_pom_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "m2"
    _artifact(repo, "org.apache.kafka", "kafka-clients", "3.4.0", KAFKA_CLASS, pom=False)
    err = _check(monkeypatch, capsys, "java@3.4.0:", repo)
    assert "POM" in err and "kafka-clients-3.4.0.pom" in err


def test_a_jar_without_kafka_classes_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "m2"
    _artifact(repo, "org.apache.kafka", "kafka-clients", "3.4.0", "README.txt",
              deps=_dep("org.slf4j", "slf4j-api", "1.7.36"))
    _artifact(repo, "org.slf4j", "slf4j-api", "1.7.36", SLF4J_CLASS)
    err = _check(monkeypatch, capsys, "java@3.4.0:", repo)
    assert "no Kafka client classes" in err


def test_a_kafka_distribution_serves_a_release_the_repository_lacks(tmp_path: Path) -> None:
    home = tmp_path / "kafka_2.13-3.6.0"
    stand_in_jar(home / "libs" / "kafka-clients-3.6.0.jar", KAFKA_CLASS)
    found = release_classpath("3.6.0", str(_repo(tmp_path)), str(home))
    assert found == str(home / "libs" / "*")
    with pytest.raises(JavaUnavailable, match="3.5.0"):
        release_classpath("3.5.0", str(_repo(tmp_path)), str(home))


@pytest.mark.parametrize("version", ["", "../3.4.0", "3.4.0:x", "*"])
def test_a_version_that_is_no_release_is_refused(version: str) -> None:
    with pytest.raises(JavaUnavailable, match="not a release version"):
        release_classpath(version, "/nonexistent")


def test_releases_sort_a_snapshot_before_its_release_and_after_the_one_before() -> None:
    shuffled = ["4.0.0", "3.10.0", "4.0.0-SNAPSHOT", "2.8.0", "3.9.1"]
    assert sorted(shuffled, key=release_order) == [
        "2.8.0", "3.9.1", "3.10.0", "4.0.0-SNAPSHOT", "4.0.0"]


def test_releases_lists_what_a_repository_holds(tmp_path: Path) -> None:
    assert releases(str(_repo(tmp_path))) == ["9.9.9"]
    assert releases(str(tmp_path / "nowhere")) == []


def test_a_classpath_beside_a_release_is_refused() -> None:
    with pytest.raises(TargetError, match="names its release"):
        resolve("java@3.4.0:/opt/kafka/libs/*")


def test_one_jvm_per_release_serves_every_assignor() -> None:
    (old, new) = repo_releases("2.8.0", "4.0.0-SNAPSHOT")
    settings = replace(SETTINGS)
    first = resolve(f"java@{old}:", assignor="range", settings=settings)
    again = resolve(f"java@{old}:", assignor="sticky", settings=settings)
    other = resolve(f"java@{new}:", assignor="range", settings=settings)
    assert first.name == f"java@{old}:" and first.call is not None
    first.call({"op": "ping"})
    assert first.call.__self__.process is again.call.__self__.process  # type: ignore[attr-defined]
    assert first.call.__self__.process is not other.call.__self__.process  # type: ignore[attr-defined]


def test_the_audit_takes_releases_and_holds_each_to_its_profile() -> None:
    (old, new) = repo_releases("2.8.0", "4.0.0-SNAPSHOT")
    names = expand_targets([f"java@{new}:", f"java@{old}:cooperative-sticky"], SETTINGS)
    assert names == [f"{a}@java@{new}:" for a in ASSIGNOR_FAMILIES] + \
        [f"cooperative-sticky@java@{old}:"]
    target = resolve_audit_target(names[-1], SETTINGS)
    assert isinstance(target.codec, ReleaseCodec) and target.codec.reader_highest == 1
    request = {"members": {"c0": {"topics": ["t0"], "owned": [["t0", 0]], "generation": 4,
                                  "rack": "r0"}}}
    for writer in range(4):  # a 2.8.0 member and the newer members of its group
        for reader in range(4):
            assert check_codec(target, request, {"writer": writer, "reader": reader}) == []
