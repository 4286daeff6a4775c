"""Saved files whose names and bytes follow from what they mean, never from when or where
they were made: the same command with the same seed writes the same files.

`save_as` names a file ``<stem>-<digest>.json``: the stem says what broke (the engine, the
target as given, the invariant), the digest is of the file's *meaning* (the target, the
assignor, the invariant and the request, story or events that show it), which the caller
states. `steady` is what is written: a JSON value without what varies between identical
runs. The time an assign call took (an answer's ``ms``) is dropped; events and requests,
which carry an ``op``, keep their ``ms`` (a delay is part of the story). Sets become sorted
lists. A reader takes old files that still carry the timings as they are. A report written
beside a run's counterexamples (``matrix.json``, ``upgrades.json``, the compatibility
matrix) is written `without_times`: the wall times of its parts are printed, not saved.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["WALL_KEYS", "digest", "file_stem", "save_as", "steady", "steady_text",
           "without_times"]

#: keys an answer carries that say how long it took, not what it is
TIMING_KEYS = frozenset({"ms"})
#: keys of a report that hold wall times
WALL_KEYS = frozenset({"seconds", "afterSeconds", "slowest_settle"})


def steady(value: Any) -> Any:
    """``value`` as JSON data without timings (see the module doc), sets sorted."""
    if isinstance(value, dict):
        drop = TIMING_KEYS if "op" not in value else frozenset()
        return {k: steady(v) for k, v in value.items() if k not in drop}
    if isinstance(value, list | tuple):
        return [steady(v) for v in value]
    if isinstance(value, set | frozenset):
        return [steady(v) for v in sorted(value, key=repr)]
    return value


def without_times(value: Any) -> Any:
    """A report as JSON data without its wall times (`WALL_KEYS`, at any depth)."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in WALL_KEYS}
    if isinstance(value, list | tuple):
        return [without_times(v) for v in value]
    return value


def steady_text(body: Any) -> str:
    """The bytes a saved file holds: `steady` ``body``, indented, with a final newline."""
    return json.dumps(steady(body), indent=1, ensure_ascii=False) + "\n"


def digest(meaning: Any) -> str:
    """Ten hex digits of a hash of ``meaning`` (its order kept: a request's member order is
    part of what it means)."""
    text = json.dumps(steady(meaning), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def file_stem(text: str, limit: int = 60) -> str:
    """``text`` (a target string, an invariant) fit for a file name: ``:`` becomes ``-``,
    anything but letters, digits, ``.``, ``_`` and ``-`` becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text.replace(":", "-"))[:limit]


def save_as(folder: str | os.PathLike[str], stem: str, body: Any, meaning: Any) -> Path:
    """Write `steady` ``body`` as ``folder/<stem>-<digest of meaning>.json``; its path.
    The stem is taken as it is (the caller made it file-safe)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}-{digest(meaning)}.json"
    path.write_text(steady_text(body), encoding="utf-8")
    return path
