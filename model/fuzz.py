"""Running the state machine: settings profiles, seeding, progress, and the shrunk result.

`fuzz` runs Hypothesis over a target factory and returns either nothing (every example
held) or the shrunk failure as events plus violations, ready to be saved as a replay file.
The same seed gives the same examples. With a ``deadline`` the run ends at the first event
after it, with the examples played so far (``FuzzResult.stopped``; the one cut short
counts as begun, not judged whole).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import FlakyFailure
from hypothesis.stateful import run_state_machine_as_test

from ..properties.group import GroupTarget
from .event_shrink import invariant_of, minimize
from .events import Event
from .machine import MachineConfig, ViolationFound, make_machine
from .stats import Stats

__all__ = ["PROFILES", "FuzzResult", "fuzz"]


class _OutOfTime(KeyboardInterrupt):
    """Raised where the next example would start after the deadline. An interrupt, as
    Hypothesis sees it: it lets it through at once, records nothing of the example and
    shrinks nothing; `fuzz` catches it before it leaves."""

# Some Hypothesis releases ship this function without annotations: one typed name for all.
_run_machine: Callable[..., None] = run_state_machine_as_test

#: name -> (examples, steps per example)
PROFILES: dict[str, tuple[int, int]] = {"ci": (200, 30), "dev": (600, 40), "deep": (2500, 50),
                                        "wire": (5, 14)}  # real clients: seconds per event


@contextmanager
def process_independent_draws() -> Iterator[None]:
    """Hypothesis sometimes draws a "local constant" read from the source of every local
    module imported so far, and the state machine's swarm flags draw from 0-254: a run's
    examples depended on what the process had imported before it. The pool stays empty
    while this holds."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # a Hypothesis without local constants
        yield
        return
    pool = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if pool is None or cache is None:
        yield
        return
    empty = Constants()
    cache.cache.clear()  # entries filtered from the pool so far
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = pool
        cache.cache.clear()


@dataclass
class FuzzResult:
    examples: int
    seconds: float
    steps: int
    violations: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    stopped: bool = False  # the deadline came before the examples asked for were played

    @property
    def failed(self) -> bool:
        return bool(self.violations)


def fuzz(target_factory: Callable[[], GroupTarget], config: MachineConfig, *,
         profile: str = "ci", max_examples: int | None = None, seed_value: int = 0,
         progress: Callable[[int, int], None] | None = None,
         shrink_seconds: float | None = None, stats: Stats | None = None,
         deadline: float | None = None) -> FuzzResult:
    """Run the machine; ``progress(examples, steps)`` is called as examples finish.
    ``shrink_seconds`` bounds the shrinking for slow targets: Hypothesis's own shrink phase
    is then skipped and the delta-debugging pass stops when the time is up. ``stats``
    (default: a fresh one, returned in the result) collects judgements and figures.
    ``deadline`` (``time.perf_counter``): no event runs after it."""
    stats = Stats() if stats is None else stats
    examples, steps = PROFILES[profile]
    if max_examples is not None:
        examples = max_examples
    counters = {"examples": 0, "steps": 0}

    def on_time() -> None:
        if deadline is not None and time.perf_counter() >= deadline:
            raise _OutOfTime

    def counted_factory() -> GroupTarget:
        on_time()
        counters["examples"] += 1
        if progress is not None:
            progress(counters["examples"], counters["steps"])
        return target_factory()

    def count_event() -> None:
        counters["steps"] += 1
        on_time()

    machine = make_machine(counted_factory, config, on_event=count_event, stats=stats)
    seeded = seed(seed_value)(machine)
    chosen = settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                      database=None, print_blob=False, report_multiple_bugs=False,
                      phases=(Phase.generate, Phase.target) if shrink_seconds is not None
                      else (Phase.generate, Phase.target, Phase.shrink),
                      suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    started = time.perf_counter()
    try:
        try:
            with process_independent_draws():
                _run_machine(seeded, settings=chosen)
        except FlakyFailure as flaky:  # a real client did not fail the same way twice
            found = [e for e in flaky.exceptions if isinstance(e, ViolationFound)]
            if not found:
                raise
            raise found[0] from None
    except _OutOfTime:
        return FuzzResult(counters["examples"], time.perf_counter() - started,
                          counters["steps"], stats=stats, stopped=True)
    except ViolationFound as failure:
        if deadline is not None:  # the shrink ends by the deadline too
            shrink_seconds = max(min(shrink_seconds if shrink_seconds is not None
                                     else float("inf"), deadline - time.perf_counter()), 0.0)
        events, violations = minimize(failure.events, target_factory,
                                      invariant_of(failure.violations[0]),
                                      seconds=shrink_seconds, promises=config.promises,
                                      generations=config.generations)
        return FuzzResult(counters["examples"], time.perf_counter() - started,
                          counters["steps"], violations or failure.violations,
                          events if violations else failure.events, stats)
    return FuzzResult(counters["examples"], time.perf_counter() - started, counters["steps"],
                      stats=stats)
