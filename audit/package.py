"""Ship the ``groupcheck`` package to Spark executors.

The floors (impl/, model/, ...) are mapped into the ``groupcheck`` namespace by
pyproject.toml, or by ``groupcheck/__init__.py``'s source-checkout hook, so a checkout is not
importable as-is on an executor. `package_zip` builds a zip with the installed layout
(``groupcheck/``, ``groupcheck/impl/``, ...) from wherever this process imports each
subpackage, to be shipped with ``SparkContext.addPyFile`` (or ``spark-submit --py-files``).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import zipfile
from pathlib import Path

__all__ = ["PACKAGE_DATA", "SUBPACKAGES", "package_files", "package_zip"]

SUBPACKAGES = ("", "impl", "impl.assignors", "properties", "targets", "targets.adapters",
               "targets.processes", "targets.zoo", "targets.wire", "targets.wire.backends",
               "targets.wire.drivers",
               "model", "audit", "engines")
#: files beside the modules that the package reads at run time (the java: driver's sources)
PACKAGE_DATA = {"targets.processes": ("java_driver_src/*.java",)}


def _package_dir(name: str) -> Path | None:
    try:
        module = importlib.import_module("groupcheck" + (f".{name}" if name else ""))
    except ImportError:  # an optional floor that is missing (e.g. a partial install)
        return None
    paths = list(getattr(module, "__path__", []))
    return Path(paths[0]) if paths else None


def package_files() -> list[tuple[Path, str]]:
    """(source file, name inside the zip) for every module of the package and its data
    files (`PACKAGE_DATA`), sorted."""
    out: list[tuple[Path, str]] = []
    for name in SUBPACKAGES:
        folder = _package_dir(name)
        if folder is None:
            continue
        prefix = "/".join(["groupcheck", *filter(None, name.split("."))])
        for path in sorted(folder.glob("*.py")):
            out.append((path, f"{prefix}/{path.name}"))
        for pattern in PACKAGE_DATA.get(name, ()):
            for path in sorted(folder.glob(pattern)):
                out.append((path, f"{prefix}/{path.relative_to(folder).as_posix()}"))
    return out


def package_zip(directory: str | os.PathLike[str]) -> Path | None:
    """Write ``groupcheck-<digest>.zip`` into ``directory`` (once per content) and return
    its path. The digest changes whenever a source file does, so executors never run a
    stale copy. None when this process imports the package from a zip itself (as under
    ``spark-submit --py-files groupcheck.zip``): that zip already reaches the executors."""
    files = package_files()
    if not files:
        return None
    digest = hashlib.sha256()
    for path, arcname in files:
        digest.update(arcname.encode())
        digest.update(path.read_bytes())
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"groupcheck-{digest.hexdigest()[:12]}.zip"
    if not target.exists():
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, arcname in files:
                info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
        os.replace(tmp, target)
    return target


if __name__ == "__main__":  # python -m groupcheck.audit.package DIR: the zip for --py-files
    import sys

    made = package_zip(sys.argv[1] if len(sys.argv) > 1 else ".")
    print(made if made is not None else "groupcheck is imported from a zip already")
