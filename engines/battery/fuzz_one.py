"""``groupcheck fuzz``'s run: the state machine on one assignor of a target, alone, with
the settings asked for; a violation is shrunk, saved as a replay file and told as a story."""

from __future__ import annotations

from ...model.fuzz import PROFILES, fuzz
from ...model.machine_config import MachineConfig
from ...model.replay import ReplayNotes, replay_events, save
from ...targets.target import Target
from ..errors import EngineInputError
from ..progress import Meter, ProgressFn, silent
from .fuzz import machine_config

__all__ = ["WIRE_SHRINK_SECONDS", "fuzz_one"]

WIRE_SHRINK_SECONDS = 240.0  # real clients replay in seconds: shrink within this


def fuzz_one(target: Target, *, saved_as: str, settings: str, max_examples: int | None,
             seed: int, failures: str, progress: ProgressFn = silent
             ) -> tuple[list[str], bool]:
    """Fuzz ``target`` (its replay files name it ``saved_as``, the target string given):
    the lines that tell what happened, and whether a violation was found; ``progress``
    hears of every example (its note: the events so far). A wire target runs the ``wire``
    settings where ``ci`` was asked for."""
    if target.group is None:
        return [f"{target.name} [{target.assignor}]: no group to drive (not a group "
                "target)"], False
    if settings not in PROFILES:
        raise EngineInputError(f"fuzz: unknown settings {settings!r}; expected one of "
                               f"{', '.join(PROFILES)}")
    config: MachineConfig = machine_config(target)
    wire = target.hints is not None and target.hints.wire
    chosen = "wire" if wire and settings == "ci" else settings
    meter = Meter(progress, "fuzz", f"{target.name} [{target.assignor}]")
    result = fuzz(target.group, config, profile=chosen, max_examples=max_examples,
                  seed_value=seed,
                  progress=lambda examples, events: meter.tick(examples,
                                                               note=f"{events:,} events"),
                  shrink_seconds=WIRE_SHRINK_SECONDS if wire else None)
    rate = result.steps / result.seconds if result.seconds else 0.0
    lines = [f"{target.name} [{target.assignor}]: {result.examples} examples, {result.steps} "
             f"events in {result.seconds:.1f}s ({rate:.0f} events/s), settings {chosen}, "
             f"seed {seed}"]
    if not result.failed:
        judged = ", ".join(f"{inv} {n:,}" for inv, n in sorted(result.stats.judged.items()))
        return [*lines, f"every invariant judged held (judgements: {judged})"], False
    extra: ReplayNotes = {"assignor": target.assignor}
    if target.profile:
        extra["clientProfile"] = target.profile.to_json()
    outcome = replay_events(target.group(), result.events, config.promises,
                            config.generations)  # a harness error here: nothing saved
    path = save(failures, saved_as, result.events, result.violations, seed, extra=extra)
    lines += [f"VIOLATION {result.violations[0]}",
              f"shrunk to {len(result.events)} events; the story:",
              "\n".join(outcome.story),
              f"replay file: {path}  (groupcheck replay {path})"]
    return lines, True
