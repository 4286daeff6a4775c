"""The prover's hot path compiled with mypyc (``scripts/compile_prover.py``) answers and
judges exactly as the interpreted sources do.

The proofs environments of ``tox.ini`` compile those modules before proving; a proof is
only a proof of the sources if the compiled modules keep their behaviour. So a copy of the
package is laid out as an install, compiled, and then asked the same questions as the
sources: every assign line of Kafka's vectors (through ``groupcheck jsonl``) and the
default scope's proofs of the sticky family (every count, verdict and counterexample).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from groupcheck.properties.scope import Scope, prove
from groupcheck.targets.registry import resolve

from helpers import ROOT
from test_assign_vectors import LINES, differing_lines

#: the installed layout (pyproject.toml's package-dir): source folder -> package folder
#: the floors' folders by their name under ``groupcheck`` (pyproject.toml's package-dir)
LAYOUT = {name.removeprefix("groupcheck."): folder for name, folder in tomllib.loads(
    (ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    ["package-dir"].items() if name != "groupcheck"}


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "compile_prover", ROOT / "scripts" / "compile_prover.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compile_prover = _script()


def test_every_class_is_opened_to_interpreted_subclasses() -> None:
    source = ("from __future__ import annotations\n\nimport x\n\n\nclass A:\n    pass\n\n\n"
              "@dataclass(frozen=True)\nclass B(A):\n    y: int\n\n\ndef f() -> None:\n"
              "    class Local:\n        pass\n")
    opened = compile_prover.open_to_subclasses(source)
    decorator = "@mypyc_attr(allow_interpreted_subclasses=True)\n"
    assert decorator + "class A:" in opened
    assert decorator + "@dataclass(frozen=True)\nclass B(A):" in opened
    assert "    class Local:" in opened and decorator + "    class" not in opened
    assert opened.startswith("from __future__ import annotations\n"
                             "from mypy_extensions import mypyc_attr\n")


def test_a_module_without_future_annotations_is_refused() -> None:
    with pytest.raises(ValueError, match="from __future__ import annotations"):
        compile_prover.open_to_subclasses("class A:\n    pass\n")


def test_a_source_tree_is_never_compiled_into(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An editable install's package is the checkout: .so files there would shadow the
    sources being edited."""
    monkeypatch.setattr(compile_prover, "installed_package", lambda: ROOT / "groupcheck")
    assert compile_prover.main([]) == 1
    assert "source tree" in capsys.readouterr().err


def test_every_compiled_module_exists_and_opens_with_future_annotations() -> None:
    for name in compile_prover.MODULES:
        top, _, rest = name.partition(".")
        source = ROOT / LAYOUT[top] / (rest.replace(".", "/") + ".py")
        compile_prover.open_to_subclasses(source.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site folder holding groupcheck laid out as installed, its hot path compiled."""
    why = compile_prover._unavailable()
    if why is not None:
        pytest.skip(f"mypyc cannot compile here: {why}")
    site = tmp_path_factory.mktemp("site")
    package = site / "groupcheck"
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc")
    shutil.copytree(ROOT / "groupcheck", package, ignore=ignore)
    for source, folder in LAYOUT.items():
        shutil.copytree(ROOT / source, package / folder, ignore=ignore)
    placed = compile_prover.compile_into(package)
    assert len(placed) == len(compile_prover.MODULES) + 1  # and the shared library
    return site


def _run(site: Path, args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True,
                          text=True, cwd=site, env=env, timeout=900, check=False)


@pytest.mark.heavy
def test_the_compiled_modules_are_the_ones_imported(compiled: Path) -> None:
    code = ("import importlib, json, sys; names = sys.argv[1:]; print(json.dumps("
            "[importlib.import_module('groupcheck.' + n).__file__ for n in names]))")
    done = _run(compiled, ["-c", code, *compile_prover.MODULES])
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)
    assert all(f.startswith(str(compiled)) and f.endswith(".so") for f in files), files


@pytest.mark.heavy
def test_compiled_answers_every_assign_vector_as_kafka(compiled: Path) -> None:
    payload = "".join(json.dumps(line["request"]) + "\n" for line in LINES)
    done = _run(compiled, ["-m", "groupcheck", "jsonl"], payload)
    assert done.returncode == 0, done.stderr
    failures = differing_lines([json.loads(a) for a in done.stdout.splitlines()])
    assert not failures, f"{len(failures)} lines differ; first:\n{failures[0]}"


def _verdicts(report: dict[str, Any]) -> dict[str, Any]:
    keys = ("ok", "proved", "configurations", "labelled", "violations", "violationsLabelled",
            "inheritedFromKafka", "gapHistogram", "gapUnjudged", "optimumBy", "gapExamples")
    found = {k: report[k] for k in keys}
    found["counterexamples"] = cexs = {}
    for inv, cex in report["counterexamples"].items():
        # the file's name is where it was saved; "ms" how long the answer took
        cexs[inv] = {k: v for k, v in cex.items() if k not in ("file", "response")}
        cexs[inv]["response"] = {k: v for k, v in cex["response"].items() if k != "ms"}
    return found


@pytest.mark.heavy
@pytest.mark.parametrize("target", ["builtin:sticky", "builtin:cooperative-sticky"])
def test_compiled_proof_has_the_verdicts_of_the_sources(compiled: Path, target: str) -> None:
    """The default scope, I4b gaps measured: the same classes, violations, labels, gap
    histogram and smallest counterexamples."""
    code = ("import json, sys; from groupcheck.properties.scope import prove; "
            "from groupcheck.targets.registry import resolve; t = resolve(sys.argv[1]); "
            "r = prove(t.assign, t.assignor, sticky=t.balanced, session=t.assign_session, "
            "workers=1); print(json.dumps(r.to_dict()))")
    done = _run(compiled, ["-c", code, target])
    assert done.returncode == 0, done.stderr
    t = resolve(target)
    mine = prove(t.assign, t.assignor, Scope(), sticky=t.balanced, session=t.assign_session,
                 workers=1).to_dict()
    assert _verdicts(json.loads(done.stdout)) == _verdicts(json.loads(json.dumps(mine)))
