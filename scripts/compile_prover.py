"""Compile the scope prover's hot path with mypyc, into an installed (non-editable) groupcheck.

    python scripts/compile_prover.py [--check]

The proofs environments of ``tox.ini`` run this before their proofs. It compiles the modules
a proof spends its time in (``MODULES``: the in-tree assignors, the assign session, the
judges and the enumeration) from the installed package's own sources, and puts each
extension module beside its ``.py`` file, where Python's import system prefers it. Nothing
else changes: the sources are the same files, type-checked by ``mypy --strict``, and the
proofs then run about 2.7 times faster (BENCHMARKS.md, "the compiled prover").

One edit is made to the copies that are compiled, never to the installed sources: every
class gets ``@mypyc_attr(allow_interpreted_subclasses=True)``, because the bug zoo's
mutants, the legacy assignors and users' assignors subclass the builtins.

Without a C compiler or mypy the script says why on one line and exits 0: the proofs then
run interpreted, slower, with the same verdicts. ``--check`` makes that an error (exit 1).
It refuses to compile into a source tree (an editable install), whose ``.so`` files would
shadow the sources being edited.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

#: the hot path of ``groupcheck prove`` (dotted names under ``groupcheck``)
MODULES = (
    "impl.javahash", "impl.user_data", "impl.assign_op", "impl.assign_session",
    "impl.assignors.partition_pool",
    "impl.assignors.sticky", "impl.assignors.sticky_common",
    "impl.assignors.sticky_constrained", "impl.assignors.sticky_general",
    "impl.assignors.sticky_general_placement", "impl.assignors.sticky_movements",
    "properties.assignment", "properties.generations", "properties.rebalance",
    "properties.scope.blind", "properties.scope.enumeration", "properties.scope.judgement",
    "properties.scope.orbits", "properties.scope.reading",
)

_CLASS = re.compile(r"^(@dataclass[^\n]*\n)?class \w+", re.MULTILINE)
_DECORATOR = "@mypyc_attr(allow_interpreted_subclasses=True)\n"
_FUTURE = "from __future__ import annotations\n"


def open_to_subclasses(source: str) -> str:
    """``source`` with every top-level class open to interpreted subclasses (see above)."""
    if _FUTURE not in source:
        raise ValueError("a compiled module starts with 'from __future__ import annotations'")
    source = _CLASS.sub(lambda m: _DECORATOR + m.group(0), source)
    return source.replace(_FUTURE, _FUTURE + "from mypy_extensions import mypyc_attr\n", 1)


def installed_package() -> Path:
    spec = importlib.util.find_spec("groupcheck")
    if spec is None or spec.origin is None:
        raise SystemExit("compile_prover: groupcheck is not installed here")
    return Path(spec.origin).parent


def _unavailable() -> str | None:
    """Why mypyc cannot compile here (None: it can)."""
    if importlib.util.find_spec("mypyc") is None:
        return "mypy (with mypyc) is not installed"
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").exists():
        return f"no Python headers ({include})"
    return None


def compile_into(package: Path) -> list[Path]:
    """Compile ``MODULES`` from ``package``'s sources; returns the extension files placed."""
    site = package.parent
    with tempfile.TemporaryDirectory(prefix="groupcheck-mypyc-") as tmp:
        build = Path(tmp)
        shutil.copytree(package, build / "groupcheck",
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        files = []
        for name in MODULES:
            path = build / "groupcheck" / (name.replace(".", "/") + ".py")
            path.write_text(open_to_subclasses(path.read_text(encoding="utf-8")),
                            encoding="utf-8")
            files.append(str(path.relative_to(build)))
        env = {**os.environ, "MYPYC_OPT_LEVEL": "3"}
        done = subprocess.run([sys.executable, "-m", "mypyc", *files], cwd=build, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit("compile_prover: mypyc failed:\n" + done.stdout[-4000:]
                             + done.stderr[-4000:])
        placed = []
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        for name in MODULES:
            rel = Path("groupcheck", *name.split(".")).with_suffix("")
            built = build / (str(rel) + suffix)
            target = site / built.relative_to(build)
            shutil.copy2(built, target)
            placed.append(target)
        for shared in build.glob(f"*__mypyc{suffix}"):
            shutil.copy2(shared, site / shared.name)
            placed.append(site / shared.name)
        return placed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="fail (exit 1) when the modules cannot be compiled")
    args = parser.parse_args(argv)
    package = installed_package()
    if any((package.parent / marker).exists() for marker in ("pyproject.toml", ".git")):
        print(f"compile_prover: {package} is a source tree (an editable install); "
              "compile only into an installed copy", file=sys.stderr)
        return 1
    why = _unavailable()
    if why is not None:
        print(f"compile_prover: {why}; the proofs run interpreted (slower, same verdicts)",
              file=sys.stderr)
        return 1 if args.check else 0
    placed = compile_into(package)
    print(f"compile_prover: {len(placed) - 1} modules compiled into {package}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
