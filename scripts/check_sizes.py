"""The size limits of the sources: no module over 400 lines, no function over 80.

    python scripts/check_sizes.py [ROOT]

Checks every ``.py`` file of the floors, the tests, the benchmarks and the scripts (not
third-party or generated folders); prints each breach as ``path:line: what`` and exits 1
when there is one.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
FOLDERS = ("groupcheck", "engines", "audit", "model", "targets", "broker", "impl",
           "properties", "tests", "bench", "scripts")
SKIP = {"node_modules", "__pycache__", ".tox", "build"}


def sources(root: Path) -> Iterator[Path]:
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if not SKIP & set(path.relative_to(root).parts):
                yield path


def breaches(path: Path, root: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8")
    where = path.relative_to(root)
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        yield f"{where}:1: module of {lines} lines (at most {MAX_MODULE_LINES})"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                yield (f"{where}:{node.lineno}: function {node.name} of {length} lines "
                       f"(at most {MAX_FUNCTION_LINES})")


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else ".").resolve()
    found = [b for path in sources(root) for b in breaches(path, root)]
    print("\n".join(found) if found else "sizes: every module and function within limits")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
