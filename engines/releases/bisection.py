"""Bisection: a saved counterexample played on every target of a list (Kafka's releases,
oldest first), and where it is present, absent, first seen and gone.

A counterexample is whatever a battery saved: a request file (the prover, the vectors,
the contract watch, a fuzz ``TIMEOUT``) replays through `saved.requests` on the target's
``assign``, as ``groupcheck replay`` and ``assign`` judge it; a state-machine replay file
(``groupcheck-replay/1``) replays its events on a fresh group of the target under the
target's promises (`model.replay`), a wire story on wire targets only (`wire_stories`); an
audit story replays through the chain driver (`audit.chain`), as ``groupcheck replay``
plays it. Other records (the codec's) are not replayable: they say so.

A version *shows* the counterexample when the replay breaks the invariant the file
records (any invariant when it records none). A target that cannot run it at all (it does
not answer the assignor, say) is ``n/a``: neither present nor absent. Over the versions in
order, its *windows* (`windows`): the maximal runs of versions where it is present, absent
or n/a, a present run after an absence named a regression; and, as before, *first seen in*
(the first version that shows it) and *gone in* (the first version after the last one that
shows it: none while the newest still does).

`bisect_many` replays many counterexamples with one resolved target per (version,
assignor), so a JVM starts once per release, not once per replay.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from ...audit.chain import run_chain
from ...model.replay import replay_events
from ...model.saved_files import SavedFile, SavedFileError
from ...model.saved_files import read as read_saved
from ...properties.harness import HarnessError
from ...targets.registry import NO_SETTINGS
from ...targets.settings import Settings
from ...targets.target import Target
from ..battery.fuzz import machine_config
from ..battery.golden import CodecCase, is_codec_record, replay_codec_record
from ..battery.results import invariant_id
from ..battery.scenarios import story_target
from ..errors import EngineInputError
from ..progress import Meter, ProgressFn, silent
from ..resolving import resolved, story_settings
from ..saved.requests import replay_request
from ..saved.stories import failure_of
from .windows import ABSENT, NA, PRESENT, ReleaseWindow, WindowJson, windows, windows_text
from .wire_stories import cannot_play

__all__ = ["Bisection", "BisectionJson", "CodecRecord", "VersionVerdict", "bisect_file",
           "bisect_many", "load_counterexample"]


@dataclass
class VersionVerdict:
    """One version's verdict on one counterexample: present, absent or n/a, and the
    violation (or why it could not run)."""

    target: str
    verdict: str
    text: str = ""


class VersionJson(TypedDict):
    target: str
    verdict: str
    text: str


class BisectionJson(TypedDict):
    """One counterexample over the versions: its windows (whether it came back after an
    absence), where it is present and absent, the first version that shows it and the first
    after the last that does, each version's verdict."""

    file: str
    invariant: str | None
    assignor: str | None
    error: str | None
    windows: list[WindowJson]
    regression: bool
    presentIn: list[str]
    absentIn: list[str]
    firstSeenIn: str | None
    goneIn: str | None
    versions: list[VersionJson]


@dataclass
class Bisection:
    """One counterexample over the versions (in their order)."""

    file: str
    invariant: str | None
    outcomes: list[VersionVerdict] = field(default_factory=list)
    error: str = ""  # why it could not be replayed at all
    assignor: str | None = None  # the assignor it was replayed with, where one was named

    def _with(self, verdict: str) -> list[str]:
        return [o.target for o in self.outcomes if o.verdict == verdict]

    @property
    def present_in(self) -> list[str]:
        return self._with(PRESENT)

    @property
    def absent_in(self) -> list[str]:
        return self._with(ABSENT)

    @property
    def first_seen(self) -> str | None:
        present = self.present_in
        return present[0] if present else None

    @property
    def gone_in(self) -> str | None:
        """The first judged version after the last one that shows it."""
        last = max((i for i, o in enumerate(self.outcomes) if o.verdict == PRESENT),
                   default=None)
        if last is None:
            return None
        return next((o.target for o in self.outcomes[last + 1:] if o.verdict == ABSENT),
                    None)

    @property
    def windows(self) -> list[ReleaseWindow]:
        """The maximal runs of versions with one verdict, in order (`windows.windows`)."""
        return windows([(o.target, o.verdict) for o in self.outcomes])

    @property
    def regression(self) -> bool:
        """Whether it comes back after an absence."""
        return any(w.regression for w in self.windows)

    def summary(self) -> str:
        if self.error:
            return f"not bisected: {self.error}"
        if not self.present_in and not self.absent_in:
            return f"played on no target ({windows_text(self.windows)}): see each one's reason"
        if not self.present_in:
            return (f"not reproduced by a replay on any target "
                    f"({windows_text(self.windows)}): the replay judges each saved "
                    "answer alone, the engine may have judged a chain")
        return (f"{windows_text(self.windows)}; first seen in {self.first_seen or 'none'}; "
                f"gone in {self.gone_in or 'none'}")

    def to_json(self) -> BisectionJson:
        return {"file": self.file, "invariant": self.invariant, "assignor": self.assignor,
                "error": self.error or None,
                "windows": [w.to_json() for w in self.windows],
                "regression": self.regression,
                "presentIn": self.present_in, "absentIn": self.absent_in,
                "firstSeenIn": self.first_seen, "goneIn": self.gone_in,
                "versions": [{"target": o.target, "verdict": o.verdict, "text": o.text}
                             for o in self.outcomes]}


def load_counterexample(path: str) -> Playable:
    """The saved file at ``path`` (`EngineInputError` when it is not a playable one)."""
    try:
        return _read(path)
    except SavedFileError as exc:
        raise EngineInputError(str(exc)) from None
    except OSError as exc:
        raise EngineInputError(f"cannot read {path}: {exc.strerror}") from None


def _shows(violations: Sequence[str], invariant: str | None) -> str | None:
    hits = [v for v in violations if invariant is None or invariant_id(v) == invariant]
    return hits[0] if hits else None


def _outcome(name: str, violations: Sequence[str], invariant: str | None) -> VersionVerdict:
    hit = _shows(violations, invariant)
    if hit is not None:
        return VersionVerdict(name, PRESENT, hit)
    other = f"; other: {violations[0]}" if violations else ""
    return VersionVerdict(name, ABSENT, f"{invariant or 'every invariant'} held{other}")


def _replay_requests(made: Target, saved: SavedFile, invariant: str | None) -> VersionVerdict:
    found: list[str] = []
    for request in saved.requests:
        _, violations = replay_request(made, request)
        found += violations
        if _shows(violations, invariant):
            break
    return _outcome(made.name, found, invariant)


def _replay_events(made: Target, saved: SavedFile, invariant: str | None) -> VersionVerdict:
    if made.group is None:
        return VersionVerdict(made.name, NA, "not a group target")
    promises = machine_config(made).promises if made.hints is not None else None
    result = replay_events(made.group(), saved.events, promises,
                           made.hints is None or made.hints.generations,
                           wanted=lambda seen: _shows(seen, invariant) is not None)
    return _outcome(made.name, result.violations, invariant)


@dataclass
class CodecRecord:
    """What the codec engine saves (an input and how it went wrong: I10 or I12), replayed
    by `battery.golden.replay_codec_record`."""

    data: CodecCase

    @property
    def recorded_invariant(self) -> str:
        return "I10" if self.data["op"] == "encode_subscription" else "I12"

    @property
    def assignor(self) -> str | None:
        named = self.data.get("assignor")
        return named if isinstance(named, str) else None


Playable = SavedFile | CodecRecord


def _read(path: str) -> Playable:
    """A saved file of any kind the engines play, or a codec record (`SavedFileError`
    when it is neither)."""
    try:
        return read_saved(path)
    except SavedFileError:
        with open(path, encoding="utf-8") as fh:
            try:
                body = json.load(fh)
            except ValueError:
                body = None
        if is_codec_record(body):
            return CodecRecord(body)
        raise


def _replay_story(made: Target, saved: SavedFile) -> VersionVerdict:
    """An audit story on the target already resolved (`saved.stories.replay_story` resolves
    one per replay: a JVM per story and release)."""
    assert saved.spec is not None
    chain = run_chain(story_target(made), saved.spec)
    wanted = failure_of(saved, None)
    broken = chain.violated if wanted is None else chain.verdicts.get(wanted.invariant) == 1
    if broken:
        return VersionVerdict(made.name, PRESENT, chain.violations[0] if chain.violations else "")
    other = f"; other: {chain.violations[0]}" if chain.violations else ""
    return VersionVerdict(made.name, ABSENT,
                   f"{wanted.invariant if wanted else 'every invariant'} held{other}")


def _replay_one(made: Target, saved: Playable) -> VersionVerdict:
    invariant = saved.recorded_invariant
    try:
        if isinstance(saved, CodecRecord):
            return _outcome(made.name, replay_codec_record(made, saved.data), invariant)
        if saved.kind == "story":
            return _replay_story(made, saved)
        if saved.kind == "events":
            why = cannot_play(made, saved)
            return (VersionVerdict(made.name, NA, why) if why
                    else _replay_events(made, saved, invariant))
        if made.assign is None:
            return VersionVerdict(made.name, NA, "no assign function")
        return _replay_requests(made, saved, invariant)
    except HarnessError:  # groupcheck's own failure: never a finding
        raise
    except Exception as exc:  # noqa: BLE001 - a target that cannot run it: n/a, said why
        return VersionVerdict(made.name, NA, f"{type(exc).__name__}: {exc}".splitlines()[0])


def _assignor_of(saved: Playable, assignor: str | None) -> str | None:
    return assignor or saved.assignor


def _tried(made: Target, saved: Playable, tries: int) -> VersionVerdict:
    """Up to ``tries`` replays, until one shows it: a story that shows only now and then
    (real clients' timing) is absent on a version only when every replay held."""
    outcome = _replay_one(made, saved)
    for _ in range(tries - 1):
        if outcome.verdict != ABSENT:
            break
        outcome = _replay_one(made, saved)
    if tries > 1 and outcome.verdict == ABSENT:
        outcome.text += f" (in {tries} replays)"
    return outcome


def bisect_many(files: Sequence[str], versions: Sequence[str], *,
                assignor: str | None = None, timeout: float | None = None,
                settings: Settings = NO_SETTINGS, tries: int = 1,
                progress: ProgressFn = silent) -> list[Bisection]:
    """Each file (a path) replayed on each version (a target string), in order, up to
    ``tries`` times until one replay shows it (`_tried`); one resolved target per (version,
    assignor); ``progress`` hears of every version done (its findings: the files that
    version shows)."""
    out: list[Bisection] = []
    saved: list[Playable | None] = []
    for path in files:
        try:
            one = _read(path)
            saved.append(one)
            out.append(Bisection(path, one.recorded_invariant,
                                 assignor=_assignor_of(one, assignor)))
        except SavedFileError:
            saved.append(None)
            out.append(Bisection(path, None, error="not replayable (not a request, story, "
                                                   "codec record or state-machine replay "
                                                   "file)"))
        except OSError as exc:
            saved.append(None)
            out.append(Bisection(path, None, error=f"cannot read it: {exc.strerror}"))
    meter = Meter(progress, "bisect", ", ".join(files) if len(files) == 1
                  else f"{len(files)} files")
    settings = story_settings(settings, saved)
    for n, version in enumerate(versions, 1):
        _bisect_version(version, saved, out, assignor, timeout, settings, tries)
        meter.tick(n, sum(version in b.present_in for b in out),
                   f"{version} of {len(versions)} targets")
    return out


def _bisect_version(version: str, saved: Sequence[Playable | None], out: list[Bisection],
                    assignor: str | None, timeout: float | None, settings: Settings,
                    tries: int = 1) -> None:
    made: dict[str | None, Target | str] = {}
    try:
        for one, bisection in zip(saved, out, strict=True):
            if one is None:
                continue
            which = _assignor_of(one, assignor)
            if which not in made:
                try:
                    made[which] = resolved(version, which, timeout, settings)
                except EngineInputError as exc:
                    made[which] = str(exc)
            target = made[which]
            bisection.outcomes.append(
                VersionVerdict(version, NA, target) if isinstance(target, str)
                else _named(_tried(target, one, tries), version))
    finally:
        for target in made.values():
            if not isinstance(target, str):
                target.close()


def _named(outcome: VersionVerdict, version: str) -> VersionVerdict:
    outcome.target = version
    return outcome


def bisect_file(path: str, versions: Sequence[str], *, assignor: str | None = None,
                timeout: float | None = None, settings: Settings = NO_SETTINGS,
                tries: int = 1, progress: ProgressFn = silent) -> Bisection:
    """One saved counterexample over ``versions`` (`EngineInputError` when the file is not
    a playable counterexample)."""
    load_counterexample(path)
    return bisect_many([path], versions, assignor=assignor, timeout=timeout,
                       settings=settings, tries=tries, progress=progress)[0]
