"""Target strings as the engines take them: resolved with the caller's settings, narrowed
to the assignors asked for, and a reference target per assignor (``--reference``).

Every failure is an `EngineInputError` with one line, so a command reports a bad target
the same way wherever it is found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..properties.group import GroupTarget
from ..properties.scope import Scope
from ..targets.offers import Offer, close_all, expand, parse_assignors
from ..targets.registry import NO_SETTINGS, resolve
from ..targets.settings import Settings
from ..targets.target import Target, TargetError
from .errors import EngineInputError

__all__ = ["References", "check_scope", "close_all", "group_factory", "group_target",
           "offers_of", "parse_assignors", "resolved", "started", "warm"]


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
        except Exception:  # noqa: BLE001 - the runs that follow will meet whatever is wrong
            pass


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
