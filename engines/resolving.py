"""Target strings as the engines take them: resolved with the caller's settings, narrowed
to the assignors asked for, and a reference target per assignor (``--reference``); and the
audit's target strings, resolved into what its pipeline runs.

The audit's: ``builtin:<assignor>`` is groupcheck's ``impl.assign_op`` (the audit floor
never imports impl), ``<assignor>@java:[CLASSPATH]`` and ``<assignor>@java@<release>:`` are
Kafka's own client (one JVM per Python worker and release, started when the worker first
resolves it; the compiled driver is shared through the cache; an empty classpath is the
settings' ``kafka_classpath``, a release comes from the settings' Maven repository),
``java:[CLASSPATH]`` and ``java@<release>:`` stand for the four assignors on it, and
``pyfn:<module or file.py>:<function>`` is a user's function
(`audit.targets.resolve_plugin`). `resolve_audit_target` is shipped to the executors by
reference, with the settings bound (``functools.partial``).

Every failure is an `EngineInputError` with one line, so a command reports a bad target
the same way wherever it is found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ..audit.call_timeout import CALL_TIMEOUT
from ..audit.targets import ASSIGNOR_FAMILIES, AuditTarget, AuditTargetError, resolve_plugin
from ..impl.assign_op import run_assign_assignment_only
from ..impl.assignors import ASSIGNOR_NAMES
from ..model.group_events import CoordinatorMoved
from ..model.saved_files import SavedFile
from ..properties.group import GroupTarget
from ..properties.harness import HarnessError
from ..properties.scope.space import Scope
from ..targets.adapters.codecs import BuiltinCodec, ReleaseCodec
from ..targets.offers import Offer, close_all, expand, parse_assignors
from ..targets.processes import java_runtime
from ..targets.processes.java_process import (
    audit_parts,
    java_classpath,
    java_process,
    java_profile,
)
from ..targets.processes.jsonl_process import TargetAnswerError, TargetFailure
from ..targets.profile import ProfileError
from ..targets.registry import NO_SETTINGS, resolve
from ..targets.settings import Settings
from ..targets.target import Target, TargetError
from ..targets.wire.backends.factory import MOVE_NODES
from .errors import EngineInputError

__all__ = ["References", "check_scope", "close_all", "expand_targets", "group_factory",
           "group_target", "offers_of", "parse_assignors", "resolve_audit_target", "resolved",
           "must_start", "started", "story_settings", "warm"]


def resolved(name: str, assignor: str | None = None, timeout: float | None = None,
             settings: Settings = NO_SETTINGS) -> Target:
    """The target ``name`` names (`EngineInputError` when it names nothing runnable)."""
    try:
        return resolve(name, assignor=assignor, timeout=timeout, settings=settings)
    except TargetError as exc:
        raise EngineInputError(str(exc)) from None


def warm(target: Target) -> None:
    """Start a process-backed target before anything is timed (a ``ping``; a process that
    does not know it answers with an error, which is fine): starting a process is not the
    assign call's time."""
    if target.call is not None:
        try:
            target.call({"op": "ping"})
        except HarnessError:  # groupcheck's own failure: not the target's
            raise
        except Exception:  # noqa: BLE001 - the runs that follow will meet whatever is wrong
            pass


def must_start(*targets: Target) -> bool:
    """One of ``targets`` is a process target whose process is not up yet: its first
    request would start it."""
    return any(t.running is not None and not t.running() for t in targets)


def started(targets: Iterable[Target]) -> None:
    """Every process target (a ``jsonl:`` or ``java:`` one: its requests have a time limit)
    warmed: its process runs, so a command can leave its start out of a budget."""
    for target in targets:
        if target.timeout is not None:
            warm(target)


def group_target(name: str, assignor: str | None = None, timeout: float | None = None,
                 settings: Settings = NO_SETTINGS) -> Target:
    """The target, which must have a group (a target that offers several assignors needs
    ``assignor``)."""
    target = resolved(name, assignor, timeout, settings)
    if target.group is None:
        if target.choices is not None and target.assignor is None:
            raise EngineInputError(f"{name} offers several assignors "
                                   f"({', '.join(target.choices())}); name one")
        raise EngineInputError(f"{name} is not a group target (it has no assignor)")
    return target


def group_factory(name: str, assignor: str | None = None,
                  settings: Settings = NO_SETTINGS) -> Callable[[], GroupTarget]:
    """Fresh groups of the target ``name`` (for state-machine replay files)."""
    factory = group_target(name, assignor, settings=settings).group
    assert factory is not None
    return factory


def offers_of(text: str, assignors: list[str] | None, timeout: float | None = None,
              settings: Settings = NO_SETTINGS) -> list[Offer]:
    """Every assignor a target answers, narrowed by ``assignors`` (``--assignor`` values)."""
    try:
        return expand(text, parse_assignors(assignors), timeout, settings=settings)
    except TargetError as exc:
        raise EngineInputError(f"{exc}") from None


def check_scope(text: str | None) -> None:
    """A ``--scope`` that does not parse is bad input."""
    if text:
        try:
            Scope.parse(text)
        except ValueError as exc:
            raise EngineInputError(f"--scope: {exc}") from None


class References:
    """``--reference T``: one reference target per assignor, resolved when first asked for
    (a ``java:`` reference starts one JVM per assignor), closed together."""

    def __init__(self, text: str | None, timeout: float | None,
                 settings: Settings = NO_SETTINGS) -> None:
        self.text = text
        self.timeout = timeout
        self.settings = settings
        self.made: dict[str | None, Target] = {}

    def of(self, target: Target) -> Target | None:
        """The reference running ``target``'s assignor (None without ``--reference``)."""
        if not self.text:
            return None
        if target.assignor not in self.made:
            offers = offers_of(self.text, [str(target.assignor)], self.timeout, self.settings)
            made = [o.target for o in offers if o.target is not None]
            if not made:
                close_all(offers)
                raise EngineInputError(f"--reference {self.text} does not answer "
                                       f"{target.assignor}: {offers[0].error if offers else ''}")
            self.made[target.assignor] = made[0]
        return self.made[target.assignor]

    def close(self) -> None:
        for made in self.made.values():
            made.close()


def _java(name: str, family: str, spec: str, settings: Settings) -> AuditTarget:
    """``spec`` is ``java:[CLASSPATH]`` or ``java@<release>:``."""
    if family not in ASSIGNOR_NAMES:
        raise AuditTargetError(f"unknown assignor {family!r} in {name}; expected one of "
                               f"{', '.join(ASSIGNOR_NAMES)}")
    try:
        classpath = _classpath(spec, settings)
        assign, codec = audit_parts(classpath, family, CALL_TIMEOUT)
        if not spec.startswith("java@"):
            return AuditTarget(name, family, assign, codec)
        # a release: held to what it implements
        profile = java_profile(java_process(classpath, CALL_TIMEOUT))
    except (java_runtime.JavaUnavailable, TargetFailure, TargetAnswerError,
            ProfileError) as exc:  # no JDK, no JVM starts, or no profile
        raise AuditTargetError(f"cannot run {name} ({exc})") from None
    return AuditTarget(name, family, assign, ReleaseCodec(codec, profile))


def _is_java(spec: str) -> bool:
    return spec.startswith("java:") or spec.startswith("java@")


def _classpath(spec: str, settings: Settings) -> str:
    """The classpath of ``java:[CLASSPATH]`` or ``java@<release>:`` (`JavaUnavailable`)."""
    kind, _, classpath = spec.partition(":")
    release = kind.partition("@")[2]
    return java_classpath(release, "" if release else classpath, settings)


def resolve_audit_target(name: str, settings: Settings = NO_SETTINGS) -> AuditTarget:
    """A target string → an `AuditTarget`: ``builtin:<assignor>`` (our implementation),
    ``<assignor>@java:[CLASSPATH]`` (Kafka's client, each call bounded by the audit's time
    limit) or ``pyfn:<module or file.py>:<function>``."""
    family, at, rest = name.partition("@")
    if at and _is_java(rest):
        return _java(name, family, rest, settings)
    kind, _, assignor = name.partition(":")
    if kind == "builtin":
        if assignor not in ASSIGNOR_NAMES:
            raise AuditTargetError(f"unknown assignor {assignor!r}; expected one of "
                                   f"{', '.join(ASSIGNOR_NAMES)}")
        # the chains read only the assignment: the members' next user data is left out
        # one codec for every builtin target: I10 is then checked once per scenario
        return AuditTarget(name, assignor, run_assign_assignment_only, BuiltinCodec.shared())
    return resolve_plugin(name)


def expand_targets(targets: list[str], settings: Settings = NO_SETTINGS) -> list[str]:
    """``java:[CLASSPATH]`` and ``java@<release>:`` → one target per assignor
    (``range@java:...``, ``range@java@3.4.0:`` and so on), each checked here, on the driver,
    so that a missing JDK, classpath or release is one line before Spark starts, and the
    executors find the driver compiled in the cache."""
    out: list[str] = []
    for name in targets:
        family, at, rest = name.partition("@")
        spec = rest if at and family in ASSIGNOR_FAMILIES else name
        if _is_java(spec):
            try:
                java_runtime.driver_command(_classpath(spec, settings))
            except java_runtime.JavaUnavailable as exc:
                raise EngineInputError(f"audit: {exc}") from None
        out += _per_assignor(name) if spec is name and _is_java(name) else [name]
    return out


def _per_assignor(spec: str) -> list[str]:
    """``java:CP`` → ``<a>@java:CP`` for the four; ``java@3.4.0:range`` → one of them."""
    kind, _, rest = spec.partition(":")
    if kind.startswith("java@") and rest:
        if rest not in ASSIGNOR_FAMILIES:
            raise EngineInputError(f"audit: {spec}: after a release's colon comes an "
                                   f"assignor ({', '.join(ASSIGNOR_FAMILIES)}), not {rest!r}")
        return [f"{rest}@{kind}:"]
    return [f"{a}@{spec}" for a in ASSIGNOR_FAMILIES]


def story_settings(settings: Settings, stories: Sequence[object]) -> Settings:
    """The settings ``stories`` are replayed with: a wire group's broker of `MOVE_NODES`
    when one of them moves its coordinator (the fault engine's broker has as many), so
    that the move is made as it was recorded."""
    moves = any(isinstance(s, SavedFile) and s.kind == "events" and
                any(isinstance(e, CoordinatorMoved) for e in s.events) for s in stories)
    return replace(settings, broker_nodes=MOVE_NODES) if moves and not settings.broker_nodes \
        else settings
