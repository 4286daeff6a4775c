"""Running the state machine: settings profiles, seeding, progress, and the shrunk result.

`fuzz` runs Hypothesis over a target factory and returns either nothing (every example
held) or the shrunk failure as events plus violations, ready to be saved as a replay file.
The same seed gives the same examples. With a ``deadline`` the run ends at the first event
after it, with the examples played so far (``FuzzResult.stopped``; the one cut short
counts as begun, not judged whole). A target's `HarnessError` ends the run as it is:
neither judged nor shrunk. Real clients do not always fail, or let the machine draw, the same
way twice: when Hypothesis's replay of a failing example goes otherwise (`Flaky`), the
failure the example met first is the run's; an error of Hypothesis's own is a harness error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, seed, settings
from hypothesis.errors import Flaky, HypothesisException
from hypothesis.stateful import run_state_machine_as_test

from ..properties.group import GroupTarget
from ..properties.harness import HarnessError
from .event_shrink import invariant_of, minimize
from .events import DomainEvent
from .machine import HarnessAbort, MachineConfig, ViolationFound, make_machine
from .stats import Stats

__all__ = ["PROFILES", "FuzzResult", "first_failure", "fuzz"]


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


def first_failure(flaky: Flaky, met: list[Exception]) -> Exception:
    """What a run whose failing example did not replay alike (real clients) failed on: the
    violation Hypothesis saw, else the first one an example met, else the first failure of
    the target; a run that met none failed in Hypothesis, a `HarnessError`."""
    seen = [e for e in getattr(flaky, "exceptions", ()) if isinstance(e, ViolationFound)]
    found = seen or [e for e in met if isinstance(e, ViolationFound)] or met
    if found:
        return found[0]
    return HarnessError(f"hypothesis: {type(flaky).__name__}: {str(flaky)[:300]}",
                        thread="hypothesis")


@dataclass
class FuzzResult:
    examples: int
    seconds: float
    steps: int
    violations: list[str] = field(default_factory=list)
    events: list[DomainEvent] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    #: invariant → the events of the first example where Kafka's own behaviour broke it
    inherited_events: dict[str, list[DomainEvent]] = field(default_factory=dict)
    stopped: bool = False  # the deadline came before the examples asked for were played

    @property
    def failed(self) -> bool:
        return bool(self.violations)


def fuzz(target_factory: Callable[[], GroupTarget], config: MachineConfig, *,
         profile: str = "ci", max_examples: int | None = None, seed_value: int = 0,
         progress: Callable[[int, int], None] | None = None,
         shrink_seconds: float | None = None, stats: Stats | None = None,
         inherited: dict[str, list[DomainEvent]] | None = None,
         deadline: float | None = None) -> FuzzResult:
    """Run the machine; ``progress(examples, steps)`` is called as examples finish.
    ``shrink_seconds`` bounds the shrinking for slow targets: Hypothesis's own shrink phase
    is then skipped and the delta-debugging pass stops when the time is up. ``stats``
    (default: a fresh one, returned in the result) collects judgements and figures, and
    ``inherited`` (likewise) the events of the first example where Kafka's own behaviour
    broke each invariant. ``deadline`` (``time.perf_counter``): no event runs after it."""
    stats = Stats() if stats is None else stats
    inherited = {} if inherited is None else inherited
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

    met: list[Exception] = []
    machine = make_machine(counted_factory, config, on_event=count_event, stats=stats,
                           inherited=inherited, met=met)
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
        except Flaky as flaky:  # a real client did not fail, or draw, the same way twice
            failure = first_failure(flaky, met)
            raise failure from flaky if isinstance(failure, HarnessError) else None
        except HarnessAbort as abort:  # the harness failed: no verdict, nothing shrunk
            raise abort.error  # noqa: B904 - the error carries its own cause
        except HypothesisException as exc:  # Hypothesis's own trouble is no client's
            raise HarnessError(f"hypothesis: {type(exc).__name__}: {exc}",
                               thread="hypothesis") from exc
    except _OutOfTime:
        return FuzzResult(counters["examples"], time.perf_counter() - started,
                          counters["steps"], stats=stats, inherited_events=inherited,
                          stopped=True)
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
                          events if violations else failure.events, stats, inherited)
    return FuzzResult(counters["examples"], time.perf_counter() - started, counters["steps"],
                      stats=stats, inherited_events=inherited)
