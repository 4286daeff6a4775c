"""Checks of the command line's option values, made before anything runs.

argparse hands each numeric option's text to its ``type``; a value out of range becomes one
plain line on stderr and exit code 2 (``cli.main``), never a traceback deep inside a run.
Seconds must be finite: ``float`` accepts ``nan`` and ``inf``, which would make a budget
never end or never start. A folder to write results into is checked before the run that
would write them (`folder_problem`).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable


def int_at_least(low: int) -> Callable[[str], int]:
    """An integer option that must be ``low`` or more."""
    return int_between(low, None)


def int_between(low: int, high: int | None) -> Callable[[str], int]:
    """An integer option within ``low``..``high`` (``high`` None: no upper bound)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            wanted = f"at least {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"must be {wanted}, not {value}")
        return value

    parse.__name__ = "integer"
    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds, not {text}")
    return value


def positive_seconds(text: str) -> float:
    """Seconds that must be more than zero (a budget, a per-request timeout)."""
    value = _seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def seconds_or_zero(text: str) -> float:
    """Seconds that may be zero (zero turns the step off)."""
    value = _seconds(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {text}")
    return value


def folder_problem(path: str, option: str) -> str | None:
    """Why ``path`` cannot become a folder to write into, in one line, or None: it, or its
    nearest existing parent, is a file (found before a run, so no result is lost to it)."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    if os.path.isdir(probe):
        return None
    return f"{option} {path}: {probe} is a file, not a folder"
