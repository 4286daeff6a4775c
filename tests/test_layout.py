"""The source's layout keeps one name per concept: no class name is defined in two modules
of the floors (impl, properties, broker, targets, model, audit, engines) or of the command
line's package (groupcheck/)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOORS = ("impl", "properties", "broker", "targets", "model", "audit", "engines", "groupcheck")


def class_homes(root: Path) -> dict[str, list[str]]:
    """Every class name defined anywhere in a module of the floors (nested ones too) → the
    modules that define it, as paths relative to ``root``."""
    homes: dict[str, set[str]] = defaultdict(set)
    for floor in FLOORS:
        for path in sorted((root / floor).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    homes[node.name].add(path.relative_to(root).as_posix())
    return {name: sorted(paths) for name, paths in homes.items()}


def twice_defined(root: Path) -> dict[str, list[str]]:
    return {name: paths for name, paths in class_homes(root).items() if len(paths) > 1}


def test_no_class_name_is_defined_in_two_modules() -> None:
    twice = twice_defined(ROOT)
    assert not twice, "class names defined in more than one module: " + "; ".join(
        f"{name} in {', '.join(paths)}" for name, paths in sorted(twice.items()))


def test_a_class_name_defined_twice_is_found(tmp_path: Path) -> None:
    for floor, text in (("impl", "class Cell:\n    pass\n"),
                        ("engines", "def f():\n    class Cell:\n        pass\n")):
        (tmp_path / floor).mkdir()
        (tmp_path / floor / "m.py").write_text(text, encoding="utf-8")
    for floor in FLOORS:
        (tmp_path / floor).mkdir(exist_ok=True)
    assert twice_defined(tmp_path) == {"Cell": ["engines/m.py", "impl/m.py"]}
