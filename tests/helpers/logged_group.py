"""An in-process group whose views carry a given delivery log, as a wire group's views do:
for tests of what the engines make of a delivery verdict without real clients."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from groupcheck.properties.delivery import DeliveryLog
from groupcheck.properties.group import GroupTarget, GroupView


class LoggedGroup:
    """``target`` with ``log()`` as the delivery log of every view."""

    def __init__(self, target: GroupTarget, log: Callable[[], DeliveryLog]) -> None:
        self._target, self._log = target, log

    def view(self) -> GroupView:
        return replace(self._target.view(), delivery=self._log())

    def __getattr__(self, name: str) -> object:
        return getattr(self._target, name)
