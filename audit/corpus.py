"""Corpus files: what ``groupcheck audit --corpus`` plays instead of random scenarios.

A file is read as every command reads a saved file (`model.saved_files`): a story (bare, wrapped
as ``{"spec": …}``, or an audit counterexample: the story runs again), a chain of assign
requests (``requests``: each judged on its own) or one assign request (a ``prove`` or
``scenarios`` counterexample). The driver reads every file before Spark starts
(`corpus_problem`); executors parse each one with `corpus_spec`.
"""

from __future__ import annotations

from pathlib import Path

from ..model.saved_files import REPLAY_FORMAT, SavedFileError
from ..model.saved_files import read_text as classify_text
from ..model.story_shapes import StorySpec
from ..properties.jsonl_shapes import AssignRequest

__all__ = ["corpus_problem", "corpus_spec"]


def corpus_spec(text: str, where: str = "the file") -> StorySpec:
    """The spec a corpus file plays (read by `model.saved_files`, the reader every command
    shares): a story's spec (bare, wrapped, or an audit counterexample's), or the requests
    of a request file or chain; a file the audit cannot play is an empty request chain with
    the reason under ``error``."""
    try:
        saved = classify_text(text, where)
    except SavedFileError as exc:
        return {"kind": "requests", "requests": [], "error": str(exc)}
    if saved.kind == "story" and saved.spec is not None:
        return saved.spec
    if saved.kind == "requests":
        return {"kind": "requests", "requests": [_without_op(r) for r in saved.requests]}
    return {"kind": "requests", "requests": [],
            "error": f"{where} is a state-machine replay file ({REPLAY_FORMAT}): its events "
                     "need a group target; groupcheck replay and groupcheck shrink play it"}


def _without_op(request: AssignRequest) -> AssignRequest:
    out = request.copy()
    out.pop("op", None)
    return out


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
        error = corpus_spec(text, str(path)).get("error")
        if error:
            return str(error)
    return None
