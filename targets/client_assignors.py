"""Where each Python client keeps its classic assignors: the classes an assignor adapter
(``adapters/``) wraps and a member driver (``wire/drivers/``) configures, named once for
both. The client library is imported only when a class is loaded (it is optional)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["AIOKAFKA", "KAFKA_PYTHON", "TargetUnavailable", "assignor_class", "load_class"]

#: kafka-python's assignor classes, by Kafka's assignor name
KAFKA_PYTHON = {
    "range": "kafka.coordinator.assignors.range:RangePartitionAssignor",
    "roundrobin": "kafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor",
    "sticky": "kafka.coordinator.assignors.sticky.sticky_assignor:StickyPartitionAssignor",
    "cooperative-sticky": "kafka.coordinator.assignors.cooperative_sticky:"
                          "CooperativeStickyAssignor",
}
#: aiokafka's assignor classes (it has no cooperative one)
AIOKAFKA = {
    "range": "aiokafka.coordinator.assignors.range:RangePartitionAssignor",
    "roundrobin": "aiokafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor",
    "sticky": "aiokafka.coordinator.assignors.sticky.sticky_assignor:StickyPartitionAssignor",
}


def load_class(spec: str) -> Any:
    """``package.module:Attr`` → that attribute (ImportError when the client is absent)."""
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


class TargetUnavailable(RuntimeError):
    """The client library a target needs is not installed."""


def assignor_class(library: str, table: dict[str, str], name: str) -> Any:
    """``library``'s assignor class ``name`` from its ``table``: `ValueError` for a name it
    does not have, `TargetUnavailable` when the library is not installed."""
    if name not in table:
        raise ValueError(f"unknown {library} assignor {name!r}; expected one of "
                         f"{', '.join(table)}")
    try:
        return load_class(table[name])
    except ImportError as exc:
        raise TargetUnavailable(f"{library} is not installed ({exc}); "
                                "pip install 'groupcheck[peers]'") from None
