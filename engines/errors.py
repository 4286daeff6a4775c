"""The engines' one error for bad input: a target, a file, a scope or an option value that
names nothing they can run. The command line prints its first line and exits 2."""

from __future__ import annotations

__all__ = ["EngineInputError"]


class EngineInputError(ValueError):
    """Bad input found by an engine; its message is one plain line."""
