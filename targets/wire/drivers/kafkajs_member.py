"""The ``kafkajs`` member driver's command line: KafkaJS 2.x consumers in one Node process.

The driver (``kafkajs_member_src/driver.js``) and its ``package.json`` and ``package-lock.json``
live in the repository. Its dependencies are installed with ``npm ci`` on first use into
``~/.cache/groupcheck/kafkajs/<digest of the lockfile>/`` (a temporary folder renamed into
place, so two processes never see half an install), and the driver finds them through
``NODE_PATH``. ``python -m groupcheck.targets.wire.drivers.kafkajs_member --install`` (as
``.ci/run`` does when ``node`` is on PATH) installs ahead of time. The same ``driver.js`` runs
a KafkaJS release (``kafkajs@1.16.0``) on that release's own install (`release_envs`).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ...build_cache import build_once, cache_dir

__all__ = ["INSTALL_TIMEOUT", "MIN_NODE", "SOURCES", "KafkajsUnavailable", "command", "install",
           "main", "missing", "node_major"]

SOURCES = Path(__file__).with_name("kafkajs_member_src")
MIN_NODE = 18
INSTALL_TIMEOUT = 600.0


class KafkajsUnavailable(RuntimeError):
    """No ``node`` (≥ 18) or ``npm`` on PATH, or the install failed."""


def node_major() -> int | None:
    """The major version of ``node`` on PATH (None when there is none)."""
    if shutil.which("node") is None:
        return None
    out = subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=30)
    found = re.match(r"v(\d+)", out.stdout.strip())
    return int(found.group(1)) if found else None


def missing() -> str:
    """Why the kafkajs driver cannot run here ('' when it can)."""
    major = node_major()
    if major is None:
        return "kafkajs: node is not on PATH"
    if major < MIN_NODE:
        return f"kafkajs: node {major} is older than {MIN_NODE}"
    if shutil.which("npm") is None and not _installed().is_dir():
        return "kafkajs: npm is not on PATH"
    return ""


def _installed() -> Path:
    digest = hashlib.sha256((SOURCES / "package-lock.json").read_bytes()).hexdigest()[:24]
    return cache_dir("kafkajs", digest)


def install() -> Path:
    """The folder holding ``node_modules`` (running ``npm ci`` on first use)."""
    target = _installed()
    if (target / "node_modules" / "kafkajs" / "package.json").is_file():
        return target
    if shutil.which("npm") is None:
        raise KafkajsUnavailable("kafkajs: npm is not on PATH")

    def copy_package(folder: Path) -> None:
        for name in ("package.json", "package-lock.json"):
            shutil.copy(SOURCES / name, folder / name)

    failed = build_once(target, lambda _: ["npm", "ci", "--omit=dev", "--no-audit", "--no-fund"],
                        INSTALL_TIMEOUT, prepare=copy_package)
    if failed:
        raise KafkajsUnavailable(f"kafkajs: npm ci failed: {failed[-500:]}")
    return target


def command() -> list[str]:
    """The command line that starts one kafkajs member driver."""
    modules = install() / "node_modules"
    return ["env", f"NODE_PATH={modules}", "node", str(SOURCES / "driver.js")]


def main(argv: list[str]) -> int:
    if argv != ["--install"]:
        print("usage: python -m groupcheck.targets.wire.drivers.kafkajs_member --install",
              file=sys.stderr)
        return 2
    reason = missing()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    print(install())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
