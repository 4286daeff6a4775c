"""Driver environments for client releases: ``librdkafka@2.3.0``, ``kafka-python@2.0.2``,
``aiokafka@0.14.0``, ``kafkajs@1.16.0`` — one install of that release, made on first use and
kept in groupcheck's cache, and the command line that runs its member driver there.

Theory of operation. A Python client's release gets a virtualenv of its own,
``$XDG_CACHE_HOME/groupcheck/clients/<package>-<version>-py<X.Y>/`` (librdkafka is the
``confluent-kafka`` package): ``python -m venv`` and ``pip install <package>==<version>``
run in a scratch folder beside it, which `build_cache.build_once` renames into place only
when both worked and the env's last step wrote its marker (`MARKER`: the interpreter, the
installed version). The harness's own interpreter is tried first; when pip finds no
distribution for it (confluent-kafka is taken as wheels only, never compiled), the other
``python3.X`` found on ``PATH`` or among pyenv's versions, newest first; an index that lists
no release at all (offline) ends the search at once. The driver runs in that env without the
harness's packages: a *driver bundle* (``clients/driver-bundle-<digest>/``) holds a bare
``groupcheck`` tree of only the modules the Python drivers import (standard library only,
importable on Python 3.9+), and the driver starts as ``<venv>/bin/python -m
groupcheck.targets.wire.drivers.<module>`` with ``PYTHONPATH=<bundle>``. A KafkaJS release
gets ``clients/kafkajs-<version>/`` from ``npm install kafkajs@<version>``, and the shipped
``driver.js`` finds it through ``NODE_PATH``. A failed install (offline, or no such release)
is one line naming the command that installs it; it is remembered for the rest of the
process.
``python -m groupcheck.targets.wire.release_envs <client>@<version> …`` installs ahead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..build_cache import build_once, cache_dir
from .drivers import kafkajs_member

__all__ = ["INSTALL_TIMEOUT", "MARKER", "PACKAGES", "RELEASE_CLIENTS", "ReleaseEnv",
           "ReleaseUnavailable", "bundle", "cached", "command", "ensure", "interpreters",
           "is_release", "main", "missing", "split"]

#: Python clients: client name → (PyPI package, driver module, pip options)
PACKAGES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "librdkafka": ("confluent-kafka", "librdkafka_member", ("--only-binary=:all:",)),
    "kafka-python": ("kafka-python", "kafka_python_member", ()),
    "aiokafka": ("aiokafka", "aiokafka_member", ()),
}
RELEASE_CLIENTS = (*PACKAGES, "kafkajs")
MARKER = "groupcheck-env.json"
INSTALL_TIMEOUT = 600.0
MIN_PYTHON = 9  # the drivers run on python3.9 and newer
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+!_-]*")
#: what pip says when its index has nothing at all (offline, or no such package): no other
#: interpreter will help
_NOTHING = ("(from versions: none)", "connection error", "newconnectionerror",
            "failed to establish", "network is unreachable", "name resolution", "proxyerror")
_DRIVER_FILES = ("client_assignors.py", "wire/drivers/host.py", "wire/drivers/messages.py",
                 "wire/drivers/commits.py", "wire/drivers/fatal.py", "wire/drivers/forkserver.py",
                 *(f"wire/drivers/{module}.py" for _, module, _ in PACKAGES.values()))
_PROBE = ("import importlib.metadata as m, json, sys; print(json.dumps({'python': "
          "'%d.%d.%d' % sys.version_info[:3], 'package': sys.argv[1], "
          "'version': m.version(sys.argv[1])}))")
_FAILED: dict[str, str] = {}  # client@version → why it could not be installed


class ReleaseUnavailable(RuntimeError):
    """A release that is not cached and could not be installed (one line: what to run)."""


@dataclass(frozen=True)
class ReleaseEnv:
    """One installed release: where, on which interpreter, which version it holds."""

    client: str
    version: str
    folder: Path
    python: str  # the interpreter's version ('' for kafkajs)
    installed: str  # the library's version as installed

    def describe(self) -> str:
        on = f" on Python {self.python}" if self.python else " on node"
        return f"{self.client}@{self.version}: {self.folder}{on}, installed {self.installed}"


def split(name: str) -> tuple[str, str]:
    """``kafka-python@2.0.2`` → (``kafka-python``, ``2.0.2``)."""
    base, _, version = name.partition("@")
    return base, version


def is_release(name: str) -> bool:
    """Whether ``name`` is a client release this module installs."""
    base, version = split(name)
    return base in RELEASE_CLIENTS and bool(_VERSION.fullmatch(version))


def interpreters() -> list[tuple[str, str]]:
    """(command, X.Y) of the Pythons to try: the harness's own, then each other
    ``python3.X`` on PATH, newest first."""
    own = f"{sys.version_info[0]}.{sys.version_info[1]}"
    found = [(sys.executable, own)]
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    for minor in range(30, MIN_PYTHON - 1, -1):
        name = f"3.{minor}"
        if name == own:
            continue
        paths = [shutil.which(f"python{name}"),
                 *sorted((str(p) for p in pyenv.glob(f"{name}.*/bin/python{name}")),
                         reverse=True)]
        path = next((p for p in paths if p is not None and _runs(p, name)), None)
        if path is not None:
            found.append((path, name))
    return found


def _runs(python: str, minor: str) -> bool:
    """Whether ``python`` runs and is Python ``minor`` (a pyenv shim may not be)."""
    try:
        ran = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return ran.returncode == 0 and ran.stdout.strip() == minor


def _folder(client: str, version: str, python: str = "") -> Path:
    if client == "kafkajs":
        return cache_dir("clients", f"kafkajs-{version}")
    return cache_dir("clients", f"{PACKAGES[client][0]}-{version}-py{python}")


def _read(client: str, version: str, folder: Path) -> ReleaseEnv | None:
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return ReleaseEnv(client, version, folder, str(data.get("python", "")),
                      str(data.get("version", "?")))


def cached(name: str) -> ReleaseEnv | None:
    """The installed env of release ``name`` (None when there is none yet); the harness's
    own interpreter's first, then the newest."""
    client, version = split(name)
    if client == "kafkajs":
        return _read(client, version, _folder(client, version))
    own = f"{sys.version_info[0]}.{sys.version_info[1]}"
    pythons = [own, *(f"3.{m}" for m in range(30, MIN_PYTHON - 1, -1) if f"3.{m}" != own)]
    for python in pythons:
        env = _read(client, version, _folder(client, version, python))
        if env is not None:
            return env
    return None


def _reason(stderr: str, package: str) -> str:
    """The one line of an installer's error output that says what went wrong: the last
    error line naming the package, else the last error line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()
             and "complete log of this run" not in ln]
    errors = [ln for ln in lines if "error" in ln.lower()]
    named = [ln for ln in errors if package in ln]
    return (named or errors or lines or ["no output"])[-1][:300]


def _order(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)[:4])


def _install_hint(name: str, why: str) -> str:
    return (f"wire: {name} is not in the cache and could not be installed ({why}); with "
            f"network, run: python -m groupcheck.targets.wire.release_envs {name}")


def _shell(script: str) -> Callable[[Path], list[str]]:
    """The build command of `build_cache.build_once`: ``script`` run in the scratch folder."""
    return lambda _: ["sh", "-c", script]


def _build_python(client: str, version: str) -> ReleaseEnv:
    package, _, options = PACKAGES[client]
    tried: list[str] = []
    last = ""
    listed: set[str] = set()  # the releases pip saw for any interpreter
    for python, minor in interpreters():
        folder = _folder(client, version, minor)
        pip = ["./bin/python", "-m", "pip", "install", "--disable-pip-version-check",
               "--no-input", "--retries", "0", "--timeout", "15", *options,
               f"{package}=={version}"]
        steps = [[python, "-m", "venv", "."], pip, ["./bin/python", "-c", _PROBE, package]]
        script = " && ".join(shlex.join(s) for s in steps[:-1]) + \
            f" && {shlex.join(steps[-1])} > {MARKER}"
        failed = build_once(folder, _shell(script), INSTALL_TIMEOUT)
        env = _read(client, version, folder)
        if not failed and env is not None:
            return env
        tried.append(minor)
        last = f"pip: {_reason(failed, package)}"
        for seen in re.findall(r"\(from versions: ([^)]*)\)", failed):
            listed.update(v.strip() for v in seen.split(",") if v.strip() != "none")
        if any(word in failed.lower() for word in _NOTHING):
            break
    if listed and version not in listed:
        raise ReleaseUnavailable(f"wire: {client}@{version}: pip finds no release {version} of "
                                 f"{package} for Python {', '.join(tried)} (it lists "
                                 f"{', '.join(sorted(listed, key=_order)[-3:])}, …)")
    if len(tried) > 1:
        last += f"; tried Python {', '.join(tried)}"
    raise ReleaseUnavailable(_install_hint(f"{client}@{version}", last))


def _build_kafkajs(version: str) -> ReleaseEnv:
    folder = _folder("kafkajs", version)
    if shutil.which("npm") is None:
        raise ReleaseUnavailable(f"wire: kafkajs@{version} is not in the cache and npm is "
                                 "not on PATH")

    def package_json(scratch: Path) -> None:
        (scratch / "package.json").write_text(json.dumps(
            {"name": "groupcheck-kafkajs-release", "private": True}), encoding="utf-8")

    npm = ["npm", "install", "--no-audit", "--no-fund", "--save-exact", "--fetch-retries=0",
           "--fetch-timeout=15000", f"kafkajs@{version}"]
    probe = ["node", "-e", "const v = require('./node_modules/kafkajs/package.json').version;"
             " console.log(JSON.stringify({python: '', package: 'kafkajs', version: v}))"]
    script = f"{shlex.join(npm)} && {shlex.join(probe)} > {MARKER}"
    failed = build_once(folder, _shell(script), INSTALL_TIMEOUT,
                        prepare=package_json)
    env = _read("kafkajs", version, folder)
    if "ETARGET" in failed:
        raise ReleaseUnavailable(f"wire: kafkajs@{version}: npm has no such release "
                                 f"({_reason(failed, 'kafkajs')})")
    if failed or env is None:
        raise ReleaseUnavailable(_install_hint(f"kafkajs@{version}",
                                               f"npm: {_reason(failed, 'kafkajs')}"))
    return env


def ensure(name: str) -> ReleaseEnv:
    """The env of release ``name``, installed on first use (`ReleaseUnavailable` when it
    cannot be: the reason is kept for the rest of the process)."""
    env = cached(name)
    if env is not None:
        return env
    if name in _FAILED:
        raise ReleaseUnavailable(_FAILED[name])
    client, version = split(name)
    try:
        return _build_kafkajs(version) if client == "kafkajs" else \
            _build_python(client, version)
    except subprocess.TimeoutExpired:
        _FAILED[name] = _install_hint(name, f"the install took over {INSTALL_TIMEOUT:.0f}s")
    except ReleaseUnavailable as exc:
        _FAILED[name] = str(exc)
    raise ReleaseUnavailable(_FAILED[name])


def missing(name: str) -> str:
    """Why release ``name`` cannot run here ('' when it can; installs it on first use)."""
    if split(name)[0] == "kafkajs":
        major = kafkajs_member.node_major()
        if major is None:
            return f"{name}: node is not on PATH"
        if major < kafkajs_member.MIN_NODE:
            return f"{name}: node {major} is older than {kafkajs_member.MIN_NODE}"
    try:
        ensure(name)
    except ReleaseUnavailable as exc:
        return str(exc)
    return ""


def bundle() -> Path:
    """The driver bundle: a bare ``groupcheck`` package of the Python drivers' modules."""
    targets = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in _DRIVER_FILES:
        digest.update(name.encode() + b"\0" + (targets / name).read_bytes())
    folder = cache_dir("clients", f"driver-bundle-{digest.hexdigest()[:24]}")
    if (folder / "groupcheck").is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=folder.parent))
    for package in ("", "targets", "targets/wire", "targets/wire/drivers"):
        (scratch / "groupcheck" / package).mkdir(parents=True, exist_ok=True)
        (scratch / "groupcheck" / package / "__init__.py").write_text("", encoding="utf-8")
    for name in _DRIVER_FILES:
        shutil.copy(targets / name, scratch / "groupcheck" / "targets" / name)
    try:
        scratch.rename(folder)
    except OSError:  # another process made it first
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def command(name: str) -> list[str]:
    """The command line that starts the member driver of release ``name``."""
    env = ensure(name)
    client, _ = split(name)
    if client == "kafkajs":
        return ["env", f"NODE_PATH={env.folder / 'node_modules'}", "node",
                str(kafkajs_member.SOURCES / "driver.js")]
    module = PACKAGES[client][1]
    return ["env", f"PYTHONPATH={bundle()}", "PYTHONNOUSERSITE=1",
            str(env.folder / "bin" / "python"), "-m",
            f"groupcheck.targets.wire.drivers.{module}"]


def main(argv: list[str]) -> int:
    """Install each named release; one line each (where, which interpreter, which version)."""
    if not argv or any(not is_release(name) for name in argv):
        print("usage: python -m groupcheck.targets.wire.release_envs <client>@<version> … "
              f"(client: {', '.join(RELEASE_CLIENTS)})", file=sys.stderr)
        return 2
    code = 0
    for name in argv:
        reason = missing(name)
        env = cached(name)
        if reason or env is None:
            print(reason or f"{name}: not installed", file=sys.stderr)
            code = 1
        else:
            print(env.describe())
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
