"""Wire groups for the delivery tests: `settle` steps a `WireGroup` until it is settled."""

from __future__ import annotations

import time

from groupcheck.properties.group import GroupView
from groupcheck.targets.wire.wire_group import WireGroup

SETTLE_SECONDS = 90.0


def settle(group: WireGroup, seconds: float = SETTLE_SECONDS) -> list[GroupView]:
    """Step until the group is settled; every view on the way."""
    views: list[GroupView] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        group.step()
        views.append(group.view())
        if views[-1].settled:
            return views
    raise AssertionError(f"not settled in {seconds:.0f}s: {group._unsettled()}")
