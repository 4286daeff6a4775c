"""Kafka's client at a release: ``org.apache.kafka:kafka-clients:<version>`` and its runtime
dependencies, found the way Maven finds them.

Rules of this module:

* A release is looked up in a Maven local repository (the layout of ``~/.m2/repository``:
  ``<group as folders>/<artifact>/<version>/<artifact>-<version>.{jar,pom}``): the one the
  caller names (``$GROUPCHECK_MAVEN_REPO``, read at the edge), else ``~/.m2/repository``.
  Failing that, a Kafka distribution (``$KAFKA_HOME/libs``) whose ``kafka-clients`` jar is
  that release gives its ``libs`` folder.
* The dependencies are the POM's: scope ``compile`` (or none) and ``runtime``, not optional,
  followed through each dependency's own POM, first version met wins (Maven's "nearest").
* Every problem is one `JavaUnavailable` line: a release that is not there names the
  ``mvn dependency:get`` command that fetches it.

`releases` lists what a repository holds, `release_order` sorts versions as Maven compares
them closely enough for Kafka's (numbers, then a qualifier such as ``-SNAPSHOT`` before the
release it leads to).
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .java_runtime import JavaUnavailable

__all__ = ["GROUP", "ARTIFACT", "MavenRepo", "fetch_hint", "release_classpath",
           "release_order", "releases"]

GROUP = "org.apache.kafka"
ARTIFACT = "kafka-clients"
DEFAULT_REPO = Path("~/.m2/repository")
RUNTIME_SCOPES = frozenset({"", "compile", "runtime"})
_PROPERTY = re.compile(r"\$\{([^}]+)\}")
MAX_DEPTH = 8  # POM chains deeper than this are not what Kafka's client needs


def fetch_hint(version: str) -> str:
    """The command that fetches ``version`` into ``~/.m2/repository``."""
    return f"mvn dependency:get -Dartifact={GROUP}:{ARTIFACT}:{version}"


@dataclass(frozen=True)
class MavenRepo:
    """A Maven local repository (``root``; '' means ``~/.m2/repository``)."""

    root: str = ""

    @property
    def path(self) -> Path:
        return Path(self.root or DEFAULT_REPO).expanduser()

    def folder(self, group: str, artifact: str, version: str) -> Path:
        return self.path.joinpath(*group.split("."), artifact, version)

    def file(self, group: str, artifact: str, version: str, ext: str) -> Path:
        return self.folder(group, artifact, version) / f"{artifact}-{version}.{ext}"


def _text(node: ET.Element | None) -> str:
    return (node.text or "").strip() if node is not None else ""


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _child(node: ET.Element, name: str) -> ET.Element | None:
    return next((c for c in node if _local(c.tag) == name), None)


def _properties(project: ET.Element) -> dict[str, str]:
    props = {"project.version": _text(_child(project, "version")),
             "project.groupId": _text(_child(project, "groupId"))}
    block = _child(project, "properties")
    if block is not None:
        props.update({_local(c.tag): _text(c) for c in block})
    return props


def _dependencies(pom: Path) -> list[tuple[str, str, str]]:
    """(group, artifact, version) of the runtime dependencies a POM declares."""
    try:
        project = ET.parse(pom).getroot()
    except (OSError, ET.ParseError) as exc:
        raise JavaUnavailable(f"java: cannot read the POM {pom}: {exc}") from None
    props = _properties(project)

    def expand(text: str) -> str:
        return _PROPERTY.sub(lambda m: props.get(m.group(1), m.group(0)), text)

    out = []
    block = _child(project, "dependencies")
    for dep in (block if block is not None else []):
        field = {_local(c.tag): expand(_text(c)) for c in dep}
        if field.get("scope", "") not in RUNTIME_SCOPES or field.get("optional") == "true":
            continue
        if field.get("type", "jar") != "jar":
            continue
        out.append((field.get("groupId", ""), field.get("artifactId", ""),
                    field.get("version", "")))
    return out


def _resolve(repo: MavenRepo, version: str) -> list[Path]:
    """The release's jar and its runtime dependencies' jars, from ``repo``."""
    pom = repo.file(GROUP, ARTIFACT, version, "pom")
    jar = repo.file(GROUP, ARTIFACT, version, "jar")
    if not jar.is_file():
        raise JavaUnavailable(f"java@{version}: {GROUP}:{ARTIFACT}:{version} is not in the "
                              f"Maven repository {repo.path}; fetch it with: "
                              f"{fetch_hint(version)}")
    if not pom.is_file():
        raise JavaUnavailable(f"java@{version}: the Maven repository {repo.path} has "
                              f"{jar.name} but not its POM {pom.name}, which names its "
                              f"dependencies; fetch both with: {fetch_hint(version)}")
    out, seen = [jar], {(GROUP, ARTIFACT)}
    queue = [(dep, 1) for dep in _dependencies(pom)]
    while queue:
        (group, artifact, dep_version), depth = queue.pop(0)
        if (group, artifact) in seen or depth > MAX_DEPTH:
            continue
        seen.add((group, artifact))
        if not (group and artifact and dep_version):
            raise JavaUnavailable(f"java@{version}: a dependency in {pom} lacks its "
                                  f"groupId, artifactId or version")
        dep_jar = repo.file(group, artifact, dep_version, "jar")
        if not dep_jar.is_file():
            raise JavaUnavailable(f"java@{version}: its dependency {group}:{artifact}:"
                                  f"{dep_version} is not in {repo.path}; fetch it with: "
                                  f"{fetch_hint(version)}")
        out.append(dep_jar)
        dep_pom = repo.file(group, artifact, dep_version, "pom")
        if dep_pom.is_file():
            queue += [(d, depth + 1) for d in _dependencies(dep_pom)]
    return out


def _distribution(kafka_home: str, version: str) -> str:
    """``$KAFKA_HOME/libs`` when its kafka-clients jar is ``version`` ('' otherwise)."""
    if not kafka_home:
        return ""
    libs = Path(kafka_home).expanduser() / "libs"
    if (libs / f"{ARTIFACT}-{version}.jar").is_file():
        return str(libs / "*")
    return ""


def release_classpath(version: str, repo: str = "", kafka_home: str = "") -> str:
    """The classpath (``:``-separated) of Kafka's client at ``version``: from the Maven
    repository ``repo`` (else ``~/.m2/repository``), else from the distribution at
    ``kafka_home``. Raises `JavaUnavailable` with one line."""
    if not version or any(c in version for c in "/\\:*") or version in (".", ".."):
        raise JavaUnavailable(f"java@{version}: not a release version (for example 3.4.0)")
    maven = MavenRepo(repo)
    try:
        return os.pathsep.join(str(p) for p in _resolve(maven, version))
    except JavaUnavailable:
        found = _distribution(kafka_home, version)
        if found:
            return found
        raise


def release_order(version: str) -> tuple[tuple[int, ...], int, str]:
    """A sort key: the numbers, then a qualified version (``-SNAPSHOT``, ``-rc1``) before the
    plain release it leads to."""
    numbers, _, qualifier = version.partition("-")
    parts = tuple(int(n) for n in re.findall(r"\d+", numbers))
    return parts, 0 if qualifier else 1, qualifier


def releases(repo: str = "") -> list[str]:
    """The releases of Kafka's client ``repo`` holds (jar and POM), oldest first."""
    base = MavenRepo(repo).path.joinpath(*GROUP.split("."), ARTIFACT)
    if not base.is_dir():
        return []
    found = [d.name for d in base.iterdir()
             if (d / f"{ARTIFACT}-{d.name}.jar").is_file()]
    return sorted(found, key=release_order)
