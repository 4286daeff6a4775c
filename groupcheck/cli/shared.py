"""What every command shares: its errors, the checks of option values, the common options
(target, assignor, timeout, failures, broker, reference, jobs, json, out), the old spellings
kept as aliases, and the environment, read once.

A command raises `UsageError` for bad arguments or input; `main` prints its first line and
exits 2. The engines raise their own input errors (`engines.EngineInputError`) and the
targets theirs (`TargetError`): `main` reports those the same way. argparse hands each
numeric option's text to its ``type``; a value out of range is a usage error before
anything runs. Seconds must be finite (``float`` accepts ``nan`` and ``inf``, which would make
a budget never end or never start); a folder to write results into is checked before the
run that would write into it (`folder_problem`).

One vocabulary: ``--target`` names a target wherever one is named, ``--out DIR`` is always a
folder, ``--jobs`` is the process count, ``--json`` prints the result as JSON. An old
spelling (a positional target, ``--workers``, an ``--out`` file) keeps working and says so in
one line on stderr (`deprecated`). An option given where it does not apply is a usage error
(`refuse`), never silently ignored. Each command's ``--target`` help lists exactly the kinds
it accepts (`target_help`, from `TARGET_SYNTAX`).

`Environment` is everything groupcheck reads from ``os.environ``: the command line reads it
once, in `main`, and every command passes its parts down as parameters.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from .. import engines
from ..engines import EngineInputError
from ..targets.settings import Settings, SettingsError
from ..targets.target import TargetError
from ..targets.wire.backends.factory import BACKENDS

__all__ = ["ASSIGN_KINDS", "ASSIGNOR_HELP", "COMMON_EXITS", "DEFAULT_BUDGET", "DEFAULT_FAILURES",
           "GROUP_KINDS", "NO_ENVIRONMENT", "TARGET_SYNTAX", "TIMEOUT_HELP", "Deprecated",
           "Environment", "Parser", "UsageError", "add_assignor_option", "add_broker_option",
           "add_failures_option", "add_jobs_option", "add_json_option", "add_quiet_option",
           "add_reference_option",
           "add_release_options", "add_seed_option", "add_strict_option", "add_target_option",
           "add_timeout_option", "command_parser", "deprecated", "exits_epilog", "folder_problem",
           "given", "input_error", "int_at_least", "int_between", "out_file", "positive_seconds",
           "positional_targets", "refuse", "releases_of", "seconds_or_zero", "target_help"]

DEFAULT_FAILURES = "groupcheck-failures"
DEFAULT_BUDGET = 120.0  # seconds of check and diff
ASSIGNOR_HELP = ("which assignors (repeatable or comma-separated; default: every assignor the "
                 "target answers; for python:pkg.module an attribute or a name)")
TIMEOUT_HELP = ("seconds per request for a jsonl: or java: target before it is a TIMEOUT "
                "(default 10, or $GROUPCHECK_JSONL_TIMEOUT)")


class UsageError(Exception):
    """Bad arguments or input: reported as one line, exit code 2."""


#: what the exit codes every command shares mean (a command's own 0 and 1 come first)
COMMON_EXITS = (
    (2, "usage or input error, or something the run needs is missing: one line on stderr"),
    (3, "groupcheck's own error (not a finding): one line on stderr naming the file that "
        "holds the traceback"),
    (130, "interrupted (Ctrl-C): one line on stderr saying what had run"),
    (141, "standard output closed by its reader (| head): nothing said"))


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are `UsageError` (one line, exit 2), not exits."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def exits_epilog(exits: Sequence[tuple[int, str]]) -> str:
    """The exit codes of a command's ``--help``."""
    return "exit codes:\n" + "\n".join(f"  {code:<4} {text}" for code, text in exits)


def command_parser(sub: Any, name: str, help: str, exits: Sequence[tuple[int, str]],
                   ) -> argparse.ArgumentParser:
    """The parser of command ``name``: its one-line ``help``, its own exit codes ``exits``
    (0 and 1, and more) and those every command shares (`COMMON_EXITS`) in its ``--help``
    epilog and as its default ``exit_codes``; it knows itself as ``args.parser`` (`given`)."""
    codes = (*exits, *COMMON_EXITS)
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=help, epilog=exits_epilog(codes),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(parser=parser, exit_codes=codes)
    return parser


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


# --- target kinds ------------------------------------------------------------------------

#: how each kind of target string is written (the kinds of ``targets.registry``: a test holds
#: them equal)
TARGET_SYNTAX: dict[str, str] = {
    "builtin": "builtin:<assignor>", "mutant": "mutant:<name>",
    "python": "python:pkg.module[:attr]", "kafka-python": "kafka-python:<assignor>",
    "aiokafka": "aiokafka:<assignor>", "jsonl": "jsonl:<command>",
    "java": "java:[CLASSPATH], java@<release>:",
    "wire": "wire:<client>:<assignor>[:adversarial], wire:mixed:<a>+<b>...:<assignor>, "
            "wire:cmd=<command>:<assignor>",
    "librdkafka": "librdkafka:<assignor>[:adversarial]"}
#: kinds whose targets have an assign function (asked one request at a time)
ASSIGN_KINDS = ("builtin", "mutant", "python", "kafka-python", "aiokafka", "jsonl", "java")
#: kinds whose targets run a group (every kind: wire: and librdkafka: only a group)
GROUP_KINDS = (*ASSIGN_KINDS, "wire", "librdkafka")


def target_help(kinds: Sequence[str], lead: str = "the target", tail: str = "") -> str:
    """``--target``'s help: ``lead``, then exactly the ``kinds`` a command accepts."""
    return f"{lead}: {', '.join(TARGET_SYNTAX[k] for k in kinds)}{tail}"


# --- old spellings and options that do not apply ------------------------------------------


def deprecated(old: str, new: str) -> None:
    """One line on stderr: ``old`` still works, ``new`` is its spelling now."""
    print(f"groupcheck: {old} is deprecated; use {new}", file=sys.stderr)


class Deprecated(argparse.Action):
    """A hidden old spelling of an option (``--workers`` for ``--jobs``): stores its value
    under the new option's name and says so (`deprecated`)."""

    def __init__(self, option_strings: list[str], dest: str, *, new: str,
                 **kwargs: object) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        deprecated(option_string or self.option_strings[0], self.new)
        setattr(namespace, self.dest, values)


def given(args: argparse.Namespace, dest: str) -> bool:
    """Whether an option was set away from its default on the command line."""
    parser: argparse.ArgumentParser = args.parser
    return bool(getattr(args, dest) != parser.get_default(dest))


def refuse(args: argparse.Namespace, dests: Iterable[str], why: str) -> None:
    """`UsageError` when any option of ``dests`` was given: it does not apply (``why``)."""
    set_ = [f"--{d.replace('_', '-')}" for d in dests if given(args, d)]
    if set_:
        raise UsageError(f"{args.command}: {', '.join(set_)} "
                         f"{'does' if len(set_) == 1 else 'do'} not apply {why}")


def positional_targets(args: argparse.Namespace, usage: str) -> list[str]:
    """``--target`` values, then those given the old way (positional), said deprecated."""
    if args.targets:
        deprecated(f"{args.command} TARGET (positional)", usage)
    return [*(args.target or []), *args.targets]


def out_file(out: str, name: str) -> Path:
    """The file ``name`` in the folder ``--out`` (made if missing); a path that names a
    ``.json`` or ``.html`` file the old way (not an existing folder) is used as it is, said
    deprecated."""
    path = Path(out)
    if path.suffix in (".json", ".html") and not path.is_dir():
        deprecated(f"--out {out} (a file)", f"--out DIR (writes DIR/{name})")
        return path
    problem = folder_problem(out, "--out")
    if problem:
        raise UsageError(problem)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: {exc.strerror}") from None
    return path / name


# --- common options ----------------------------------------------------------------------


def add_target_option(p: argparse.ArgumentParser, help: str = target_help(GROUP_KINDS), *,
                      required: bool = True, repeat: bool = False) -> None:
    """``--target T``: what to check (once, or repeatable)."""
    if repeat:
        p.add_argument("--target", action="append", default=[], metavar="T", help=help)
    else:
        p.add_argument("--target", required=required, default=None, metavar="T", help=help)


def add_assignor_option(p: argparse.ArgumentParser, help: str = ASSIGNOR_HELP, *,
                        repeat: bool = True) -> None:
    """``--assignor``: which of a target's assignors (repeatable, comma lists)."""
    p.add_argument("--assignor", action="append" if repeat else "store", default=None,
                   metavar="A", help=help)


def add_timeout_option(p: argparse.ArgumentParser) -> None:
    """``--timeout``: a process target's time limit per request."""
    p.add_argument("--timeout", type=positive_seconds, default=None, metavar="S",
                   help=TIMEOUT_HELP)


def add_failures_option(p: argparse.ArgumentParser, help: str = "where counterexamples go"
                        ) -> None:
    """``--failures DIR``: where counterexample files are saved."""
    p.add_argument("--failures", default=DEFAULT_FAILURES, metavar="DIR",
                   help=f"{help} (default %(default)s)")


def add_broker_option(p: argparse.ArgumentParser) -> None:
    """``--broker``: the cluster the wire targets run on (over ``$GROUPCHECK_BROKER``)."""
    p.add_argument("--broker", choices=BACKENDS, default=None,
                   help="the cluster wire targets run on: groupcheck's own broker "
                        "(groupcheck, the default) or librdkafka's mock cluster (mock)")


def add_reference_option(p: argparse.ArgumentParser, help: str) -> None:
    """``--reference T``: a target whose identical answers label a violation its own."""
    p.add_argument("--reference", default=None, metavar="T", help=help)


def add_strict_option(p: argparse.ArgumentParser, help: str = "fail on violations that are "
                      "Kafka's own behaviour too (rules K1-K4)") -> None:
    """``--strict``: Kafka's own behaviour (rules K1-K4) fails the run too."""
    p.add_argument("--strict", action="store_true", help=help)


def add_seed_option(p: argparse.ArgumentParser, help: str = "the seed: the same seed "
                    "gives the same examples") -> None:
    """``--seed S``: what makes a random run repeat."""
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help=f"{help} (default %(default)s)")


def add_jobs_option(p: argparse.ArgumentParser, help: str, default: int | None) -> None:
    """``--jobs N``: the process count (``--workers``, its old spelling, hidden)."""
    p.add_argument("--jobs", type=int_at_least(1), default=default, metavar="N", help=help)
    p.add_argument("--workers", type=int_at_least(1), dest="jobs", action=Deprecated,
                   new="--jobs", help=argparse.SUPPRESS)


def add_json_option(p: argparse.ArgumentParser, result: str = "", *, help: str = "") -> None:
    """``--json``: the result as JSON on stdout instead of text: ``{"command", "exit",
    "lines", "result"}`` (`output.JsonEnvelope`) with the ``result`` said, or a shape of the
    command's own (``help``)."""
    p.add_argument("--json", action="store_true", help=help or (
        'print one JSON object instead of text: {"command", "exit", "lines" (the text '
        f'lines), "result": {result}}}'))


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    """``--quiet``: no progress on stderr (a long command shows it by default)."""
    p.add_argument("--quiet", action="store_true",
                   help="show no progress on stderr (live on a terminal, a line every few "
                        "seconds elsewhere); the result on stdout is the same")


def add_release_options(p: argparse.ArgumentParser, target: str) -> None:
    """What names the targets of a run over Kafka's releases (``matrix``, ``bisect``):
    ``--target`` (repeatable, in order), ``--versions A..B``, ``--assignor``, ``--timeout``."""
    p.add_argument("--target", action="append", default=[], metavar="T", help=target_help(
        GROUP_KINDS, target, "; repeatable, in order, before --versions' releases"))
    p.add_argument("--versions", default=None, metavar="A..B",
                   help="also every java@V: of the Maven repository ($GROUPCHECK_MAVEN_REPO) "
                        "from A to B inclusive, oldest first (A.. or ..B: open ended); with "
                        "a --target wire:java:<assignor> (no release), that target at each "
                        "release instead (wire:java@V:<assignor>)")
    add_timeout_option(p)


def releases_of(named: list[str], versions: str | None, env: Environment,
                missing: str) -> list[str]:
    """The targets ``named``, then the releases of ``--versions`` not among them;
    `UsageError` ``missing`` when that leaves none."""
    targets = engines.named_and_released(named, versions, env.settings.maven_repo)
    if not targets:
        raise UsageError(missing)
    return targets
