"""Wire groups for the delivery tests: `librdkafka_group` makes one of librdkafka members on
groupcheck's broker (or skips when either is missing); `settle` steps it until it is
settled."""

from __future__ import annotations

import time

import pytest

from groupcheck.properties.group import GroupView
from groupcheck.targets.wire.wire_group import WireGroup

from helpers.environment import missing

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


def librdkafka_group() -> WireGroup:
    """A fresh `wire:librdkafka:range` group on groupcheck's broker."""
    pytest.importorskip("kio", reason="groupcheck's broker (the wire backend) needs kio")
    if missing("librdkafka"):
        pytest.skip(missing("librdkafka"))
    return WireGroup("wire:librdkafka:range", ("librdkafka",), "range")
