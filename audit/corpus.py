"""Corpus files: what ``groupcheck audit --corpus`` plays instead of random scenarios.

A file is an audit replay file (its ``spec``: the story runs again), a chain of assign
requests (``requests``: each judged on its own) or one assign request (a ``prove`` or
``scenarios`` counterexample). The driver reads every file before Spark starts
(`corpus_problem`); executors parse each one with `corpus_spec`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["corpus_problem", "corpus_spec"]


def corpus_spec(text: str) -> dict[str, Any]:
    """The spec in a corpus file: an audit replay file (its ``spec``), a chain of requests
    (``requests``), or a single assign request (e.g. a ``prove`` counterexample)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return {"kind": "requests", "requests": [], "error": "not JSON"}
    if isinstance(data, dict) and isinstance(data.get("spec"), dict):
        spec: dict[str, Any] = data["spec"]
        return spec
    if isinstance(data, dict) and isinstance(data.get("requests"), list):
        if all(isinstance(r, dict) and isinstance(r.get("members"), dict)
               for r in data["requests"]):
            return {"kind": "requests", "requests": data["requests"]}
        return {"kind": "requests", "requests": [],
                "error": "a request of its chain has no members object"}
    if isinstance(data, dict) and isinstance(data.get("members"), dict):
        request = {k: v for k, v in data.items() if k != "groupcheck"}
        return {"kind": "requests", "requests": [request]}
    return {"kind": "requests", "requests": [],
            "error": "neither an audit story (spec), a request chain nor an assign request"}


def corpus_problem(corpus: str) -> str | None:
    """Why a local corpus folder cannot be played, in one line, or None: it holds no
    ``*.json`` file, or one that is no story (it would run as an empty story and pass)."""
    paths = sorted(Path(corpus).glob("*.json"))
    if not paths:
        return f"the corpus {corpus} holds no *.json file"
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return f"cannot read {path}: {exc}"
        error = corpus_spec(text).get("error")
        if error:
            return f"{path} is {error}" if error == "not JSON" else f"{path}: {error}"
    return None
