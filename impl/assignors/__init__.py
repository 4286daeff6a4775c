"""The four classic assignors, by Kafka's names.

`make_assignor(name)` returns a fresh instance: assignors carry state between calls
(the sticky assignors remember their last assignment and the highest generation seen).
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InvalidRequestError
from ..types import Assignor
from .range import RangeAssignor
from .roundrobin import RoundRobinAssignor
from .sticky import CooperativeStickyAssignor, StickyAssignor

__all__ = ["ASSIGNOR_NAMES", "make_assignor"]

_REGISTRY: dict[str, Callable[[], Assignor]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}

ASSIGNOR_NAMES = ("range", "roundrobin", "sticky", "cooperative-sticky")


def make_assignor(name: str) -> Assignor:
    """A fresh assignor instance for Kafka's strategy name."""
    factory = _REGISTRY.get(name)
    if factory is None:
        raise InvalidRequestError(
            f"unknown assignor {name!r}; expected one of {', '.join(ASSIGNOR_NAMES)}")
    return factory()
