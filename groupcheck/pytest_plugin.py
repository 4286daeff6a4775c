"""pytest plugin: ``pytest --groupcheck-target python:mypkg:MyAssignor`` checks an assignor
inside its own project's test run.

Each assignor a target answers (every one by default, as ``groupcheck check`` runs them;
``--groupcheck-assignor`` narrows) gets one test item per engine of ``check`` it supports
(``codec``, ``prove``, ``vectors`` with ``--groupcheck-parity``, ``scenarios`` — the audit's
seeded random group stories, large groups included —, ``fuzz`` and ``scale``), named
``groupcheck[<target>][<assignor>]::<engine>``; an assignor the target does not support is
one skipped item with the target's error. An item fails with the violation, the
counterexample (the story of events for the state machine, the request and answer for the
prover) and the path of the saved file; its figures (the scale engine's cost, the
stickiness gap) are its report section. The ``scale`` item is skipped, with the reason,
when its share of the budget reached no shape from which I13 can be judged.

Options: ``--groupcheck-target T`` (repeatable), ``--groupcheck-assignor A`` (repeatable or
comma-separated), ``--groupcheck-budget SECONDS`` (per assignor, default 30, shared as
``check`` shares it: ``SCALE_SHARE`` for the scale engine, of the rest the scenarios engine
30 % and the state machine 70 %), ``--groupcheck-scope S`` (the prover's scope),
``--groupcheck-parity``, ``--groupcheck-failures DIR`` (default ``groupcheck-failures``),
``--groupcheck-seed N``. Registered through the ``pytest11`` entry point ``groupcheck``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from .cli.shared import Environment, folder_problem, positive_seconds
from .engines import (
    SCALE_SHARE,
    SCENARIOS_SHARE,
    SMALL_SCOPE,
    EngineResult,
    figure_lines,
    run_codec,
    run_fuzz,
    run_prove,
    run_scale,
    run_stories,
    run_vectors,
)
from .properties.scope.space import Scope
from .properties.user_data_rules import LAYOUTS
from .targets.offers import close_all, expand, parse_assignors
from .targets.target import Target, TargetError

__all__ = ["GroupcheckFailure", "GroupcheckItem", "pytest_addoption",
           "pytest_collection_modifyitems", "pytest_configure"]

ENGINE_ORDER = ("codec", "prove", "vectors", "scenarios", "fuzz", "scale")
UNSUPPORTED = "unsupported"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("groupcheck", "check a Kafka consumer-group assignor")
    group.addoption("--groupcheck-target", action="append", default=[], metavar="TARGET",
                    help="python:pkg.module:attr, builtin:<assignor>, kafka-python:<assignor>, "
                         "jsonl:<command>, java:[CLASSPATH] (repeatable)")
    group.addoption("--groupcheck-assignor", action="append", default=[], metavar="ASSIGNOR",
                    help="only these assignors of the targets (repeatable or comma-separated)")
    group.addoption("--groupcheck-budget", type=positive_seconds, default=30.0,
                    metavar="SECONDS",
                    help=f"seconds per assignor: {SCALE_SHARE:.0%} for the scale engine, the "
                         "rest for the searching engines, the scenarios engine and the state "
                         "machine (default 30)")
    group.addoption("--groupcheck-scope", default=None, metavar="SCOPE",
                    help="the scope prover's scope, e.g. members=2,topics=2,partitions=2")
    group.addoption("--groupcheck-parity", action="store_true",
                    help="also compare with the golden vectors")
    group.addoption("--groupcheck-failures", default="groupcheck-failures", metavar="DIR")
    group.addoption("--groupcheck-seed", type=int, default=0)


def pytest_configure(config: pytest.Config) -> None:
    """Bad options stop the session before any item runs (a bad scope would otherwise fail
    one item with a traceback, a result folder that is a file lose every finding)."""
    opts = config.option
    if not getattr(opts, "groupcheck_target", None):
        return
    if opts.groupcheck_scope:
        try:
            Scope.parse(opts.groupcheck_scope)
        except ValueError as exc:
            raise pytest.UsageError(f"--groupcheck-scope: {exc}") from None
    problem = folder_problem(opts.groupcheck_failures, "--groupcheck-failures")
    if problem:
        raise pytest.UsageError(problem)


class GroupcheckFailure(Exception):
    """One engine found a violation."""


class GroupcheckItem(pytest.Item):
    def __init__(self, *, target: str, assignor: str, engine: str, error: str = "",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_name = target
        self.assignor = assignor
        self.engine = engine
        self.error = error

    def _resolve(self, env: Environment) -> Target:
        try:
            offers = expand(self.target_name, [self.assignor] if self.assignor else None,
                            settings=env.settings)
        except TargetError as exc:
            raise GroupcheckFailure(f"cannot load {self.target_name} ({exc})") from None
        target = offers[0].target
        assert target is not None
        return target

    def _run(self, target: Target, env: Environment) -> EngineResult:
        opts = self.config.option
        failures = opts.groupcheck_failures
        budget = opts.groupcheck_budget * (1 - SCALE_SHARE)  # the searching engines'
        if self.engine == "scale":
            return run_scale(target, opts.groupcheck_budget * SCALE_SHARE, failures)
        if self.engine == "fuzz":
            return run_fuzz(target, budget * (1 - SCENARIOS_SHARE), failures,
                            seed=opts.groupcheck_seed)
        if self.engine == "scenarios":
            return run_stories(target, budget * SCENARIOS_SHARE, failures,
                               opts.groupcheck_seed)
        if self.engine == "prove":
            return run_prove(target, opts.groupcheck_scope or SMALL_SCOPE, failures,
                             workers=1)
        if self.engine == "vectors":
            return run_vectors(target, failures, vectors=env.vectors)
        return run_codec(target, failures)

    def runtest(self) -> None:
        if self.engine == UNSUPPORTED:
            pytest.skip(f"{self.target_name} does not support {self.assignor}: {self.error}")
        env = Environment.read(os.environ)  # the plugin's edge, as the command line's
        target = self._resolve(env)
        try:
            result = self._run(target, env)
        finally:
            target.close()
        if result.skipped:
            pytest.skip(result.skipped)
        figures = figure_lines(result.figures)
        if figures:
            self.add_report_section("call", "groupcheck figures", "\n".join(figures))
        if result.findings:
            lines = [f"groupcheck: {target.name} [{target.assignor}] violates "
                     f"{', '.join(sorted(result.findings))} ({self.engine}, {result.runs} runs)"]
            for finding in result.findings.values():
                lines.append(f"\n{finding.violation}")
                if finding.detail:
                    lines.append(f"counterexample:\n{finding.detail}")
                if finding.file:
                    lines.append(f"saved: {finding.file}")
            raise GroupcheckFailure("\n".join(lines))
        if self.engine == "scale" and not result.judged["I13"]:
            why = result.why_not("I13").replace("--budget", "--groupcheck-budget")
            pytest.skip(f"I13 not judged: {why}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, GroupcheckFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int, str]:
        return "groupcheck", 0, self.name


def _items(target: str, assignors: list[str], parity: bool) -> list[tuple[str, str, str]]:
    """(assignor, engine, error) per item: every engine each supported assignor has, one
    item for each one not supported; a target that cannot load gets one item that fails
    with the reason."""
    env = Environment.read(os.environ)
    try:
        offers = expand(target, assignors or None, refused_ok=True, settings=env.settings)
    except TargetError:
        return [(",".join(assignors), "fuzz", "")]  # fails at run time with the reason
    out: list[tuple[str, str, str]] = []
    try:
        for offer in offers:
            if offer.target is None:
                out.append((offer.label, UNSUPPORTED, offer.error or ""))
                continue
            engines = set(offer.target.engines())
            if offer.target.user_data is not None and offer.target.assignor in LAYOUTS:
                engines.add("codec")
            if offer.target.assign is not None:
                engines |= {"scenarios", "scale"}
            if parity and offer.target.assign is not None:
                engines.add("vectors")
            out += [(offer.label, e, "") for e in ENGINE_ORDER if e in engines]
    finally:
        close_all(offers)
    return out


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    wanted = parse_assignors(config.getoption("groupcheck_assignor"))
    for target in config.getoption("groupcheck_target"):
        for assignor, engine, error in _items(target, wanted,
                                              config.getoption("groupcheck_parity")):
            items.append(GroupcheckItem.from_parent(
                session, name=f"groupcheck[{target}][{assignor}]::{engine}", target=target,
                assignor=assignor, engine=engine, error=error))
