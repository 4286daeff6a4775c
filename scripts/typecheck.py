"""Run ``mypy --strict`` on every floor under its installed name.

The floors (impl/, model/, properties/, broker/, targets/, engines/, audit/) live in
top-level folders that pyproject.toml maps into the ``groupcheck`` namespace; mypy cannot
follow that mapping, so this builds the same tree out of symlinks
(build/typecheck/groupcheck/{impl,model,...}) and checks it there. The package folder's own
modules, the command line (groupcheck/cli/), the pytest plugin (groupcheck/pytest_plugin.py)
and ``python -m groupcheck`` (groupcheck/__main__.py), are linked in beside the floors, so
that their relative imports (``from ..engines import x``) resolve in the tree. The tree's
``__init__.py`` is a stub of its own: the package's real one extends ``__path__`` for a
source checkout, which the tree does not need.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOORS = ("impl", "model", "properties", "broker", "targets", "engines", "audit")
# groupcheck/'s own subpackages and modules (its __init__.py is replaced by a stub).
PACKAGES = ("cli",)
MODULES = ("pytest_plugin", "__main__")


def main() -> int:
    tree = ROOT / "build" / "typecheck"
    shutil.rmtree(tree, ignore_errors=True)
    package = tree / "groupcheck"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        '"""groupcheck (type-checking tree)."""\n\n__version__ = "0.1.0"\n'
    )
    for floor in FLOORS:
        os.symlink(ROOT / floor, package / floor, target_is_directory=True)
    for sub in PACKAGES:
        os.symlink(ROOT / "groupcheck" / sub, package / sub, target_is_directory=True)
    for module in MODULES:
        os.symlink(ROOT / "groupcheck" / f"{module}.py", package / f"{module}.py")
    args = [sys.executable, "-m", "mypy", "--strict", "--config-file", str(ROOT / "pyproject.toml")]
    for name in FLOORS + PACKAGES:
        args += ["-p", f"groupcheck.{name}"]
    for module in MODULES:
        args += ["-m", f"groupcheck.{module}"]
    return subprocess.call(args, cwd=tree)


if __name__ == "__main__":
    raise SystemExit(main())
