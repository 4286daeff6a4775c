"""Locating and reading the golden vectors recorded from Kafka's Java client.

They live outside the repository, in the folder ``$GROUPCHECK_VECTORS`` names. Without them the
vector tests are skipped, unless ``GROUPCHECK_REQUIRE_VECTORS`` is set (CI sets it), in which
case their absence is an error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest


def vectors_dir() -> Path | None:
    env = os.environ.get("GROUPCHECK_VECTORS")
    if env and (Path(env) / "codec.jsonl").is_file():
        return Path(env)
    return None


def required_vectors() -> Path:
    """The golden vectors' folder, or skip (fail under GROUPCHECK_REQUIRE_VECTORS)."""
    d = vectors_dir()
    if d is None:
        message = ("golden vectors not found: set GROUPCHECK_VECTORS to the folder holding "
                   "codec.jsonl and assign.jsonl")
        if os.environ.get("GROUPCHECK_REQUIRE_VECTORS"):
            raise RuntimeError(message)
        pytest.skip(message, allow_module_level=True)
    return d


def load(name: str) -> list[dict[str, Any]]:
    """All lines of one vector file, or skip (fail under GROUPCHECK_REQUIRE_VECTORS)."""
    with open(required_vectors() / name, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def line_id(index: int, line: dict[str, Any]) -> str:
    return f"{index:04d}-{line.get('case', '?')}"
