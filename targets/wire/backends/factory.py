"""Which backend a wire group runs on: the names ``--broker`` takes, and the one factory.

Each backend's module is imported only when a backend is made: groupcheck's broker imports
kio, and nothing of the mock's handling (its proxy, its defects, its binding) is loaded on a
run that does not use it. Naming a backend that cannot run here is one line
(`backend_missing`), never an ImportError.
"""

from __future__ import annotations

import importlib.util

from .backend import Backend, BackendUnavailable

__all__ = ["BACKENDS", "BROKER_NODES", "DEFAULT_BACKEND", "MOVE_NODES", "backend_missing",
           "make_backend"]

#: the backends a wire target can run on (``--broker``, ``$GROUPCHECK_BROKER``), the default
#: first
BACKENDS = ("groupcheck", "mock")
DEFAULT_BACKEND = BACKENDS[0]
#: the nodes groupcheck's broker presents itself as for a wire group; the state machine
#: moves a group's coordinator (`CoordinatorMoved`) only on two or more. One for now: on two,
#: KafkaJS's members were handed no record at one offset of every partition, which is not
#: analysed yet (the broker's fault or KafkaJS's)
BROKER_NODES = 1
#: the nodes a story with a move is replayed on (the fault engine's broker has as many)
MOVE_NODES = 2


def backend_missing(name: str) -> str:
    """Why backend ``name`` cannot run here ('' when it can)."""
    if name == "groupcheck" and importlib.util.find_spec("kio") is None:
        return ("wire: groupcheck's broker needs kio (pip install 'groupcheck[peers]'), or "
                "run on --broker mock")
    if name == "mock" and importlib.util.find_spec("confluent_kafka") is None:
        return "wire: librdkafka's mock cluster needs confluent-kafka (pip install " \
               "'groupcheck[peers]')"
    return ""


def make_backend(name: str, clients: frozenset[str], session_timeout_ms: int,
                 trace: bool = False, nodes: int = 0) -> Backend:
    """The backend ``name`` for a group of these clients (``trace``: the mock's proxy prints
    every group request and answer on stderr; ``nodes``: groupcheck's broker's, 0 for
    `BROKER_NODES`)."""
    if name == "mock":
        from .mock import MockBackend  # loaded only on a run that uses the mock

        return MockBackend(clients, session_timeout_ms, trace)
    if name == "groupcheck":
        from .groupcheck_broker import GroupcheckBackend  # imports the broker, which needs kio

        return GroupcheckBackend(clients, session_timeout_ms, nodes=nodes or BROKER_NODES)
    raise BackendUnavailable(f"unknown broker {name!r}; expected one of {', '.join(BACKENDS)}")
