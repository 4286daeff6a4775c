"""What every command shares: its errors, the checks of option values, the common options
(target, assignor, timeout, failures, broker, reference), and the environment, read once.

A command raises `UsageError` for bad arguments or input; `main` prints its first line and
exits 2. The engines raise their own input errors (`engines.EngineInputError`) and the
targets theirs (`TargetError`): `main` reports those the same way. argparse hands each
numeric option's text to its ``type``; a value out of range is a usage error before
anything runs. Seconds must be finite (``float`` accepts ``nan`` and ``inf``, which would make
a budget never end or never start); a folder to write results into is checked before the
run that would write into it (`folder_problem`).

`Environment` is everything groupcheck reads from ``os.environ``: the command line reads it
once, in `main`, and every command passes its parts down as parameters.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NoReturn

from .. import engines
from ..engines import EngineInputError
from ..targets.registry import TARGET_KINDS
from ..targets.settings import Settings, SettingsError
from ..targets.target import TargetError
from ..targets.wire.backends.factory import BACKENDS

__all__ = ["ASSIGNOR_HELP", "DEFAULT_BUDGET", "DEFAULT_FAILURES", "NO_ENVIRONMENT", "TIMEOUT_HELP",
           "Environment", "Parser", "UsageError", "add_assignor_option", "add_broker_option",
           "add_failures_option", "add_quiet_option", "add_reference_option", "add_strict_option",
           "add_target_option", "add_timeout_option", "add_versions_option", "folder_problem",
           "input_error",
           "int_at_least", "int_between", "positive_seconds", "seconds_or_zero",
           "with_releases"]

DEFAULT_FAILURES = "groupcheck-failures"
DEFAULT_BUDGET = 120.0  # seconds of check and diff
ASSIGNOR_HELP = ("which assignors (repeatable or comma-separated; default: every assignor the "
                 "target answers; for python:pkg.module an attribute or a name)")
TIMEOUT_HELP = ("seconds per request for a jsonl: or java: target before it is a TIMEOUT "
                "(default 10, or $GROUPCHECK_JSONL_TIMEOUT)")


class UsageError(Exception):
    """Bad arguments or input: reported as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are `UsageError` (one line, exit 2), not exits."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def input_error(exc: BaseException) -> bool:
    """Bad arguments or input, wherever found: a target string that names nothing we can run
    may surface only when a command (or one of its worker processes) resolves it."""
    return isinstance(exc, UsageError | EngineInputError | TargetError | SettingsError)


@dataclass(frozen=True)
class Environment:
    """groupcheck's environment variables, read once (`read`): the targets' settings
    (``GROUPCHECK_BROKER``, ``GROUPCHECK_KAFKA_CLASSPATH``, ``GROUPCHECK_JSONL_TIMEOUT``,
    ``GROUPCHECK_WIRE_TRACE``) and the golden vectors' folder (``GROUPCHECK_VECTORS``)."""

    settings: Settings = Settings()
    vectors: Path | None = None

    @classmethod
    def read(cls, environ: Mapping[str, str]) -> Environment:
        vectors = environ.get("GROUPCHECK_VECTORS")
        return cls(Settings.from_environ(environ), Path(vectors) if vectors else None)

    def with_broker(self, broker: str | None) -> Environment:
        """``--broker``, where a command was given one, over ``$GROUPCHECK_BROKER``."""
        return replace(self, settings=replace(self.settings, broker=broker)) if broker else self


#: an empty environment: what a command run from code without one sees
NO_ENVIRONMENT = Environment()


# --- option values -----------------------------------------------------------------------


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


# --- common options ----------------------------------------------------------------------


def add_target_option(p: argparse.ArgumentParser, help: str = TARGET_KINDS, *,
                      required: bool = True, repeat: bool = False) -> None:
    """``--target T``: what to check (once, or repeatable)."""
    if repeat:
        p.add_argument("--target", action="append", default=[], help=help)
    else:
        p.add_argument("--target", required=required, default=None, help=help)


def add_assignor_option(p: argparse.ArgumentParser, help: str = ASSIGNOR_HELP, *,
                        repeat: bool = True) -> None:
    """``--assignor``: which of a target's assignors (repeatable, comma lists)."""
    p.add_argument("--assignor", action="append" if repeat else "store", default=None,
                   help=help)


def add_timeout_option(p: argparse.ArgumentParser) -> None:
    """``--timeout``: a process target's time limit per request."""
    p.add_argument("--timeout", type=positive_seconds, default=None, help=TIMEOUT_HELP)


def add_failures_option(p: argparse.ArgumentParser, help: str = "where counterexamples go"
                        ) -> None:
    """``--failures DIR``: where counterexample files are saved."""
    p.add_argument("--failures", default=DEFAULT_FAILURES,
                   help=f"{help} (default %(default)s)")


def add_broker_option(p: argparse.ArgumentParser) -> None:
    """``--broker``: the cluster the wire targets run on (over ``$GROUPCHECK_BROKER``)."""
    p.add_argument("--broker", choices=BACKENDS, default=None,
                   help="the cluster wire targets run on: groupcheck's own broker "
                        "(groupcheck, the default) or librdkafka's mock cluster (mock)")


def add_reference_option(p: argparse.ArgumentParser, help: str) -> None:
    """``--reference T``: a target whose identical answers label a violation its own."""
    p.add_argument("--reference", default=None, metavar="T", help=help)


def add_strict_option(p: argparse.ArgumentParser) -> None:
    """``--strict``: Kafka's own behaviour (rules K1-K4) fails the run too."""
    p.add_argument("--strict", action="store_true",
                   help="fail on violations that are Kafka's own behaviour too (rules K1-K4)")


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress on stderr (a long command shows it by default)."""
    p.add_argument("--quiet", action="store_true",
                   help="show no progress on stderr (live on a terminal, a line every few "
                        "seconds elsewhere); the result on stdout is the same")


def add_versions_option(p: argparse.ArgumentParser) -> None:
    """``--versions A..B``: every ``java@V:`` release of the Maven repository in a range."""
    p.add_argument("--versions", default=None, metavar="A..B",
                   help="also every java@V: of the Maven repository ($GROUPCHECK_MAVEN_REPO) "
                        "from A to B inclusive, oldest first (A.. or ..B: open ended)")


def with_releases(named: list[str], versions: str | None, env: Environment,
                  missing: str) -> list[str]:
    """The targets ``named``, then the releases of ``--versions`` not among them;
    `UsageError` ``missing`` when that leaves none."""
    targets = list(named)
    if versions:
        targets += [t for t in engines.parse_versions(versions, env.settings.maven_repo)
                    if t not in targets]
    if not targets:
        raise UsageError(missing)
    return targets
