"""pytest plugin: ``pytest --groupcheck-target python:mypkg:MyAssignor`` checks an assignor
inside its own project's test run.

Each target gets one test item per engine it supports (``fuzz``, ``prove``, ``codec``, and
``vectors`` with ``--groupcheck-parity``), named ``groupcheck[<target>]::<engine>``. An
item fails with the violation, the counterexample (the story of events for the state
machine, the request and answer for the prover) and the path of the saved file.

Options: ``--groupcheck-target T`` (repeatable), ``--groupcheck-budget SECONDS`` (for the
state machine, default 30), ``--groupcheck-scope S`` (the prover's scope),
``--groupcheck-parity``, ``--groupcheck-failures DIR`` (default ``groupcheck-failures``),
``--groupcheck-seed N``. Registered through the ``pytest11`` entry point ``groupcheck``.
"""

from __future__ import annotations

from typing import Any

import pytest

ENGINE_ORDER = ("codec", "prove", "vectors", "fuzz")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("groupcheck", "check a Kafka consumer-group assignor")
    group.addoption("--groupcheck-target", action="append", default=[], metavar="TARGET",
                    help="python:pkg.module:attr, builtin:<assignor>, kafka-python:<assignor>, "
                         "jsonl:<command>, java:[CLASSPATH] (repeatable)")
    group.addoption("--groupcheck-budget", type=float, default=30.0, metavar="SECONDS",
                    help="seconds for the state machine per target (default 30)")
    group.addoption("--groupcheck-scope", default=None, metavar="SCOPE",
                    help="the scope prover's scope, e.g. members=2,topics=2,partitions=2")
    group.addoption("--groupcheck-parity", action="store_true",
                    help="also compare with the golden vectors")
    group.addoption("--groupcheck-failures", default="groupcheck-failures", metavar="DIR")
    group.addoption("--groupcheck-seed", type=int, default=0)


class GroupcheckFailure(Exception):
    """One engine found a violation."""


class GroupcheckItem(pytest.Item):
    def __init__(self, *, target: str, engine: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_name = target
        self.engine = engine

    def runtest(self) -> None:
        from .battery import SMALL_SCOPE, run_codec, run_fuzz, run_prove, run_vectors
        from .targets.registry import TargetError, resolve

        opts = self.config.option
        try:
            target = resolve(self.target_name)
        except TargetError as exc:
            raise GroupcheckFailure(f"cannot load {self.target_name}: {exc}") from None
        failures = opts.groupcheck_failures
        try:
            if self.engine == "fuzz":
                result = run_fuzz(target, opts.groupcheck_budget, failures,
                                  seed=opts.groupcheck_seed)
            elif self.engine == "prove":
                result = run_prove(target, opts.groupcheck_scope or SMALL_SCOPE, failures,
                                   workers=1)
            elif self.engine == "vectors":
                result = run_vectors(target, failures)
            else:
                result = run_codec(target, failures)
        finally:
            target.close()
        if result.skipped:
            pytest.skip(result.skipped)
        if result.findings:
            lines = [f"groupcheck: {self.target_name} violates "
                     f"{', '.join(sorted(result.findings))} ({self.engine}, {result.runs} runs)"]
            for finding in result.findings.values():
                lines.append(f"\n{finding.violation}")
                if finding.detail:
                    lines.append(f"counterexample:\n{finding.detail}")
                if finding.file:
                    lines.append(f"saved: {finding.file}")
            raise GroupcheckFailure("\n".join(lines))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, GroupcheckFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int, str]:
        return "groupcheck", 0, f"groupcheck[{self.target_name}]::{self.engine}"


def _engines(target: str, parity: bool) -> list[str]:
    from .targets.registry import TargetError, resolve

    try:
        resolved = resolve(target)
    except TargetError:
        return ["fuzz"]  # fails at run time with the reason
    try:
        engines = set(resolved.engines())
    finally:
        resolved.close()
    if parity and resolved.assign is not None:
        engines.add("vectors")
    return [e for e in ENGINE_ORDER if e in engines]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    targets = config.getoption("groupcheck_target")
    for target in targets:
        for engine in _engines(target, config.getoption("groupcheck_parity")):
            items.append(GroupcheckItem.from_parent(
                session, name=f"groupcheck[{target}]::{engine}", target=target, engine=engine))
