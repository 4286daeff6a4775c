"""Where groupcheck keeps what it builds on first use, and how it gets there: compiled Java
(`java_runtime`, for the ``java:`` target, the java member driver and the tests' own
clients) and the kafkajs driver's ``npm ci``.

``~/.cache/groupcheck/<kind>/<digest>/`` (``$XDG_CACHE_HOME`` when set): one folder per
digest of what it was built from. `build_once` runs the build command in a temporary folder
beside the target and renames it into place only when the command succeeded, so a reader
never sees half a build, and two processes building at once both end with a whole one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["build_once", "cache_dir"]


def cache_dir(kind: str, digest: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "groupcheck" / kind / digest


def build_once(target: Path, argv: Callable[[Path], list[str]], timeout: float,
               prepare: Callable[[Path], None] | None = None) -> str:
    """Run ``argv(folder)`` in a fresh folder and move it to ``target``; '' when it
    worked, else the command's stderr."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    if prepare is not None:
        prepare(scratch)
    result = subprocess.run(argv(scratch), cwd=scratch, capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        return result.stderr.strip() or f"exit code {result.returncode}"
    try:
        scratch.rename(target)
    except OSError:  # another process built it first
        shutil.rmtree(scratch, ignore_errors=True)
    return ""
