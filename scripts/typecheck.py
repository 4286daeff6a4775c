"""Run ``mypy --strict`` on impl/, model/, properties/ and broker/ under their installed names.

The floors live in top-level folders that pyproject.toml maps into the ``groupcheck``
namespace; mypy cannot follow that mapping, so this builds the same tree out of symlinks
(build/typecheck/groupcheck/{impl,model,properties}) and checks it there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOORS = ("impl", "model", "properties", "broker")


def main() -> int:
    tree = ROOT / "build" / "typecheck"
    shutil.rmtree(tree, ignore_errors=True)
    package = tree / "groupcheck"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""groupcheck (type-checking tree)."""\n')
    for floor in FLOORS:
        os.symlink(ROOT / floor, package / floor, target_is_directory=True)
    args = [sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml")]
    for floor in FLOORS:
        args += ["-p", f"groupcheck.{floor}"]
    return subprocess.call(args, cwd=tree)


if __name__ == "__main__":
    raise SystemExit(main())
