"""Target strings → group targets the engines can drive.

``builtin:<assignor>`` runs our coordinator and consumers with one of Kafka's four
assignors; ``mutant:<name>`` runs a deliberately broken variant (see `mutants`), used to
prove the harness has teeth. Every target is made fresh for each example.
"""

from __future__ import annotations

from collections.abc import Callable

from ..properties.group import GroupTarget

BUILTIN_ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")


class TargetError(ValueError):
    """A target string that names nothing we can run."""


def _builtin(name: str) -> Callable[[], GroupTarget]:
    from .builtin import BuiltinGroup

    if name not in BUILTIN_ASSIGNORS:
        raise TargetError(f"unknown builtin assignor {name!r}; expected one of "
                          f"{', '.join(BUILTIN_ASSIGNORS)}")
    return lambda: BuiltinGroup(f"builtin:{name}")


def _mutant(name: str) -> Callable[[], GroupTarget]:
    from .mutants import MUTANTS

    if name not in MUTANTS:
        raise TargetError(f"unknown mutant {name!r}; expected one of {', '.join(MUTANTS)}")
    return MUTANTS[name].factory


KINDS: dict[str, Callable[[str], Callable[[], GroupTarget]]] = {
    "builtin": _builtin, "mutant": _mutant}


def group_target_factory(target: str) -> Callable[[], GroupTarget]:
    """A factory of fresh group targets for a target string."""
    kind, sep, name = target.partition(":")
    if not sep or kind not in KINDS:
        raise TargetError(f"unknown target {target!r}; expected builtin:<assignor> or "
                          "mutant:<name>")
    return KINDS[kind](name)


def make_group_target(target: str) -> GroupTarget:
    return group_target_factory(target)()


class MachineHints:
    """What the engines need to know of a target to drive it sensibly."""

    def __init__(self, assignor: str, profiles: tuple[str, ...] = ("kip", "java"),
                 user_data_versions: tuple[int, ...] = (1,)) -> None:
        self.assignor = assignor
        self.profiles = profiles
        self.user_data_versions = user_data_versions


def machine_hints(target: str) -> MachineHints:
    """The assignor family and client settings a target's members use."""
    kind, _, name = target.partition(":")
    if kind == "mutant":
        from .mutants import MUTANTS

        if name in MUTANTS:
            m = MUTANTS[name]
            return MachineHints(m.assignor, m.profiles, m.user_data_versions)
    if kind == "builtin" and name in BUILTIN_ASSIGNORS:
        return MachineHints(name)
    raise TargetError(f"unknown target {target!r}")
