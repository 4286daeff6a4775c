"""Audit stories from saved files: played again (``replay``) and shrunk (``shrink``).

A story is what `model.saved_files` calls one: a bare spec, a wrapped spec, or a
counterexample of the audit or of ``check``'s scenarios engine (``groupcheck-audit-chain/1``).
Its target is any registry target with an assign function (``builtin:``, ``mutant:``,
``python:``, ``kafka-python:``, ``jsonl:``, ``java:``) or an audit ``pyfn:`` target; by
default the one the file names. A story is shrunk by delta debugging (`audit.story_shrink`) while
the same invariant breaks the same way (its own violation, or the same Kafka rule's) on the
target; the result is again a ``groupcheck-audit-chain/1`` record, which every command that
plays a story reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ...audit.chain import ChainFile, replay_record, run_chain
from ...audit.picture import chain_timeline, html_page, svg
from ...audit.story_shrink import Failure, ShrinkError, shrink_story
from ...audit.targets import AuditTarget, AuditTargetError, resolve_plugin
from ...model.reproduced import reproduces
from ...model.saved_files import CHAIN_FORMAT, SavedFile
from ...model.story_shapes import StorySpec
from ...properties.deviations import EVIDENCE
from ...properties.invariants import ROWS, by_id
from ...properties.saved_json import steady_text
from ...targets.registry import NO_SETTINGS
from ...targets.settings import Settings
from ..battery.scenarios import describe, story_target
from ..errors import EngineInputError
from ..progress import Meter, ProgressFn, silent
from ..resolving import resolved

__all__ = ["StoryReplay", "failure_of", "open_story_target", "replay_story", "rounds_text",
           "shrink_story_file", "write_record"]

Closer = Callable[[], None]


def open_story_target(name: str, assignor: str | None = None,
                      settings: Settings = NO_SETTINGS) -> tuple[AuditTarget, Closer]:
    """An `AuditTarget` for ``name`` (a ``jsonl:`` or ``java:`` target runs ``assignor``)
    and the function that closes it."""
    if name.startswith("pyfn:"):
        try:
            return resolve_plugin(name), lambda: None
        except AuditTargetError as exc:
            raise EngineInputError(str(exc)) from None
    target = resolved(name, assignor, settings=settings)
    if target.assign is None or target.assignor is None:
        target.close()
        raise EngineInputError(f"{name} has no assign function: a story needs one")
    return story_target(target), target.close


def story_and_target(saved: SavedFile, target: str | None, assignor: str | None,
                     settings: Settings = NO_SETTINGS
                     ) -> tuple[StorySpec, tuple[AuditTarget, Closer]]:
    """The file's story and the target to run it on (``target``, else the file's; a
    ``jsonl:`` target runs the assignor the file's requests name)."""
    assert saved.spec is not None
    name = target or saved.target
    if not name:
        raise EngineInputError(f"{saved.path} names no target: give --target")
    return saved.spec, open_story_target(name, assignor or saved.assignor, settings)


def failure_of(saved: SavedFile, invariant: str | None) -> Failure | None:
    """The failure to keep: ``invariant``, else the one the file records (with its Kafka
    rule if it was labelled), else None (the first the story shows)."""
    recorded = saved.recorded_invariant if saved.data.get("format") == CHAIN_FORMAT else None
    inv = invariant or recorded
    if inv is None or inv == "none":
        return None
    inv = by_id(inv).id if inv in ROWS else inv
    labels = saved.data.get("inherited_from_kafka")
    rule = labels.get(inv) if isinstance(labels, dict) and not invariant else None
    return Failure(inv, rule if isinstance(rule, str) else None)


def _reference(name: str | None, assignor: str, failure: Failure | None,
               settings: Settings) -> tuple[AuditTarget | None, Closer]:
    """The ``--reference`` story target running ``assignor`` (``java:`` and ``builtin:``
    take it), or None; a failure labelled from evidence needs one."""
    if name is None:
        if failure is not None and failure.rule == EVIDENCE:
            raise EngineInputError("shrink: the file's violation was labelled from a "
                                   "reference's evidence; give --reference (e.g. java:)")
        return None, lambda: None
    if name in ("builtin", "builtin:"):
        name = f"builtin:{assignor}"
    return open_story_target(name, assignor, settings)


def shrink_story_file(saved: SavedFile, *, target: str | None, assignor: str | None,
                      invariant: str | None, seconds: float, reference: str | None,
                      settings: Settings = NO_SETTINGS, progress: ProgressFn = silent
                      ) -> tuple[ChainFile, list[str]]:
    """The story shrunk on the target: its record and the lines that tell the result;
    ``progress`` hears of every run."""
    spec, (story, close) = story_and_target(saved, target, assignor, settings)
    failure = failure_of(saved, invariant)
    try:
        ref, close_reference = _reference(reference, story.assignor, failure, settings)
    except EngineInputError:
        close()
        raise
    try:
        result = shrink_story(spec, story, failure, seconds=seconds, reference=ref,
                              on_run=Meter(progress, "shrink", story.name, seconds).tick)
    except ShrinkError as exc:
        raise EngineInputError(f"shrink: {exc}") from None
    finally:
        close()
        close_reference()
    record = replay_record(story, result.spec, result.chain, spec.get("scenario", -1),
                           spec.get("seed"))
    record["invariant"] = result.failure.invariant
    record["shrink"] = result.summary()
    b, a = result.before, result.after
    lines = [f"shrunk {result.failure.text()} on {story.name} from {b['members']} members, "
             f"{b['partitions']} partitions, {b['rounds']} rebalance(s) -> {a['members']} "
             f"members, {a['partitions']} partitions, {a['rounds']} rebalance(s) "
             f"({result.runs} runs, {result.seconds:.1f}s, "
             f"{'1-minimal' if result.complete else 'stopped by --budget'})",
             describe(result.spec),
             result.chain.violations[0] if result.chain.violations else ""]
    return record, lines


@dataclass
class StoryReplay:
    """A story played once: its record, what to print, its picture, and the verdict (the
    saved violation ``reproduced``, a ``different`` one, or none)."""

    record: ChainFile
    lines: list[str]
    page: str
    reproduced: bool
    different: bool = False


def replay_story(saved: SavedFile, *, target: str | None, assignor: str | None,
                 settings: Settings = NO_SETTINGS) -> StoryReplay:
    """Play the story once: it reproduces when the recorded invariant (any, for a bare
    story) breaks again the way the file saved it (`model.reproduced`)."""
    spec, (story, close) = story_and_target(saved, target, assignor, settings)
    try:
        chain = run_chain(story, spec)
    finally:
        close()
    record = replay_record(story, spec, chain, spec.get("scenario", -1), spec.get("seed"))
    wanted = failure_of(saved, None)
    if wanted is not None:
        record["invariant"] = wanted.invariant
    lines = [f"replaying {saved.path} on {story.name}\n{describe(spec)}", *rounds_text(record)]
    broken = chain.violated if wanted is None else chain.verdicts.get(wanted.invariant) == 1
    seen = chain.violations if chain.violated else []
    same = reproduces(saved.recorded_violations, seen, saved.names) if broken else None
    if same is not None:
        lines.append(f"reproduced: {same}")
    elif seen:
        lines.append(f"not reproduced: the saved violation was "
                     f"{saved.recorded_violations[0]}; this replay shows a different one: "
                     f"{seen[0]}")
    else:
        lines.append("not reproduced: every invariant held")
    page = html_page(f"groupcheck replay {saved.path}", [svg(chain_timeline(record))],
                     describe(spec))
    return StoryReplay(record, lines, page, same is not None, same is None and bool(seen))


def rounds_text(record: ChainFile) -> list[str]:
    """One line per assign call: who got what, and what nobody got."""
    lines = []
    rebalance = 0
    for request, response, follow in zip(record["requests"], record["responses"],
                                         record["follow_ups"], strict=True):
        rebalance += follow == 0
        label = f"R{rebalance}" + (f" follow-up {follow}" if follow else "")
        if "error" in response:
            lines.append(f"  {label}: {response['error']}")
            continue
        given = response.get("assignment", {})
        held = " | ".join(f"{m}: " + (" ".join(f"{t}-{p}" for t, p in ps) or "-")
                          for m, ps in given.items())
        owned = {(t, p) for ps in given.values() for t, p in ps}
        wanted = {(t, p) for t, n in request["partitions"].items() for p in range(n)
                  if any(t in v["topics"] for v in request["members"].values())}
        left = sorted(wanted - owned)
        lines.append(f"  {label} (gen {response.get('generation')}): {held}"
                     + (f" | nobody: {' '.join(f'{t}-{p}' for t, p in left)}" if left
                        else ""))
    return lines


def write_record(path: Path, record: Mapping[str, object]) -> Path:
    """Write a shrunk record (as JSON, one object) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(steady_text(record), encoding="utf-8")
    return path
